"""What the supervisor's loop writes about a driver it observed: the executor figures its Spark
REST API gave, and its end. Each is one transaction, run again on fresh reads when a person's
change (a Stop, an Abort) lands meanwhile (``services.resources.on_fresh_reads``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from streamjobs.launch.attempt_cleanup import remove_private_files
from streamjobs.launch.spark_ui import ExecutorFigures
from streamjobs.services.application_state import move
from streamjobs.services.resources import on_fresh_reads
from streamjobs.store import ApplicationRecord, AttemptRecord
from streamjobs.store.db import Store


def record_figures(
    store: Store,
    application: ApplicationRecord,
    figures: ExecutorFigures,
    *,
    executors_asked: int,
    at: datetime,
) -> ApplicationRecord:
    """Keep the figures of a driver that answered (it runs), with ``executors_asked`` for
    the count still pending; the application afterwards."""
    changes = {
        "driver_state": "RUNNING",
        "executors_running": figures.running_executors,
        "executors_pending": max(0, executors_asked - figures.running_executors),
        "spark_app_id": figures.spark_application_id,
    }

    def record() -> ApplicationRecord:
        with store.transaction() as repos:
            repos.applications.set_executor_figures(
                application.id, at=at, figures=figures.to_dict()
            )
            current = repos.applications.get(application.id)
            return move(repos, current, None, at=at, changes=changes)

    return on_fresh_reads(record)


def record_exit(
    store: Store,
    application: ApplicationRecord,
    attempt: AttemptRecord,
    exit_code: int | None,
    *,
    at: datetime,
    message: str | None = None,
) -> tuple[ApplicationRecord, AttemptRecord]:
    """End ``attempt`` with ``exit_code`` (None: unknown), with an event saying so (``message``,
    or how it exited), and remove its private files; the application and the attempt after."""

    def record() -> tuple[ApplicationRecord, AttemptRecord | None]:
        with store.transaction() as repos:
            repos.applications.update_attempt(
                application.id, attempt.number, ended_at=at, exit_code=exit_code
            )
            ended = "ended with an unknown exit code" if exit_code is None else "exited"
            code = "" if exit_code is None else f" with code {exit_code}"
            repos.applications.add_event(
                application.id,
                at=at,
                kind="driver-exited",
                message=message or f"attempt {attempt.number}: the driver {ended}{code}",
            )
            current = repos.applications.get(application.id)
            current = move(repos, current, None, at=at, changes={"driver_state": "EXITED"})
            return current, repos.applications.latest_attempt(application.id)

    current, ended = on_fresh_reads(record)  # a Stop or an Abort may land meanwhile
    assert ended is not None
    remove_private_files(Path(attempt.directory))
    return current, ended
