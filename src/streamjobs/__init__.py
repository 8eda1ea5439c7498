"""streamjobs: a self-hosted control plane for Apache Spark Structured Streaming jobs.

``streamjobs.__version__`` is looked up on first use: ``importlib.metadata`` takes a tenth of a
second to import and scan, which every driver's wrapper and runner would otherwise pay before
doing anything (both import this package, and neither needs the version).
"""

from __future__ import annotations

import functools


def __getattr__(name: str) -> str:
    if name == "__version__":
        return _version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("streamjobs")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "0.0.0"
