"""``ClusterDrivers``: cluster-mode drivers (``spec.instance.deployMode: cluster``), each running
on a worker of a Spark standalone cluster, followed by the master's submission id.

The driver is submitted through the master's REST submission server (``rest_submission``, the
request from ``cluster_request``); from then on the master says how it is (status), ends it
(kill) and where it runs (its worker). Nothing runs on the server's host, so nothing is lost
when the server is: a restarted server, or another one, follows the same driver by the
submission id recorded with the attempt, and ``recover`` finds it in ``launch.json`` of the
attempt directory, written as soon as the master answered.

The attempt directory is on a file system the workers share (``cluster_request``), so a
pipeline's runner stops and takes snapshots by the same files as in client mode.

The driver's own logs are files on its worker, read over HTTP (``worker_logs``). The UI port
Spark picked on the worker is in the driver's log ("Successfully started service 'SparkUI' on
port N"): ``locate`` reads the head of that log until it finds it, and the supervisor records
the worker's host and that port with the attempt, so the driver's REST API and UI are reached
there. When the driver ends badly, the ends of its logs are copied into the attempt directory
(``DRIVER_LOG_TAILS``), where the supervisor reads the failure's cause, and which stay readable
when the worker is gone.

A driver whose worker is lost (its host gone, the master says ERROR) leaves its Spark
application behind: the master only ends an application when its driver disconnects, which a
vanished host never does, so the application and its executors on the other workers would hold
their cores for many minutes, and a restarted driver could find none free. So while a driver runs
its application id is learnt from its log (and kept in ``launch.json``), and once the master
says ERROR the application is ended through the master's web UI (``master_applications``).

A master that does not answer never fails a poll: the driver is taken to run on (a warning is
logged) until the master says otherwise.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from streamjobs.domain.errors import StreamjobsError
from streamjobs.launch.base import (
    AttemptSpec,
    DriverHandle,
    DriverHealth,
    DriverState,
    InvalidLaunch,
    LaunchFailed,
)
from streamjobs.launch.cluster_request import submission_request
from streamjobs.launch.command import Toolchain
from streamjobs.launch.driver_process import LAUNCH_FILE, _check_attempt, _prepare_directory
from streamjobs.launch.master_applications import end_application
from streamjobs.launch.rest_submission import (
    SUBMISSION_ID,
    MasterUnreachable,
    RestSubmissionClient,
    RestSubmissionError,
    SubmissionStatus,
)
from streamjobs.launch.worker_logs import (
    APPLICATION_ID,
    ClusterWorkers,
    LocalLog,
    LogSource,
    Worker,
    WorkerLog,
    driver_logs_at,
)

log = logging.getLogger(__name__)

CLUSTER_MODE = "cluster"
DRIVER_LOG_TAILS = {"driver": "driver-stderr.tail", "driver-stdout": "driver-stdout.tail"}
"""The ends of a cluster-mode driver's stderr and stdout, copied from its worker when it ended
badly, by log name."""
TAIL_BYTES = 64 * 1024
HEAD_BYTES = 1024 * 1024
"""How much of the start of the driver's log is searched for its UI port and application id."""
LOCATE_INTERVAL_SECONDS = 5.0
"""How often the head of a driver's log is read again while its UI port is not in it."""
UI_STARTED = re.compile(rb"Successfully started service 'SparkUI' on port (\d{1,5})\b")
REGISTERED = re.compile(rb"Connected to Spark cluster with app ID (app-[0-9]+-[0-9]+)")
USER_EXIT = re.compile(r"User application exited with (\d{1,3})\b")
"""What Spark's ``PythonRunner`` says as it passes on a Python program's exit code."""
KILLED_EXIT_CODE = 128 + 15
"""A killed driver's code, as a shell reports the SIGTERM its worker ends it with."""
FAILED_EXIT_CODE = 1
"""A failed driver's code when its log does not name one: the worker says only "not 0"."""


@runtime_checkable
class DriverLocator(Protocol):
    """A launcher whose drivers' addresses are known only once they run.

    Contract: ``locate`` returns ``handle`` with the ``driver_host`` and ``ui_port`` found since
    it was made (unchanged while none are); it never raises and never blocks for long.
    """

    def locate(self, handle: DriverHandle) -> DriverHandle: ...


@dataclass
class _Learnt:
    """What this server process learnt of one cluster-mode driver."""

    worker_id: str | None = None
    worker_host: str | None = None
    ui_port: int = 0
    scanned_at: float = -math.inf
    master_silent: bool = False
    application_id: str | None = None
    application_scanned_at: float = -math.inf


class ClusterDrivers:
    """The cluster-mode drivers of the standalone master ``master_url``, through its REST
    submission server at ``rest_url``; its web UI at ``master_web_url`` says where its
    workers' web UIs are (see the module)."""

    def __init__(
        self,
        *,
        master_url: str,
        rest_url: str,
        master_web_url: str,
        toolchain: Callable[[], Toolchain],
    ) -> None:
        self.master_url = master_url
        self.submissions = RestSubmissionClient(rest_url)
        self.workers = ClusterWorkers(master_web_url)
        self._toolchain = toolchain
        self._learnt: dict[str, _Learnt] = {}

    def submit(self, attempt: AttemptSpec) -> DriverHandle:
        if attempt.standby:
            raise InvalidLaunch(
                f"job {attempt.job.name!r}: spec.instance.standby needs a driver on this server "
                "(local or client mode); a cluster-mode driver cannot be held as a standby"
            )
        _check_attempt(attempt)
        toolchain = self._toolchain()
        request = submission_request(
            attempt,
            master=self.master_url,
            toolchain=toolchain,
            spark_version=metadata.version("pyspark"),
        )
        directory = attempt.directory
        try:
            _prepare_directory(attempt)
            for tail in DRIVER_LOG_TAILS.values():
                (directory / tail).unlink(missing_ok=True)
            _write_launch(directory, attempt.fence, self.master_url, None)
        except OSError as error:
            raise LaunchFailed(
                f"cannot prepare the attempt directory {directory}: {error}"
            ) from None
        try:
            submission_id = self.submissions.create(request)
        except MasterUnreachable as error:
            raise LaunchFailed(
                f"cannot submit the driver of {attempt.job.name!r} in cluster mode: {error.detail}"
            ) from None
        except RestSubmissionError as error:
            raise LaunchFailed(error.detail) from None
        try:
            _write_launch(directory, attempt.fence, self.master_url, submission_id)
        except OSError as error:
            self._kill(submission_id)
            raise LaunchFailed(
                f"the driver {submission_id} was submitted and killed again: its id could not "
                f"be written to the attempt directory {directory}: {error}"
            ) from None
        return self.handle(directory, submission_id)

    def handle(self, directory: Path, submission_id: str) -> DriverHandle:
        """The handle of the driver ``submission_id`` whose attempt directory is ``directory``."""
        return DriverHandle(
            pid=0,
            started_at=time.time(),
            directory=str(directory),
            ui_port=0,
            master=self.master_url,
            driver_host="",
            submission_id=submission_id,
        )

    def poll(self, handle: DriverHandle) -> DriverHealth:
        submission_id = _submission_of(handle)
        learnt = self._learnt.setdefault(submission_id, _Learnt())
        try:
            status = self.submissions.status(submission_id)
        except RestSubmissionError as error:
            if not learnt.master_silent:
                log.warning("driver %s taken to run on: %s", submission_id, error.detail)
            learnt.master_silent = True
            return DriverHealth(DriverState.RUNNING)
        learnt.master_silent = False
        if not status.found:
            log.warning(
                "the Spark master does not know driver %s (any more); taken as ended",
                submission_id,
            )
            return DriverHealth(DriverState.EXITED, None)
        self._learn(handle, learnt, status)
        if status.running:
            self._learn_application(handle, learnt)
            return DriverHealth(DriverState.RUNNING)
        if status.driver_state == "ERROR":
            self._end_orphaned_application(handle, learnt)
        return DriverHealth(DriverState.EXITED, self._exit_code(handle, status))

    def abort(self, handle: DriverHandle) -> None:
        self._kill(_submission_of(handle))

    def kill(self, handle: DriverHandle) -> None:
        """The same as ``abort``: the worker ends the driver with SIGTERM, then SIGKILL after
        its own grace period (``spark.worker.driverTerminateTimeout``)."""
        self._kill(_submission_of(handle))

    def locate(self, handle: DriverHandle) -> DriverHandle:
        if handle.submission_id is None or (handle.ui_port and handle.driver_host):
            return handle
        learnt = self._learnt.setdefault(handle.submission_id, _Learnt())
        if learnt.worker_host is None:
            return handle
        if not learnt.ui_port and time.monotonic() - learnt.scanned_at >= LOCATE_INTERVAL_SECONDS:
            learnt.scanned_at = time.monotonic()
            found = UI_STARTED.search(self._driver_log_head(handle))
            learnt.ui_port = int(found.group(1)) if found else 0
        return replace(handle, driver_host=learnt.worker_host, ui_port=learnt.ui_port)

    def spark_application_id(self, handle: DriverHandle) -> str | None:
        """The application id the driver logged as it registered with the master."""
        found = REGISTERED.search(self._driver_log_head(handle))
        return found.group(1).decode("ascii") if found else None

    def driver_logs(self, handle: DriverHandle) -> dict[str, LogSource]:
        """``driver`` and ``driver-stdout`` on the driver's worker; the copies of their ends in
        the attempt directory when the worker cannot be found."""
        worker = self._worker(handle)
        if worker is not None and handle.submission_id is not None:
            return driver_logs_at(worker, handle.submission_id)
        directory = Path(handle.directory)
        return {
            name: LocalLog(directory / tail)
            for name, tail in DRIVER_LOG_TAILS.items()
            if (directory / tail).is_file()
        }

    def recover(self, directory: Path, fence: str) -> DriverHandle | DriverHealth:
        """The driver submitted for the attempt of ``fence``, as ``launch.json`` names it: its
        handle unless the master says it ended. One never submitted (the server stopped before
        the master answered) is EXITED with no code."""
        launch = _read_launch(directory)
        submission_id = launch.get("submission_id")
        if not fence or launch.get("fence") != fence or not isinstance(submission_id, str):
            return DriverHealth(DriverState.EXITED, None)
        if not SUBMISSION_ID.fullmatch(submission_id):
            return DriverHealth(DriverState.EXITED, None)
        handle = self.handle(directory, submission_id)
        health = self.poll(handle)
        return handle if health.state is DriverState.RUNNING else health

    def _learn(self, handle: DriverHandle, learnt: _Learnt, status: SubmissionStatus) -> None:
        """Keep where the driver runs, here and in the attempt directory (for log reading
        after the master has forgotten the driver)."""
        if status.worker_id is None or status.worker_id == learnt.worker_id:
            return
        learnt.worker_id, learnt.worker_host = status.worker_id, status.worker_host
        learnt.ui_port, learnt.scanned_at = 0, -math.inf  # a relaunched driver starts afresh
        _update_launch(handle, worker_id=status.worker_id)

    def _learn_application(self, handle: DriverHandle, learnt: _Learnt) -> None:
        """Find the driver's Spark application id in its log (every few seconds until it is
        there) and keep it in the attempt directory, for ``_end_orphaned_application``."""
        if learnt.application_id is not None:
            return
        if time.monotonic() - learnt.application_scanned_at < LOCATE_INTERVAL_SECONDS:
            return
        learnt.application_scanned_at = time.monotonic()
        learnt.application_id = self.spark_application_id(handle)
        if learnt.application_id is not None:
            _update_launch(handle, application_id=learnt.application_id)

    def _end_orphaned_application(self, handle: DriverHandle, learnt: _Learnt) -> None:
        """Ask the master to end the Spark application of a driver lost with its worker (see
        the module), so that its executors free their cores."""
        application_id = learnt.application_id or _read_launch(Path(handle.directory)).get(
            "application_id"
        )
        if not isinstance(application_id, str) or not APPLICATION_ID.fullmatch(application_id):
            return
        problem = end_application(self.workers.master_web_url, application_id)
        if problem is not None:
            log.warning(
                "cannot end application %s of driver %s, lost with its worker: %s; its "
                "executors keep their cores until they give up on their driver",
                application_id,
                handle.submission_id,
                problem,
            )
            return
        log.info(
            "driver %s was lost with its worker: its application %s was ended at the master",
            handle.submission_id,
            application_id,
        )

    def _exit_code(self, handle: DriverHandle, status: SubmissionStatus) -> int | None:
        """FINISHED 0; KILLED as by SIGTERM; FAILED the code the driver's log names, else 1;
        ERROR (the worker could not start it, or was lost) None. The ends of the logs of a
        driver that did not finish are copied into the attempt directory first."""
        if status.driver_state == "FINISHED":
            return 0
        stderr = self._keep_log_tails(handle, status)
        if status.driver_state == "KILLED":
            return KILLED_EXIT_CODE
        if status.driver_state == "FAILED":
            named = USER_EXIT.findall(stderr)
            return int(named[-1]) if named else FAILED_EXIT_CODE
        return None

    def _keep_log_tails(self, handle: DriverHandle, status: SubmissionStatus) -> str:
        """Copy the ends of the driver's stderr and stdout into the attempt directory, once;
        the stderr copy, with the master's own word on the driver's end (an exception on the
        worker) after it."""
        directory = Path(handle.directory)
        stderr_copy = directory / DRIVER_LOG_TAILS["driver"]
        if stderr_copy.is_file():
            return LocalLog(stderr_copy).tail_text(TAIL_BYTES)
        sources = self.driver_logs(handle)
        texts = {}
        for name, tail in DRIVER_LOG_TAILS.items():
            source = sources.get(name)
            text = source.tail_text(TAIL_BYTES) if isinstance(source, WorkerLog) else ""
            if name == "driver" and status.message:
                text += f"\n{status.message}\n"
            texts[tail] = text
        with contextlib.suppress(OSError):
            for tail, text in texts.items():
                (directory / tail).write_text(text, encoding="utf-8")
        return texts[DRIVER_LOG_TAILS["driver"]]

    def _driver_log_head(self, handle: DriverHandle) -> bytes:
        source = self.driver_logs(handle).get("driver")
        if not isinstance(source, WorkerLog):
            return b""
        try:
            return source.read_range(0, HEAD_BYTES)
        except StreamjobsError:
            return b""

    def _worker(self, handle: DriverHandle) -> Worker | None:
        """The worker the driver runs (or ran) on, as the master lists it."""
        if handle.submission_id is None:
            return None
        learnt = self._learnt.setdefault(handle.submission_id, _Learnt())
        worker_id = learnt.worker_id or _read_launch(Path(handle.directory)).get("worker_id")
        if worker_id is None:
            with contextlib.suppress(RestSubmissionError):
                worker_id = self.submissions.status(handle.submission_id).worker_id
        workers = self.workers.listed() if isinstance(worker_id, str) else None
        return (workers or {}).get(str(worker_id))

    def _kill(self, submission_id: str) -> None:
        try:
            self.submissions.kill(submission_id)
        except RestSubmissionError as error:
            log.warning("cannot ask the master to kill %s: %s", submission_id, error.detail)


def is_cluster_launch(directory: Path) -> bool:
    """Whether the attempt in ``directory`` was submitted in cluster mode."""
    return _read_launch(directory).get("deploy_mode") == CLUSTER_MODE


def _write_launch(directory: Path, fence: str, master: str, submission_id: str | None) -> None:
    launch: dict[str, Any] = {"fence": fence, "master": master, "deploy_mode": CLUSTER_MODE}
    if submission_id is not None:
        launch["submission_id"] = submission_id
    (directory / LAUNCH_FILE).write_text(json.dumps(launch), encoding="utf-8")


def _update_launch(handle: DriverHandle, **learnt: str) -> None:
    """Add what was learnt of the handle's driver to its ``launch.json``."""
    directory = Path(handle.directory)
    launch = _read_launch(directory)
    if launch.get("submission_id") == handle.submission_id:
        launch.update(learnt)
        with contextlib.suppress(OSError):
            (directory / LAUNCH_FILE).write_text(json.dumps(launch), encoding="utf-8")


def _read_launch(directory: Path) -> dict[str, Any]:
    try:
        launch = json.loads((directory / LAUNCH_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return launch if isinstance(launch, dict) else {}


def _submission_of(handle: DriverHandle) -> str:
    if handle.submission_id is None:
        raise LaunchFailed(f"the driver in {handle.directory} was not submitted in cluster mode")
    return handle.submission_id
