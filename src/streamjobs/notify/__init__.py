"""Sending notices: the senders of each destination kind (email, webhook, Slack) and the worker
that delivers the outbox with them. Imports the domain and the store, never the API, the web UI
or the CLI."""
