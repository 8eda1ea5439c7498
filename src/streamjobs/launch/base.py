"""The seam between the supervisor and whatever runs Spark drivers: the ``Launcher`` protocol.

A launcher starts one attempt's driver, says whether it still runs, stops or aborts it, and
names its log files. It keeps nothing in memory that the supervisor needs after a server
restart: everything is in the ``DriverHandle`` it returns, which the store keeps, so a new
server process can poll, stop and read the logs of drivers an older one started.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from streamjobs.domain.connections import Connection
from streamjobs.domain.errors import StreamjobsError
from streamjobs.domain.manifest import StreamingJob
from streamjobs.domain.snapshots import SnapshotRequest


@dataclass(frozen=True)
class NodeSize:
    """Cores and memory of a driver or an executor, from its node type."""

    cores: int
    memory_mb: int


@dataclass(frozen=True)
class AttemptSpec:
    """Everything needed to start one attempt's driver.

    ``job`` is the application's immutable snapshot of the job, its checkpoint location
    already resolved. ``secrets`` maps environment variable names to secret values: they reach
    the driver through its environment only. ``spark_conf_secrets`` maps Spark settings to secret
    values: they reach spark-submit in a properties file only the server's user can read. Neither
    is ever on a command line.
    """

    application_id: str
    attempt: int
    job: StreamingJob
    directory: Path
    """``STREAMJOBS_HOME/apps/<application>/<attempt>/``: logs, manifest, token, exit code."""
    driver: NodeSize
    executor: NodeSize | None = None
    """Standard deployments only."""
    connections: Sequence[Connection] = ()
    secrets: Mapping[str, str] = field(default_factory=dict)
    spark_conf_secrets: Mapping[str, str] = field(default_factory=dict)
    report_url: str | None = None
    """Where a pipeline's runner posts its events (with ``report_token``)."""
    report_token: str | None = None
    hold_until: datetime | None = None
    """A pipeline's runner starts its Spark session at once but its queries no sooner than this
    (a restart whose retry interval has not yet passed)."""
    run_as: str = "streamjobs"
    """The identity the driver runs as (the application's ``runAs``): its OS account and home."""
    data_roots: tuple[str, ...] = ()
    """The job's bundle's data roots: the only data locations its sandbox may read and write."""
    fence: str = ""
    """The value the supervisor recorded with the attempt before starting it: the driver's
    wrapper carries it and writes it beside the exit code, so ``recover`` finds this attempt's
    driver (and no other) after the server stopped before recording its pid."""
    packaged_jars: tuple[str, ...] | None = None
    """The jar files the server resolved for the job's ``spark.jars.packages`` (``launch.jars``):
    the driver gets them in ``spark.jars`` and resolves nothing itself. None: the driver resolves
    its packages with Spark's resolver."""
    standby: bool = False
    """A warm standby of a pipeline (local or client mode only): its runner starts Spark and
    warms up, says it is ready, and starts nothing until the launcher promotes it
    (``Launcher.promote``); asked to stop before then, it exits 0 having touched no data."""


@dataclass(frozen=True)
class DriverHandle:
    """How to find a started driver again, also from another server process."""

    pid: int
    """The process group leader (the driver's wrapper); signals go to its whole group."""
    started_at: float
    """The process's start time (seconds since the epoch), so a reused pid is not mistaken."""
    directory: str
    ui_port: int
    """The driver's Spark UI and REST API port on ``driver_host``."""
    master: str
    driver_host: str = "127.0.0.1"
    """Where the driver's UI and REST API answer: 127.0.0.1 for local drivers, the advertised
    address of a client-mode driver, the worker's address of a cluster-mode one."""
    submission_id: str | None = None
    """A cluster-mode driver's id at the standalone master (``driver-…``); it has no local
    process (``pid`` 0)."""
    launched_on: str | None = None
    """The server host that started a local or client-mode driver: only there can its process
    be watched and signalled."""


class DriverState(StrEnum):
    """What polling a driver found."""

    RUNNING = "RUNNING"
    EXITED = "EXITED"
    """Ended; ``exit_code`` says how (None when nobody could see it, e.g. killed with -9)."""


@dataclass(frozen=True)
class DriverHealth:
    state: DriverState
    exit_code: int | None = None


class LaunchFailed(StreamjobsError):
    """The driver could not be started at all (a submission failure)."""

    title = "Launch failed"


class InvalidLaunch(LaunchFailed):
    """The server cannot launch this kind of job (e.g. no standalone master configured)."""


class Launcher(Protocol):
    """Starts, watches and ends Spark drivers.

    Contract:
    - ``submit`` returns once the driver's process exists; it does not wait for Spark. It
      raises ``LaunchFailed`` when the process cannot be started.
    - ``poll`` never blocks for long and never raises for a driver that is gone: it answers
      EXITED with the exit code when known.
    - ``stop`` asks for a graceful end (a pipeline finishes its micro-batch in flight, commits
      and exits 0) and returns at once; with ``snapshot``, a pipeline's runner takes that
      snapshot before it exits (other drivers ignore it). ``abort`` sends SIGTERM to the
      driver's whole process group and ``kill`` SIGKILL; the supervisor escalates from one to
      the other after a grace period. All three are harmless on a driver that has already
      exited, and asking again with the same request is harmless too.
    - ``request_snapshot`` asks a running pipeline's runner for a snapshot now and returns at
      once (the runner stages it in the attempt directory, ``domain.snapshots``); nothing for
      other drivers. The runner takes each name once, so asking again is harmless.
    - ``log_files`` names each log of the driver and its executors: ``driver``,
      ``driver-stdout``, ``executor-<id>``, ``executor-<id>-stdout``; only existing files.
    - ``recover`` is asked about an attempt recorded with ``fence`` whose pid never was (the
      server stopped while starting it): the driver's handle when it runs, else EXITED with the
      exit code it left under that fence (None: no driver of that fence ever ran). It never
      starts anything.
    - ``promote`` tells a standby driver (``AttemptSpec.standby``) to go on as the application's
      running attempt: it starts its queries no sooner than ``start_at`` (and at once when that
      has passed). It returns at once; it is harmless when repeated (the first promotion the
      driver sees counts) and when the driver is gone.
    - ``standby_ready`` says whether a standby driver has said it is held ready (Spark started
      and warmed up); False for any other driver, and for a standby that has not yet.
    """

    def submit(self, attempt: AttemptSpec) -> DriverHandle: ...

    def poll(self, handle: DriverHandle) -> DriverHealth: ...

    def stop(self, handle: DriverHandle, *, snapshot: SnapshotRequest | None = None) -> None: ...

    def request_snapshot(self, handle: DriverHandle, request: SnapshotRequest) -> None: ...

    def abort(self, handle: DriverHandle) -> None: ...

    def kill(self, handle: DriverHandle) -> None: ...

    def log_files(self, handle: DriverHandle) -> dict[str, Path]: ...

    def recover(self, directory: Path, fence: str) -> DriverHandle | DriverHealth: ...

    def promote(self, handle: DriverHandle, *, start_at: datetime) -> None: ...

    def standby_ready(self, handle: DriverHandle) -> bool: ...
