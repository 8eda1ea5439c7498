"""The supervisor's loop: observe every supervised application, tick, apply the actions.

``Supervisor.run_once`` is one pass and is what tests call; ``start`` runs it every second in a
background thread of ``streamjobs server``, and at once when woken (a driver ended, a retry is
due, a Run or a starting driver's first report came in: ``wakeups``, ``nudge``). Everything
the loop needs about a driver is in the store (pid, process start time, directory), so a
restarted server carries on with the drivers an earlier one started, and never starts a second
driver for a job: an application's next attempt is only submitted once the store says its
previous one has ended.

Applying a submit claims the application and records the attempt in one versioned update, then
starts the driver, then records its pid (``submissions``): if the claim loses a race nothing
starts; a server that dies at any step leaves an attempt the next tick settles (adopts its
driver, or ends it). One application's failure (to launch, to be observed) is never the tick's:
the others carry on in the same tick. Once an attempt's driver has exited, its private files
(report token, secret settings) are removed; a server's first tick removes those that ended
attempts left behind (``ended_attempts``). Each tick ends by judging the health rules of the
running applications (``supervisor.health``), by handing over snapshots between the runners
and the store (``supervisor.snapshots``) and by moving upgrades on (``supervisor.upgrades``).

With several servers on one store, only the holder of the supervisor's lease ticks
(``supervisor.leadership``), and every transaction of its ticks is fenced by the lease's token
(``Store.fenced``): a refused one ends the tick and this server's leadership at once. Each time
this server starts leading, it starts afresh as a newly started server's supervisor would (it
forgets what it knew of the applications; its first tick re-attaches to every driver the store
records). Drivers started on another host are judged by their reports
(``supervisor.remote_drivers``). Standby drivers are watched, started, promoted and ended by
``supervisor.standbys``.
"""

from __future__ import annotations

import logging
import secrets
import socket
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime

from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import StreamjobsError
from streamjobs.domain.manifest import Deployment
from streamjobs.domain.states import ACTIVE_STATES, AppEvent, AppState
from streamjobs.launch.base import InvalidLaunch, Launcher
from streamjobs.launch.jars import JarResolver
from streamjobs.launch.spark_ui import read_executors
from streamjobs.services.application_state import move
from streamjobs.services.identity import token_digest
from streamjobs.store import ApplicationRecord, AttemptRecord
from streamjobs.store.db import Store
from streamjobs.store.leases import Fenced
from streamjobs.supervisor.attempt_facts import (
    handle_of,
)
from streamjobs.supervisor.attempts import AttemptFactory
from streamjobs.supervisor.decisions import log_decision
from streamjobs.supervisor.ended_attempts import remove_files_of_ended_attempts
from streamjobs.supervisor.executors import ExecutorPolls, ExecutorReader
from streamjobs.supervisor.health import HealthStep
from streamjobs.supervisor.leader_ticks import LeaderTicks
from streamjobs.supervisor.leadership import Leading
from streamjobs.supervisor.observer import Observer
from streamjobs.supervisor.reconcile import (
    Action,
    DriverCall,
    Timing,
    tick,
)
from streamjobs.supervisor.remote_drivers import (
    launched_elsewhere,
    log_unreachable,
)
from streamjobs.supervisor.snapshots import Snapshots, SnapshotStep
from streamjobs.supervisor.standbys import Standbys
from streamjobs.supervisor.submission_times import next_submission_due
from streamjobs.supervisor.submissions import PendingAttempt, Submissions
from streamjobs.supervisor.terms import ApplicationTerms
from streamjobs.supervisor.tick_model import StandbyCall
from streamjobs.supervisor.upgrades import Upgrades, UpgradeStep
from streamjobs.supervisor.wakeups import Wakeups

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SupervisorConfig:
    """What the loop needs to know besides its collaborators."""

    timing: Timing
    interval_seconds: float = 1.0


class Supervisor:
    """Keeps the store's applications and the real drivers in step."""

    def __init__(
        self,
        *,
        store: Store,
        launchers: Mapping[Deployment, Launcher],
        attempts: AttemptFactory,
        clock: Clock,
        config: SupervisorConfig,
        executor_reader: ExecutorReader = read_executors,
        jar_resolver: JarResolver | None = None,
        health: HealthStep | None = None,
        snapshots: Snapshots | None = None,
        upgrades: Upgrades | None = None,
        tick_timer: Callable[[], AbstractContextManager[object]] = nullcontext,
        leadership: Leading | None = None,
        host: str | None = None,
    ) -> None:
        """``executor_reader`` asks a driver's Spark REST API for its executors (None: no
        answer); ``jar_resolver`` resolves the jars a job needs before its driver starts
        (None: drivers resolve their packages themselves); ``snapshots`` records the snapshots
        runners take (None: none is recorded); ``upgrades`` carries out upgrades (None: none
        is); ``tick_timer`` measures each tick (the server's metrics); ``leadership`` says
        whether this server leads (None: it always does, unfenced: a supervisor alone on its
        store); ``host`` is this server's host name (default the machine's)."""
        self._snapshots = SnapshotStep(snapshots=snapshots) if snapshots is not None else None
        self._upgrades = UpgradeStep(upgrades=upgrades) if upgrades is not None else None
        self._tick_timer = tick_timer
        self._store = store
        self._leadership = leadership
        self._leading = (
            LeaderTicks(store=store, leadership=leadership, begin=self._begin_term)
            if leadership is not None
            else None
        )
        self._host = host or socket.gethostname()
        self._health = health or HealthStep(store=store, clock=clock)
        self._launchers = launchers
        self._attempts = attempts
        self._clock = clock
        self._config = config
        self._terms: dict[str, ApplicationTerms] = {}
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._wakeups: Wakeups | None = None
        self._live_pids: set[int] = set()
        self._next_due: datetime | None = None
        self._starting: frozenset[str] = frozenset()
        """Applications STARTING at the last tick: their driver's first report wakes the loop."""
        self._swept = False
        """Whether the first tick has removed the private files ended attempts left behind."""
        self._submissions = Submissions(
            store=store,
            attempts=attempts,
            clock=clock,
            launcher_for=self._launcher,
            jar_resolver=jar_resolver,
            wake=self.wake,
        )
        self._standbys = Standbys(
            store=store,
            attempts=attempts,
            clock=clock,
            launcher_for=self._launcher,
            host=self._host,
        )
        self._held: dict[str, AttemptRecord] = {}
        """Each application's newest standby not promoted, as the last tick read it."""
        self._observer = Observer(
            store=store,
            clock=clock,
            timing=config.timing,
            submissions=self._submissions,
            standbys=self._standbys,
            executor_polls=ExecutorPolls(executor_reader),
            launcher_for=self._launcher,
            terms_of=self._terms_of,
            host=self._host,
        )

    @property
    def leadership(self) -> Leading | None:
        return self._leadership

    def run_once(self) -> list[Action]:
        """One pass: a tick over every supervised application while this server leads, nothing
        while another does; the actions it applied. Unless the loop runs (its leadership then
        keeps the lease on a thread of its own), the lease is taken or renewed first."""
        if self._leadership is not None and self._thread is None:
            self._leadership.refresh()
        return self._pass()

    def _pass(self) -> list[Action]:
        if self._leading is None:
            return self._timed_tick()
        return self._leading.run(self._timed_tick)

    def _timed_tick(self) -> list[Action]:
        with self._tick_timer():
            return self._tick()

    def _begin_term(self, token: int | None) -> None:
        """Start leading under ``token`` (None: stop) as a newly started server's supervisor
        would: knowing nothing of the applications until the store tells."""
        self._terms = {}
        self._swept = False
        self._live_pids = set()
        self._next_due = None
        self._starting = frozenset()

    def _tick(self) -> list[Action]:
        if not self._swept:
            self._swept = True
            remove_files_of_ended_attempts(self._store, self._attempts.apps_directory)
        supervised = self._supervised()
        self._held = self._standbys.held()
        self._live_pids = set()
        observed = list(self._observer.observe_each(supervised, self._held, self._live_pids))
        now = self._clock.now()
        actions = tick(observed, now=now, timing=self._config.timing)
        for action in actions:
            try:
                if action.driver is DriverCall.SUBMIT and not self._submissions.jars_ready(
                    action.application_id
                ):
                    continue  # its jars resolve in the background; it waits where it is
                self._apply(action)
            except Fenced:
                raise
            except StreamjobsError as error:  # changed meanwhile: the next tick sees it anew
                log.info("supervisor: %s: %s", action.application_id, error.detail)
            except Exception:
                log.exception("supervisor: applying %s failed", action)
        self._sweep_standbys()
        self._health.run(supervised, self._terms_of)  # each application's own rules, never fatal
        if self._snapshots is not None:
            self._snapshots.run(supervised, self._launcher)  # never fatal either
        if self._upgrades is not None:
            self._upgrades.run()  # after the snapshots: an upgrade snapshot collected now counts
        self._next_due = next_submission_due(
            observed, actions, after=now, timing=self._config.timing
        )
        self._starting = frozenset(
            app.id for app in observed if app.state is AppState.STARTING and not app.driver_ready
        )
        return actions

    def _sweep_standbys(self) -> None:
        try:
            self._standbys.sweep()
        except Fenced:
            raise
        except Exception:
            log.exception("supervisor: ending the standbys of inactive applications failed")

    def wake(self) -> None:
        """Tick now rather than at the next interval (from any thread): something asked of an
        application (a Run, a stop, an abort) has been stored. Nothing when not started."""
        if self._wakeups is not None:
            self._wakeups.wake()

    def driver_reported(self, application_id: str) -> None:
        """A driver's report was stored: tick now if its application waits for that report to
        be RUNNING; any other report (progress, heartbeats) waits for the next tick."""
        if application_id in self._starting:
            self.wake()

    def start(self) -> None:
        """Run a tick every ``interval_seconds`` in a background thread, and sooner when a
        driver process ends, an application's next attempt is due (``Wakeups``) or ``wake`` is
        called (``supervisor.nudge``: a Run, a starting driver's first report)."""
        self._wakeups = Wakeups()
        if self._leadership is not None:
            self._leadership.start(on_change=self.wake)
        self._thread = threading.Thread(target=self._loop, name="streamjobs-supervisor")
        self._thread.daemon = True
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop ticking and give the lease up (a no-op when stopped already)."""
        self._stopping.set()
        if self._wakeups is not None:
            self._wakeups.wake()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._leadership is not None:
            self._leadership.stop()

    def _loop(self) -> None:
        wakeups = self._wakeups
        assert wakeups is not None
        try:
            while True:
                wakeups.wait(self._seconds_to_next_tick())
                if self._stopping.is_set():
                    return
                try:
                    self.run_once()
                    wakeups.watch(self._live_pids)
                except Exception:  # the loop must outlive any one bad tick
                    log.exception("supervisor tick failed")
        finally:
            wakeups.close()

    def _seconds_to_next_tick(self) -> float:
        interval = self._config.interval_seconds
        if self._next_due is None:
            return interval
        return min(interval, (self._next_due - self._clock.now()).total_seconds())

    def _supervised(self) -> list[tuple[ApplicationRecord, AttemptRecord | None]]:
        """Every supervised application with its latest attempt, read in one transaction, and
        the terms of those whose spec this loop has not read at their current version."""
        with self._store.transaction() as repos:
            applications = repos.applications.supervised()
            attempts = repos.applications.latest_attempts_in(ACTIVE_STATES)
            stale = [a.id for a in applications if not self._knows_terms(a)]
            specs = repos.applications.specs(stale)
        self._terms = {
            a.id: ApplicationTerms.of(specs[a.id], a.version)
            if a.id in specs
            else self._terms[a.id]
            for a in applications
        }
        return [(application, attempts.get(application.id)) for application in applications]

    def _knows_terms(self, application: ApplicationRecord) -> bool:
        terms = self._terms.get(application.id)
        return terms is not None and terms.version == application.version

    def _terms_of(self, application: ApplicationRecord) -> ApplicationTerms:
        """The application's terms, read now when the loop has never seen it (any version:
        only a resume changes the spec, and an action based on an older version is dropped)."""
        terms = self._terms.get(application.id)
        if terms is None:
            with self._store.transaction() as repos:
                terms = ApplicationTerms.of(
                    repos.applications.spec(application.id), application.version
                )
        return terms

    def _apply(self, action: Action) -> None:
        if action.standby in (StandbyCall.LAUNCH, StandbyCall.DISCARD):
            self._apply_to_standby(action)
            return
        now = self._clock.now()
        promoted: AttemptRecord | None = None
        with self._store.transaction() as repos:
            application = repos.applications.get(action.application_id)
            if application.version != action.version:
                return
            changes = dict(action.changes)
            token = secrets.token_urlsafe(32)
            if action.driver is DriverCall.SUBMIT:
                changes["token_hash"] = token_digest(token)
            if action.standby is StandbyCall.PROMOTE:
                promoted = self._standbys.claim(repos, application.id, now)
                changes["token_hash"] = promoted.token_hash
            application = move(
                repos, application, action.event, at=now, changes=changes, note=action.note
            )
            attempt = repos.applications.latest_attempt(application.id)
            if action.event is AppEvent.DRIVER_RUNNING and attempt is not None:
                repos.applications.update_attempt(application.id, attempt.number, running_at=now)
            if action.attempt_outcome and attempt is not None:
                repos.applications.update_attempt(
                    application.id,
                    attempt.number,
                    outcome=action.attempt_outcome,
                    ended_at=attempt.ended_at or now,
                )
            pending: PendingAttempt | None = None
            if action.driver is DriverCall.SUBMIT:
                pending = self._submissions.record(
                    repos, application, token=token, hold_until=action.hold_until
                )
        if action.note is not None:
            log_decision(application, action.note)
        if self._leading is not None:
            self._leading.confirm()
        if promoted is not None:
            self._standbys.release(application, promoted, start_at=action.hold_until or now)
        elif pending is not None:
            pid = self._submissions.start(application, pending)
            if pid is not None:
                self._live_pids.add(pid)
        elif action.driver is not None and attempt is not None and attempt.pid is not None:
            if launched_elsewhere(handle_of(attempt), self._host):
                log_unreachable(application.id, action.driver)
                return
            launcher = self._launcher(application)
            if action.driver is DriverCall.STOP:
                if action.snapshot is not None and self._snapshots is not None:
                    self._snapshots.aligned(application.id, action.snapshot)
                launcher.stop(handle_of(attempt), snapshot=action.snapshot)
            else:
                call = {DriverCall.ABORT: launcher.abort, DriverCall.KILL: launcher.kill}
                call[action.driver](handle_of(attempt))

    def _apply_to_standby(self, action: Action) -> None:
        """Start or end an application's standby driver (no change to the application)."""
        with self._store.reading() as repos:
            application = repos.applications.get(action.application_id)
        if self._leading is not None:
            self._leading.confirm()
        held = self._held.get(application.id)
        if action.standby is StandbyCall.DISCARD and held is not None:
            self._standbys.discard(
                application, held, f"ended: the application is {application.state}"
            )
        elif action.standby is StandbyCall.LAUNCH:
            pid = self._standbys.launch(application)
            if pid is not None:
                self._live_pids.add(pid)

    def _launcher(self, application: ApplicationRecord) -> Launcher:
        deployment = self._terms_of(application).deployment
        launcher = self._launchers.get(deployment)
        if launcher is None:
            raise InvalidLaunch(f"no launcher for deployment {deployment} is configured")
        return launcher
