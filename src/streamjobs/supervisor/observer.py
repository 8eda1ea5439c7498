"""What the supervisor's loop sees of each supervised application before it ticks.

For each application, ``Observer`` settles an attempt a stopped server left half-started, polls
the latest attempt's driver (or judges a driver on another host by its reports), records its
exit, asks a running driver's REST API for its executors when due, and watches its standby
driver; the result is the ``reconcile.Observed`` the pure tick decides on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping

from streamjobs.domain.clock import Clock
from streamjobs.launch.base import DriverHandle, DriverState, Launcher
from streamjobs.store import ApplicationRecord, AttemptRecord
from streamjobs.store.db import Store
from streamjobs.store.leases import Fenced
from streamjobs.supervisor.attempt_facts import handle_of, heartbeat_of
from streamjobs.supervisor.driver_records import record_exit, record_figures
from streamjobs.supervisor.executors import ExecutorPolls
from streamjobs.supervisor.observations import observed_from
from streamjobs.supervisor.remote_drivers import launched_elsewhere, observe_remote
from streamjobs.supervisor.standbys import Standbys
from streamjobs.supervisor.submissions import Submissions
from streamjobs.supervisor.terms import ApplicationTerms
from streamjobs.supervisor.tick_model import Observed, Timing

log = logging.getLogger(__name__)


class Observer:
    """Observes supervised applications for the loop (see the module)."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        timing: Timing,
        submissions: Submissions,
        standbys: Standbys,
        executor_polls: ExecutorPolls,
        launcher_for: Callable[[ApplicationRecord], Launcher],
        terms_of: Callable[[ApplicationRecord], ApplicationTerms],
        host: str,
    ) -> None:
        self._store = store
        self._clock = clock
        self._timing = timing
        self._submissions = submissions
        self._standbys = standbys
        self._executor_polls = executor_polls
        self._launcher_for = launcher_for
        self._terms_of = terms_of
        self._host = host

    def observe_each(
        self,
        supervised: list[tuple[ApplicationRecord, AttemptRecord | None]],
        held: Mapping[str, AttemptRecord],
        live_pids: set[int],
    ) -> Iterator[Observed]:
        """What each application looks like now; one that cannot be observed is left out of
        this tick (and logged), the others are not held up by it. ``held`` is each one's
        standby not promoted; the pids of the drivers found running are added to ``live_pids``."""
        for application, attempt in supervised:
            try:
                observed = self._observe(application, attempt, held.get(application.id), live_pids)
            except Fenced:
                raise
            except Exception:
                log.exception("supervisor: observing application %s failed", application.id)
                continue
            yield observed

    def _observe(
        self,
        application: ApplicationRecord,
        attempt: AttemptRecord | None,
        held: AttemptRecord | None,
        live_pids: set[int],
    ) -> Observed:
        live, ready = False, False
        if attempt is not None and attempt.ended_at is None and attempt.pid is None:
            application, attempt = self._submissions.settle(application, attempt)
        if attempt is not None and attempt.ended_at is None and attempt.pid is not None:
            handle = handle_of(attempt)
            if launched_elsewhere(handle, self._host):
                return observe_remote(
                    self._store,
                    application,
                    attempt,
                    self._terms_of(application),
                    now=self._clock.now(),
                    timeout=self._timing.heartbeat_timeout,
                )
            health = self._launcher_for(application).poll(handle)
            if health.state is DriverState.RUNNING:
                live = True
                live_pids.add(attempt.pid)
                attempt, handle = self._submissions.locate(application, attempt, handle)
                application, ready = self._driver_ready(application, attempt, handle)
            else:
                application, attempt = record_exit(
                    self._store, application, attempt, health.exit_code, at=self._clock.now()
                )
        if attempt is not None and not ready:
            ready = heartbeat_of(application, attempt) is not None
        standby = None
        if held is not None:
            standby = self._standbys.observe(application, held)
            if standby.live and held.pid:
                live_pids.add(held.pid)
        terms = self._terms_of(application)
        return observed_from(application, attempt, terms, live=live, ready=ready, standby=standby)

    def _driver_ready(
        self, application: ApplicationRecord, attempt: AttemptRecord, handle: DriverHandle
    ) -> tuple[ApplicationRecord, bool]:
        """Whether the driver reported or its REST API answers (then its executor figures are
        kept; ``supervisor.executors`` says when it is asked); the application afterwards."""
        reported = heartbeat_of(application, attempt) is not None
        now = self._clock.now()
        polls = self._executor_polls
        if not polls.due(application, attempt, now, reports=self._terms_of(application).reports):
            return application, reported
        figures = polls.read(application.id, handle, now)
        if figures is None:
            return application, reported
        executors = self._terms_of(application).executors
        return record_figures(
            self._store, application, figures, executors_asked=executors, at=now
        ), True
