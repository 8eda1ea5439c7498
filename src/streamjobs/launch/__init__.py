"""Turning an attempt of an application into a running Spark driver, and watching it."""
