"""Local drivers another server host started: judged by their reports, not by their process.

A local (or client-mode) driver is a process on the host of the server that started it
(``DriverHandle.launched_on``): only there can it be polled and signalled. A server that leads
after a takeover from a server on another host cannot see such a process; the one sign it has
of the driver is its reports (its application's ``last_heartbeat_at``; a driver that never
reported counts from its submission). While the latest sign is fresher than the heartbeat
timeout the driver counts as running, and no second driver is started for its application;
once it is older, the driver is taken as lost with its host (exit unknown) and the restart
policy decides, starting the next attempt on the leader's own host. A stop or abort cannot
reach such a driver: it is settled the same way, once its reports stop.

Cluster-mode drivers (``submission_id``) are followed through the standalone master from any
host, and drivers started on this host are polled as ever.
"""

from __future__ import annotations

import logging
from datetime import datetime

from streamjobs.launch.base import DriverHandle
from streamjobs.store import ApplicationRecord, AttemptRecord
from streamjobs.store.db import Store
from streamjobs.supervisor.attempt_facts import handle_of, heartbeat_of
from streamjobs.supervisor.driver_records import record_exit
from streamjobs.supervisor.observations import observed_from
from streamjobs.supervisor.reconcile import DriverCall, Observed
from streamjobs.supervisor.terms import ApplicationTerms

log = logging.getLogger(__name__)


def launched_elsewhere(handle: DriverHandle, host: str) -> bool:
    """Whether ``handle``'s driver is a process on another host than ``host``."""
    return (
        handle.submission_id is None
        and handle.launched_on is not None
        and handle.launched_on != host
    )


def last_sign_of_life(application: ApplicationRecord, attempt: AttemptRecord) -> datetime:
    """The attempt's driver's last report, or its submission when it has sent none."""
    return heartbeat_of(application, attempt) or attempt.reporting_since


def still_reporting(
    application: ApplicationRecord, attempt: AttemptRecord, *, now: datetime, timeout: float
) -> bool:
    """Whether the driver of a remote attempt counts as running at ``now``."""
    return (now - last_sign_of_life(application, attempt)).total_seconds() <= timeout


def observe_remote(
    store: Store,
    application: ApplicationRecord,
    attempt: AttemptRecord,
    terms: ApplicationTerms,
    *,
    now: datetime,
    timeout: float,
) -> Observed:
    """The application of a remote attempt as the tick sees it: its driver running while it
    reports, else its attempt ended as lost (recorded now)."""
    live = still_reporting(application, attempt, now=now, timeout=timeout)
    if not live:
        lost = (
            f"attempt {attempt.number}: the driver started on host "
            f"{handle_of(attempt).launched_on} has not reported for {timeout:g} s, and its "
            "process cannot be seen from this host: taken as lost with its host (exit unknown)"
        )
        application, attempt = record_exit(store, application, attempt, None, at=now, message=lost)
    ready = heartbeat_of(application, attempt) is not None
    return observed_from(application, attempt, terms, live=live, ready=ready)


def log_unreachable(application_id: str, call: DriverCall) -> None:
    """Say that the driver of a remote attempt cannot be asked to ``call`` from here."""
    log.info(
        "supervisor: %s: its driver runs on another host and cannot be sent %s from here; "
        "it is settled once its reports stop",
        application_id,
        call.value,
    )
