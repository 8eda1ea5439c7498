"""The web UI's pages, one module per part of the UI."""
