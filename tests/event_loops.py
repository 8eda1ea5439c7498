"""Running a coroutine from a synchronous test, whatever else the test session runs.

Playwright's sync API (the browser tests' session fixture) keeps an event loop running in the
main thread once it has started, and ``asyncio.run`` refuses to run there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_apart(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to its end on an event loop of its own thread; its result."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, coroutine).result()
