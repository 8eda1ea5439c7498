"""What a job needs resolved before its driver starts: the connector packages and local jars.

A driver must not find out at Spark level that a jar is missing (a ``ClassNotFound`` minutes
later, or an Ivy error buried in its log): the server resolves what ``JarRequest`` names before
it starts the driver, and hands the driver the jar files (``spark.jars``) instead of the
coordinates. The request is read from the very settings the driver would start with
(``session_conf``), so the resolution and the driver cannot disagree: the connectors of the
pipeline's formats, the job's ``dependencies.packages`` (with the connectors' resolution fixes),
and the resolver settings of its own ``sparkConf``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from streamjobs.domain.connectors import RESOLVER_SETTINGS, local_jars_for
from streamjobs.domain.manifest import StreamingJob
from streamjobs.domain.spark_conf import formats_of, session_conf

PACKAGES_SETTING = "spark.jars.packages"


@dataclass(frozen=True)
class JarRequest:
    """Coordinates to resolve for one job, and the resolver settings that shape the result."""

    packages: tuple[str, ...] = ()
    """Maven coordinates for Spark's resolver, resolved with their dependencies."""
    resolver_settings: tuple[tuple[str, str], ...] = ()
    """``spark.jars.excludes`` and the like, as the driver would pass them to the resolver."""
    local_jars: tuple[str, ...] = ()
    """Coordinates whose jar alone is taken from the local Maven repository."""

    @property
    def empty(self) -> bool:
        return not self.packages and not self.local_jars

    @property
    def coordinates(self) -> tuple[str, ...]:
        """Every coordinate the request names, packages first."""
        return (*self.packages, *self.local_jars)

    def describe(self) -> str:
        """``3 connector jars`` (what an event says is being resolved)."""
        count = len(self.coordinates)
        return f"{count} connector jar{'' if count == 1 else 's'}"


def jar_request(job: StreamingJob) -> JarRequest:
    """What ``job``'s driver needs resolved, taken from the settings it starts with."""
    conf = session_conf(job, connections=(), maven_repository=PurePosixPath("/"))
    packages = [item.strip() for item in conf.get(PACKAGES_SETTING, "").split(",")]
    settings = tuple((key, conf[key]) for key in RESOLVER_SETTINGS if conf.get(key))
    local = local_jars_for(formats_of(job), job.spec.dependencies.packages)
    return JarRequest(
        packages=tuple(package for package in packages if package),
        resolver_settings=settings,
        local_jars=tuple(local),
    )
