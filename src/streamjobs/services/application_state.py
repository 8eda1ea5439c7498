"""Moving an application from state to state: one place that both the API and the supervisor use.

Each move goes through the domain's state machine (so an illegal one is a 409), updates the
application with optimistic concurrency, keeps the job's status equal to its latest
application's state, records an event and queues the notifications the move is an event for
(``services.outbox``), all in the caller's transaction.

A move that changes the state holds the job's row before it writes the application's (the order
Run, Resume and Delete take them in, ``JobRepository.lock``): were it the other way round, the
supervisor ending an application and a Run or Resume of its job would each wait for the other,
and PostgreSQL would break the deadlock by failing one of them. Other moves write the
application's row alone.

A running driver's reports move its application every few seconds, so a move the server decides
from what it reads (a person's Stop or Abort, a report) is tried again from a fresh read when
another move lands between its read and its write (``resources.on_fresh_reads``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from streamjobs.domain.states import AppEvent, AppState, transition
from streamjobs.services.outbox import enqueue_lifecycle
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories


def move(
    repos: Repositories,
    application: ApplicationRecord,
    event: AppEvent | None,
    *,
    at: datetime,
    changes: Mapping[str, Any] | None = None,
    note: tuple[str, str] | None = None,
) -> ApplicationRecord:
    """Apply ``event`` (None: only ``changes``) to ``application`` as it was read.

    Raises ``IllegalTransition`` for an event its state cannot take, and ``Conflict`` when the
    application changed since it was read.
    """
    fields = dict(changes or {})
    if event is not None:
        fields["state"] = transition(
            AppState(application.state), event, application=application.name
        )
    if "state" in fields:
        repos.jobs.hold(application.job_name)  # none for an application that outlived its job
    updated = repos.applications.update(
        application.id, version=application.version, at=at, **fields
    )
    if "state" in fields:
        repos.jobs.set_status(application.job_name, str(fields["state"]))
        enqueue_lifecycle(repos, AppState(application.state), updated, at=at)
    if note is not None:
        kind, message = note
        repos.applications.add_event(application.id, at=at, kind=kind, message=message)
    return updated


def created(repos: Repositories, application: ApplicationRecord, *, at: datetime) -> None:
    """What ``move`` does for a state change, for an application just stored in its first
    state: queue the notifications of its start."""
    enqueue_lifecycle(repos, None, application, at=at)
