"""Use cases shared by the REST API and the web UI: the rules that need the store live here once."""
