"""streamjobs: a self-hosted control plane for Apache Spark Structured Streaming jobs."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("streamjobs")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0"
