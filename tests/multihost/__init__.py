"""Tests across hosts: a Spark master, workers and streamjobs servers in network namespaces."""
