"""Keeping applications as their jobs and restart policies say: the tick and its loop."""
