"""The supervisor's snapshot step: hand snapshot requests to the runners, take in what they
staged, and give up on what they never will.

The loop runs ``SnapshotStep.run`` each tick after the tick's actions, over the applications it
supervised at the start of the tick (so also those that became STOPPED or SUSPENDED in it):

- each snapshot a person asked for (a TAKING row of a RUNNING application) is delivered to the
  latest attempt's driver once (``Launcher.request_snapshot``); the step remembers what it
  delivered to which attempt, and delivering again (after a server restart, or to the next
  attempt of a driver that ended first) is harmless: the runner takes each name once;
- the snapshots an application's runner staged in its attempt directory are collected
  (``SnapshotService.collect``): those of every application whose latest attempt has staged
  any (so a stop's aligned snapshot is recorded in the tick that sees the driver gone), all of
  them at the step's first run (a server that stopped may have left some);
- then requests that will never be answered are failed (``SnapshotService.expire``).

A graceful stop's aligned snapshot is recorded as expected (``aligned``) before the loop asks
the driver for it. One application's failure (a store error, an unreadable directory) is logged
and never stops the step for the others.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from streamjobs.domain.errors import StreamjobsError
from streamjobs.domain.snapshots import SNAPSHOTS_DIRECTORY, SnapshotKind, SnapshotRequest
from streamjobs.launch.base import Launcher
from streamjobs.store import ApplicationRecord, AttemptRecord
from streamjobs.supervisor.attempt_facts import handle_of

log = logging.getLogger(__name__)

Supervised = Sequence[tuple[ApplicationRecord, AttemptRecord | None]]
LauncherOf = Callable[[ApplicationRecord], Launcher]


class PendingSnapshot(Protocol):
    """A requested snapshot as the step needs it: its row's id and name, and what kind."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> SnapshotKind: ...


class Snapshots(Protocol):
    """What the step asks of the snapshot service (``services.snapshots.SnapshotService``).

    Contract: ``pending_requests`` lists the TAKING rows asked for by a person of RUNNING
    applications, each with its application; ``expect`` records a TAKING row for a stop's
    aligned snapshot unless there is one (idempotent); ``collect`` records every snapshot staged
    in an application's attempt directories and removes what it took (idempotent; one still
    being written is left for later); ``expire`` fails the TAKING rows that will never be
    answered. None of them asks who acts: the server does.
    """

    def pending_requests(self) -> Sequence[tuple[PendingSnapshot, ApplicationRecord]]: ...

    def expect(self, application_id: str, request: SnapshotRequest) -> None: ...

    def collect(self, application_id: str) -> Sequence[object]: ...

    def expire(self) -> Sequence[object]: ...


class SnapshotStep:
    """Delivers, collects and expires snapshots (see the module)."""

    def __init__(self, *, snapshots: Snapshots) -> None:
        self._snapshots = snapshots
        self._delivered: set[tuple[str, int]] = set()
        """(snapshot row, attempt number) of the requests delivered and still pending."""
        self._expected: set[tuple[str, str]] = set()
        """(application, snapshot name) of the aligned snapshots recorded as expected."""
        self._uncollected: set[str] = set()
        """Applications whose last collect failed: tried again at the next run."""
        self._swept = False

    def aligned(self, application_id: str, request: SnapshotRequest) -> None:
        """Record the aligned snapshot a graceful stop asks for, once per application and name;
        a failure is logged (the stop goes on, and the next tick records it)."""
        key = (application_id, request.name)
        if key in self._expected:
            return
        try:
            self._snapshots.expect(application_id, request)
        except Exception:
            log.exception("supervisor: recording snapshot %s of %s failed", *key[::-1])
            return
        self._expected.add(key)

    def run(self, supervised: Supervised, launcher_of: LauncherOf) -> None:
        """One pass: deliver, collect, expire."""
        attempts = {application.id: attempt for application, attempt in supervised}
        self._expected = {key for key in self._expected if key[0] in attempts}
        self._deliver(attempts, launcher_of)
        self._collect(supervised)
        try:
            self._snapshots.expire()
        except Exception:
            log.exception("supervisor: expiring snapshot requests failed")

    def _deliver(self, attempts: dict[str, AttemptRecord | None], launcher_of: LauncherOf) -> None:
        try:
            pending = self._snapshots.pending_requests()
        except Exception:
            log.exception("supervisor: reading the snapshot requests failed")
            return
        still_pending: set[tuple[str, int]] = set()
        for snapshot, application in pending:
            attempt = attempts.get(application.id)
            if attempt is None or attempt.pid is None or attempt.ended_at is not None:
                continue  # its driver is not up (yet): a later tick delivers it
            key = (snapshot.id, attempt.number)
            still_pending.add(key)
            if key in self._delivered:
                continue
            request = SnapshotRequest(name=snapshot.name, kind=snapshot.kind)
            try:
                launcher_of(application).request_snapshot(handle_of(attempt), request)
            except Exception:
                log.exception(
                    "supervisor: asking %s for snapshot %s failed", application.id, snapshot.name
                )
                continue
            self._delivered.add(key)
        self._delivered &= still_pending

    def _collect(self, supervised: Supervised) -> None:
        first = not self._swept
        self._swept = True
        due = {
            application.id
            for application, attempt in supervised
            if first or (attempt is not None and _has_staged(attempt))
        }
        for application_id in sorted(due | self._uncollected):
            try:
                self._snapshots.collect(application_id)
            except StreamjobsError as error:  # gone meanwhile (its job deleted): not again
                log.info("supervisor: collecting the snapshots of %s: %s", application_id, error)
            except Exception:
                log.exception("supervisor: collecting the snapshots of %s failed", application_id)
                self._uncollected.add(application_id)
                continue
            self._uncollected.discard(application_id)


def _has_staged(attempt: AttemptRecord) -> bool:
    """Whether the attempt's runner staged anything (a snapshot written or being written)."""
    try:
        with os.scandir(Path(attempt.directory) / SNAPSHOTS_DIRECTORY) as entries:
            return any(True for _ in entries)
    except OSError:
        return False
