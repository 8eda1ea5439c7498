"""Which of the servers on one store runs the supervisor: the one holding its lease.

Every server that would supervise keeps a ``Leadership``. Its keeper thread tries to take the
lease (``store.leases``) and, once it holds it, renews it every third of ``lease_seconds``; the
supervisor's loop ticks only while ``token`` says this server leads, and each tick's writes are
fenced by that token (``Store.fenced``). Leadership ends:

- when a renewal finds the lease taken over (or released): at once, and the supervisor is woken
  to stop (a renewal is a write fenced by the token like the supervisor's own, and refused and
  logged as they are);
- when the lease's time has passed on this server's clock since the last renewal began (the
  database could not be reached, the process was paused): ``token`` is None from then, so no
  tick starts, while the next renewal finds out whether the lease is still ours;
- when a fenced write is refused: the tick that made it tells ``lost``.

The database keeps the lease's time, so servers' clocks need not agree; this server's clock
(the ``Clock``) only measures how long ago it last renewed.

On a SQLite store there is one supervising server only: before the lease the server takes the
store's supervisor file lock (``supervisor.single_server``), and holding it, it takes the lease
from whoever held it last (a crashed server that cannot come back: the kernel released its lock).

Drivers after a takeover: the new leader's first tick reads every attempt from the store and
re-attaches as a restarted server does (``supervisor.loop``): it never starts a second driver
for an application whose driver it can still see running, and restart policies carry on from
the counts in the store. Drivers it cannot see are judged by their reports
(``supervisor.remote_drivers``): drivers' reports should reach whichever server is up, so with
several servers ``STREAMJOBS_PUBLIC_URL`` names an address in front of all of them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Literal, Protocol

from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import StoreUnavailable
from streamjobs.store.db import Store
from streamjobs.store.leases import SUPERVISOR_LEASE, Fenced, Leader
from streamjobs.supervisor.single_server import SupervisorFileLock, SupervisorRefused

log = logging.getLogger(__name__)

Role = Literal["leader", "standby"]


class Leading(Protocol):
    """What the supervisor's loop asks of its leadership.

    Contract: ``token`` is the lease token while this server leads and the lease's time has not
    passed since its last renewal, else None; ``refresh`` takes or renews the lease now and
    answers ``token`` after it; ``lost(token)`` says a write under ``token`` was refused, and
    ``token`` is None from then until the lease is taken again; ``start`` refreshes once, then
    keeps the lease on a thread of its own and calls ``on_change`` whenever ``token`` changes;
    ``stop`` ends that thread and gives the lease up. ``lease_seconds`` is the lease's length.
    """

    @property
    def token(self) -> int | None: ...

    @property
    def lease_seconds(self) -> float: ...

    def refresh(self) -> int | None: ...

    def lost(self, token: int) -> None: ...

    def start(self, on_change: Callable[[], None]) -> None: ...

    def stop(self) -> None: ...


class Leadership:
    """Holds (or waits for) the supervisor's lease for this server; see the module docstring."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        server_name: str,
        server_url: str,
        lease_seconds: float,
        file_lock: SupervisorFileLock | None = None,
    ) -> None:
        """``file_lock``: the SQLite store's supervisor lock (None on PostgreSQL)."""
        if lease_seconds <= 0:
            raise ValueError(f"lease_seconds must be positive, not {lease_seconds}")
        self.server_name = server_name
        self.server_url = server_url
        self._store = store
        self._clock = clock
        self._lease_seconds = lease_seconds
        self._file_lock = file_lock
        self._state = threading.Lock()
        self._rounds = threading.Lock()
        self._token: int | None = None
        self._renewed_at: datetime | None = None
        self._on_change: Callable[[], None] | None = None
        self._stopping = threading.Event()
        self._keeper: threading.Thread | None = None
        self._refused_said = False
        self._standby_said = False

    @property
    def lease_seconds(self) -> float:
        return self._lease_seconds

    @property
    def renew_every_seconds(self) -> float:
        """How often the keeper renews the lease, or asks for it: a third of its length."""
        return self._lease_seconds / 3

    @property
    def token(self) -> int | None:
        with self._state:
            token, renewed_at = self._token, self._renewed_at
        if token is None or renewed_at is None:
            return None
        if self._clock.now() >= renewed_at + timedelta(seconds=self._lease_seconds):
            return None
        return token

    def role(self) -> Role:
        return "leader" if self.token is not None else "standby"

    def leader(self) -> Leader | None:
        """Who leads now: this server, or the holder of the lease as the store has it."""
        if self.token is not None:
            return Leader(self.server_name, self.server_url)
        try:
            with self._store.reading() as repos:
                lease = repos.leases.current(SUPERVISOR_LEASE)
        except StoreUnavailable:
            return None
        return lease.leader if lease is not None else None

    def claim_file_lock(self) -> None:
        """On SQLite, hold the store's supervisor file lock from now (``SupervisorRefused``
        when another server holds it); nothing on PostgreSQL."""
        if self._file_lock is not None:
            self._file_lock.take()

    def refresh(self) -> int | None:
        """One round of the keeper: renew the lease when this server holds it, else try to
        take it; ``token`` afterwards. A store out of reach changes nothing (it is logged)."""
        with self._rounds:
            before = self.token
            try:
                self._round()
            except StoreUnavailable as error:
                log.warning("supervisor lease: %s; trying again shortly", error.detail)
            after = self.token
        if after != before:
            self._changed()
        return after

    def lost(self, token: int) -> None:
        with self._state:
            if self._token != token:
                return
            self._token, self._renewed_at = None, None
        log.warning("supervisor: this server stops supervising: another server leads now")
        self._changed()

    def start(self, on_change: Callable[[], None]) -> None:
        """Take or renew the lease now (a server that can lead does from its first tick), then
        keep it on a thread of its own, calling ``on_change`` whenever this server starts or
        stops leading."""
        self._stopping.clear()
        self.refresh()
        self._on_change = on_change
        self._keeper = threading.Thread(
            target=self._keep, name="streamjobs-supervisor-lease", daemon=True
        )
        self._keeper.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop keeping the lease and give it up (another server may take it at once), and
        the SQLite store's file lock with it."""
        self._stopping.set()
        if self._keeper is not None:
            self._keeper.join(timeout)
            self._keeper = None
        with self._rounds:
            with self._state:
                token, self._token, self._renewed_at = self._token, None, None
            if token is not None:
                try:
                    with self._store.transaction() as repos:
                        repos.leases.release(SUPERVISOR_LEASE, self.server_name, token)
                except StoreUnavailable as error:
                    log.warning("supervisor lease not released: %s", error.detail)
                else:
                    log.info("supervisor: %s gave up the lease", self.server_name)
            if self._file_lock is not None:
                self._file_lock.release()

    def _keep(self) -> None:
        while not self._stopping.wait(self.renew_every_seconds):
            try:
                self.refresh()
            except Exception:  # the keeper must outlive any one bad round
                log.exception("supervisor lease: a round failed")

    def _round(self) -> None:
        with self._state:
            token = self._token
        began = self._clock.now()
        if token is not None:
            self._renew(token, began)
        else:
            self._take(began)

    def _renew(self, token: int, began: datetime) -> None:
        """Renew the lease in a write fenced by ``token`` as the supervisor's are: once another
        server has taken the lease, the store refuses it and says so."""
        store = self._store
        try:
            with (
                store.fenced(token, hold_limit_seconds=self.renew_every_seconds),
                store.transaction() as repos,
            ):
                renewed = repos.leases.renew(
                    SUPERVISOR_LEASE,
                    self.server_name,
                    token,
                    self._lease_seconds,
                    wait_seconds=self.renew_every_seconds,
                )
        except Fenced:
            renewed = False
        with self._state:
            if self._token != token:
                return
            if renewed:
                self._renewed_at = began
                return
            self._token, self._renewed_at = None, None
        log.warning(
            "supervisor: %s stops supervising: its lease (token %d) is no longer its own",
            self.server_name,
            token,
        )

    def _take(self, began: datetime) -> None:
        if self._file_lock is not None and not self._take_file_lock():
            return
        with self._store.transaction() as repos:
            if self._file_lock is not None:
                token: int | None = repos.leases.seize(
                    SUPERVISOR_LEASE, self.server_name, self.server_url, self._lease_seconds
                )
            else:
                token = repos.leases.acquire(
                    SUPERVISOR_LEASE,
                    self.server_name,
                    self.server_url,
                    self._lease_seconds,
                    wait_seconds=self.renew_every_seconds,
                )
            lease = repos.leases.current(SUPERVISOR_LEASE) if token is None else None
        if token is None:
            if not self._standby_said and lease is not None and lease.leader is not None:
                log.info(
                    "supervisor: %s stands by: %s (%s) leads",
                    self.server_name,
                    lease.leader.name,
                    lease.leader.url,
                )
                self._standby_said = True
            return
        with self._state:
            self._token, self._renewed_at = token, began
        self._standby_said = False
        log.info("supervisor: %s leads now (lease token %d)", self.server_name, token)

    def _take_file_lock(self) -> bool:
        assert self._file_lock is not None
        try:
            self._file_lock.take()
        except SupervisorRefused as refused:
            if not self._refused_said:
                log.error("supervisor: %s", refused.detail)
                self._refused_said = True
            return False
        return True

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()
