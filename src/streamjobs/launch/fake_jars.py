"""A jar resolver for tests of what waits on resolutions: no Spark, no network, held at will.

``FakeJarResolver`` answers as ``SparkJarResolver`` does (see ``supervisor.jar_resolutions``'s
``JarResolver``): each resolution returns one made-up jar path per coordinate, or fails naming
a coordinate listed in ``missing``. While ``hold`` is set, ``resolve`` waits until ``release``,
so a test can look at everything while a resolution is under way.
"""

from __future__ import annotations

import threading

from streamjobs.domain.jar_requests import JarRequest
from streamjobs.launch.jars import JarResolution

WAIT_SECONDS = 30.0


class FakeJarResolver:
    """Resolves every coordinate but those in ``missing``, recording what it was asked."""

    def __init__(self, *, missing: frozenset[str] = frozenset(), hold: bool = False) -> None:
        self.missing = missing
        self.resolved: list[JarRequest] = []
        self._outcomes: dict[JarRequest, JarResolution] = {}
        self._released = threading.Event()
        self._started = threading.Event()
        if not hold:
            self._released.set()

    def known(self, request: JarRequest) -> JarResolution | None:
        return self._outcomes.get(request)

    def resolve(self, request: JarRequest) -> JarResolution:
        self._started.set()
        if not self._released.wait(WAIT_SECONDS):
            raise TimeoutError("the test never released the fake jar resolver")
        self.resolved.append(request)
        failing = [c for c in request.coordinates if c in self.missing]
        jars = tuple(f"/jars/{c.replace(':', '_')}.jar" for c in request.packages)
        outcome = (
            JarResolution(error=f"unresolved dependency {failing[0]} (not found)")
            if failing
            else JarResolution(jars=jars)
        )
        self._outcomes[request] = outcome
        return outcome

    def release(self) -> None:
        """Let held resolutions finish."""
        self._released.set()

    def wait_started(self, timeout: float = WAIT_SECONDS) -> bool:
        """Whether a resolution began within ``timeout`` seconds."""
        return self._started.wait(timeout)
