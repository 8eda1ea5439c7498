"""Jar resolutions run beside the supervisor's tick, which never waits for one.

Resolving a job's connector packages can take a minute on a cold cache. The tick asks ``check``
before it submits an application: a request already resolved (a stamp) or failed answers at
once; any other starts resolving in a background thread and answers ``Waiting``, so the
application stays where it is (STARTING or PENDING_RERUN) and every other application carries on.
When the resolution ends, ``on_resolved`` is told which applications waited for it (to record
an event and tick again), and their next tick submits them: with the jar files, or as a failed
submission that names the coordinate that failed.

Resolutions run one at a time: they share one Ivy directory, which Ivy does not lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from streamjobs.domain.jar_requests import JarRequest
from streamjobs.launch.jars import JarResolution, JarResolver

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Waiting:
    """The request is being resolved; ``first`` when this application has just begun to wait."""

    first: bool


ResolvedCallback = Callable[[JarRequest, JarResolution, list[str]], None]
"""Told a request's outcome and the applications that waited for it."""


class BackgroundJarResolutions:
    """Answers the tick at once and resolves what is missing in background threads."""

    def __init__(self, resolver: JarResolver, *, on_resolved: ResolvedCallback) -> None:
        self._resolver = resolver
        self._on_resolved = on_resolved
        self._lock = threading.Lock()
        self._one_at_a_time = threading.Lock()
        self._waiting: dict[JarRequest, list[str]] = {}
        """Requests being resolved, with the applications waiting for each."""
        self._ended: dict[JarRequest, JarResolution] = {}
        """Outcomes the resolver could not record (read once)."""

    def check(self, application_id: str, request: JarRequest) -> JarResolution | Waiting:
        """The outcome of ``request`` when known, else ``Waiting`` (resolving it from now)."""
        if request.empty:
            return JarResolution()
        with self._lock:
            waiting = self._waiting.get(request)
            if waiting is not None:
                first = application_id not in waiting
                if first:
                    waiting.append(application_id)
                return Waiting(first=first)
            ended = self._ended.pop(request, None)
        if ended is not None:
            return ended
        known = self._known(request)
        if known is not None:
            return known
        with self._lock:
            waiting = self._waiting.setdefault(request, [])
            if waiting:  # another check started it meanwhile
                first = application_id not in waiting
                if first:
                    waiting.append(application_id)
                return Waiting(first=first)
            waiting.append(application_id)
        thread = threading.Thread(
            target=self._resolve, args=(request,), name="streamjobs-jars", daemon=True
        )
        thread.start()
        return Waiting(first=True)

    def known(self, request: JarRequest) -> JarResolution | None:
        """What the resolver recorded of ``request``, without resolving anything."""
        if request.empty:
            return JarResolution()
        return self._known(request)

    def resolving(self) -> int:
        """How many requests are being resolved now."""
        with self._lock:
            return len(self._waiting)

    def _known(self, request: JarRequest) -> JarResolution | None:
        try:
            return self._resolver.known(request)
        except Exception:
            log.exception("reading the recorded resolution of %s failed", request.coordinates)
            return None

    def _resolve(self, request: JarRequest) -> None:
        with self._one_at_a_time:
            try:
                outcome = self._resolver.resolve(request)
            except Exception as error:
                log.exception("resolving %s failed", ", ".join(request.coordinates))
                outcome = JarResolution(error=f"{type(error).__name__}: {error}")
        with self._lock:
            waited = self._waiting.pop(request, [])
            if self._resolver_forgets(request):
                self._ended[request] = outcome
        try:
            self._on_resolved(request, outcome, waited)
        except Exception:
            log.exception("recording the resolution of %s failed", request.coordinates)

    def _resolver_forgets(self, request: JarRequest) -> bool:
        return self._known(request) is None
