"""The HTTP edge the API and the web UI both stand on: web sessions and their CSRF check, and the
JSON documents both serve. ``api`` and ``web`` never import each other; what both need is here."""
