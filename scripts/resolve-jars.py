#!/usr/bin/env python3
"""Fetch every jar the tests need before they run, so no test waits on the network.

1. The Kafka broker's jars (``kafka_2.13`` and its dependencies), with ``mvn``.
2. The Spark connectors of every format (Kafka, Delta, Iceberg, JDBC) and the jars passed to Spark
   from the local Maven repository, with ``mvn``.
3. Spark's own resolver (Ivy) for each connector alone and for all together, repairing what it
   misses in ``~/.m2/repository`` (see ``streamjobs.devtools.spark_packages``): for the Spark
   sessions the tests start in-process.
4. What the server resolves before it starts the examples' drivers (``streamjobs.launch.jars``,
   into ``STREAMJOBS_MAVEN_REPOSITORY`` and ``STREAMJOBS_IVY_DIRECTORY``), as
   ``streamjobs admin resolve-jars examples`` does for ``make run``.

A warm cache makes each step offline and quick; step 3 is skipped where a stamp says it already
succeeded (``--force`` redoes it). Run it with the project's Python:
``.venv/bin/python scripts/resolve-jars.py``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from streamjobs.cli.jar_commands import jobs_by_request
from streamjobs.devtools.kafka import BROKER_COORDINATES
from streamjobs.devtools.maven import ResolutionError, ToolUnavailableError, resolve_classpath
from streamjobs.devtools.spark_packages import warm_spark_resolver
from streamjobs.domain.connectors import (
    CONNECTOR_PACKAGES,
    local_jars_for,
    packages_for,
    spark_conf_for,
)
from streamjobs.domain.jar_requests import JarRequest
from streamjobs.launch.jars import SparkJarResolver
from streamjobs.settings import Settings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def one_format_per_connector() -> list[str]:
    """The first format naming each connector: ``kafka`` (not kafkajson, its twin), ``delta``..."""
    chosen: dict[int, str] = {}
    for name, connector in CONNECTOR_PACKAGES.items():
        chosen.setdefault(id(connector), name)
    return list(chosen.values())


def main(arguments: list[str]) -> int:
    force = "--force" in arguments
    formats = one_format_per_connector()
    try:
        _timed("Kafka broker jars (mvn)", lambda: _describe(resolve_classpath(BROKER_COORDINATES)))
        connector_jars = [*packages_for(formats), *local_jars_for(formats)]
        _timed("Spark connector jars (mvn)", lambda: _describe(resolve_classpath(connector_jars)))
        # Each connector alone and all together: Ivy may pick other versions in each case.
        for group in [*([name] for name in formats), formats]:
            _timed(f"Spark's resolver for {'+'.join(group)}", partial(_warm, group, force))
        _resolve_for_the_server(force)
    except (ToolUnavailableError, ResolutionError) as failure:
        print(f"resolve-jars: {failure}", file=sys.stderr)
        return 1
    return 0


def _warm(formats: list[str], force: bool) -> str:
    ran = warm_spark_resolver(packages_for(formats), spark_conf_for(formats), force=force)
    return "resolved" if ran else "resolved before (stamp)"


def _resolve_for_the_server(force: bool) -> None:
    settings = Settings()
    resolver = SparkJarResolver.installed(
        maven_repository=settings.maven_repository, ivy_directory=settings.ivy_directory
    )
    wanted = jobs_by_request([EXAMPLES], checkpoint_root=settings.resolved_checkpoint_root)
    for request, jobs in wanted.items():

        def resolve(request: JarRequest = request) -> str:
            outcome = resolver.resolve(request, force=force)
            if outcome.error is not None:
                raise ResolutionError(outcome.error)
            return f"{len(outcome.jars)} jars"

        _timed(f"The server's jars for {', '.join(jobs)}", resolve)


def _describe(jars: Iterable[Path]) -> str:
    files = list(jars)
    megabytes = sum(jar.stat().st_size for jar in files) / 1_000_000
    return f"{len(files)} jars, {megabytes:.1f} MB"


def _timed(step: str, action: Callable[[], str]) -> None:
    started = time.monotonic()
    outcome = action()
    print(f"{step}: {outcome} in {time.monotonic() - started:.1f}s", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
