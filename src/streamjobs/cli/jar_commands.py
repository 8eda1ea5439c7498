"""``streamjobs admin resolve-jars``: resolve the jars of the jobs in manifests, before a Run.

The server resolves what a job needs before its driver starts anyway (``launch.jars``), but on a
cold cache that takes a minute the first Run would spend waiting. ``make run`` calls this for the
examples before it starts the server, so their first runs start at once; it says what it
resolves and, while Spark's resolver works, how long it has been at it. It writes where the
server reads (``STREAMJOBS_MAVEN_REPOSITORY``, ``STREAMJOBS_IVY_DIRECTORY``).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Annotated

import typer

from streamjobs.cli.failures import fail, reported_failures
from streamjobs.cli.manifests import read_manifests
from streamjobs.cli.output import console
from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.jar_requests import JarRequest, jar_request
from streamjobs.domain.kinds import Kind, kind_of
from streamjobs.domain.spec import parse_manifest
from streamjobs.formatting import duration
from streamjobs.launch.jars import SparkJarResolver
from streamjobs.settings import Settings

PROGRESS_EVERY_SECONDS = 10.0
EXIT_UNRESOLVED = 1


def resolve_jars(
    paths: Annotated[list[Path], typer.Argument(help="Manifest files or directories of them.")],
    force: Annotated[
        bool, typer.Option(help="Resolve again what was resolved (or failed) before.")
    ] = False,
    fail_on_error: Annotated[
        bool,
        typer.Option(
            "--fail/--no-fail",
            help="Exit non-zero when a job's jars cannot be resolved (--no-fail only warns: "
            "the server tries again when the job runs).",
        ),
    ] = True,
) -> None:
    """Resolve the connector jars the jobs in PATHS need, where the server looks for them."""
    settings = Settings()
    with reported_failures():
        wanted = jobs_by_request(paths, checkpoint_root=settings.resolved_checkpoint_root)
        resolver = SparkJarResolver.installed(
            maven_repository=settings.maven_repository, ivy_directory=settings.ivy_directory
        )
    if not wanted:
        console().print("No job in these manifests needs connector jars.")
        return
    console().print(
        f"Resolving the connector jars of {len(wanted)} set(s) of jobs into "
        f"{settings.maven_repository} and {settings.ivy_directory}"
    )
    failures = [
        request for request, jobs in wanted.items() if not _resolve(resolver, request, jobs, force)
    ]
    if failures and fail_on_error:
        raise fail(f"{len(failures)} set(s) of jars could not be resolved", code=EXIT_UNRESOLVED)


def jobs_by_request(paths: list[Path], *, checkpoint_root: str) -> dict[JarRequest, list[str]]:
    """The jar requests of the jobs in the manifests under ``paths``, each with its jobs."""
    wanted: dict[JarRequest, list[str]] = {}
    for item in read_manifests([str(path) for path in paths]):
        if kind_of(item.document, source=item.source) is not Kind.STREAMING_JOB:
            continue
        try:
            job = parse_manifest(item.document, checkpoint_root=checkpoint_root)
        except InvalidInput as error:
            raise InvalidInput(error.errors, source=item.source) from None
        request = jar_request(job)
        if not request.empty:
            wanted.setdefault(request, []).append(job.name)
    return wanted


def _resolve(resolver: SparkJarResolver, request: JarRequest, jobs: list[str], force: bool) -> bool:
    out = console()
    out.print(f"==> {', '.join(jobs)}: {request.describe()} ({', '.join(request.coordinates)})")
    if not force and (known := resolver.known(request)) is not None and not known.failed:
        out.print(f"    already resolved ({_jars(len(known.jars))})")
        return True
    done = threading.Event()
    ticker = threading.Thread(target=_tick, args=(done, time.monotonic()), daemon=True)
    ticker.start()
    try:
        outcome = resolver.resolve(request, force=True)
    finally:
        done.set()
        ticker.join()
    if outcome.error is not None:
        out.print(f"    failed: {outcome.error}", style="red")
        return False
    out.print(f"    resolved {_jars(len(outcome.jars))} in {duration(outcome.seconds)}")
    return True


def _tick(done: threading.Event, started: float) -> None:
    while not done.wait(PROGRESS_EVERY_SECONDS):
        elapsed = duration(time.monotonic() - started)
        console().print(f"    ... Spark's resolver is downloading, {elapsed} so far")


def _jars(count: int) -> str:
    return f"{count} jar{'' if count == 1 else 's'}"
