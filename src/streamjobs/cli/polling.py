"""Polling a resource the server works on in the background until it reaches a final status.

``snapshot`` (until the snapshot is no longer being taken) and ``upgrade`` (until the upgrade has
ended) both wait this way: fetch the resource again every few seconds, optionally report each new
status, and fail (exit 1) when the time given runs out first, since a script cannot rely on the
resource then.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from streamjobs.cli.failures import fail

Resource = dict[str, Any]


def until_final(
    resource: Resource,
    fetch: Callable[[], Resource],
    *,
    is_final: Callable[[Resource], bool],
    timeout: float,
    poll_seconds: float,
    timed_out: Callable[[Resource], str],
    on_change: Callable[[Resource], None] | None = None,
) -> Resource:
    """``resource`` once ``is_final`` holds for it, fetched again every ``poll_seconds``;
    ``on_change`` is called with it whenever its status changes. ``fail`` with
    ``timed_out(resource)`` when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    seen = resource["status"]
    while not is_final(resource):
        if time.monotonic() >= deadline:
            raise fail(timed_out(resource))
        time.sleep(poll_seconds)
        resource = fetch()
        if resource["status"] != seen:
            seen = resource["status"]
            if on_change is not None:
                on_change(resource)
    return resource
