"""Real services for development and tests, started on this machine: a Kafka broker for now."""
