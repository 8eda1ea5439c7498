"""The supervisor's tick (placeholder filled in below)."""
