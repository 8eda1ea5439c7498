"""A Spark driver as a process group on this machine: what the local and standalone launchers share.

Both run ``spark-submit`` here (a standalone cluster's drivers run in client mode, on the
server's machine); they differ only in the master and in where executors' logs are. The driver
is started under the wrapper (``launch.wrapper``) in a new session, so it is the leader of its
own process group, survives a restart of the server, and leaves its exit code in a file.

Everything a later server process needs is in the ``DriverHandle`` and the attempt directory:
the pid with its start time (a pid the system gave to another process is not mistaken for the
driver) and the files the wrapper and the driver write.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import socket
import stat
import subprocess
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

import psutil
import yaml

from streamjobs.domain.manifest import ApplicationType
from streamjobs.domain.snapshots import SNAPSHOT_REQUEST_FILE, SnapshotRequest
from streamjobs.launch.attempt_directory import (
    EXIT_CODE_FILE,
    MANIFEST_FILE,
    PROMOTE_FILE,
    SECRET_CONF_FILE,
    STDERR_FILE,
    STDOUT_FILE,
    STOP_FILE,
    WORK_DIRECTORY,
    attempt_files,
    private_files,
    standby_ready_path,
)
from streamjobs.launch.base import (
    AttemptSpec,
    DriverHandle,
    DriverHealth,
    DriverState,
    LaunchFailed,
)
from streamjobs.launch.command import (
    Toolchain,
    addresses_of_driver,
    paths_to_check,
    spark_submit_command,
    wrapped,
)
from streamjobs.launch.driver_addresses import LOOPBACK_DRIVER, DriverAddresses
from streamjobs.launch.ports import free_loopback_port
from streamjobs.launch.sandbox import BWRAP as SANDBOX_PROGRAM
from streamjobs.launch.sandbox_host import Sandbox
from streamjobs.launch.wrapper import read_exit_code

START_TIME_TOLERANCE = 0.5
"""Seconds two readings of one process's start time may differ by."""

LAUNCH_FILE = "launch.json"
"""What ``recover`` needs besides the pid: the attempt's fence, the driver's UI port, its master."""


class SparkSubmitLauncher:
    """Starts drivers with ``spark-submit`` on this machine and watches them by pid.

    Subclasses say which master a job's driver connects to (``master_for``) and may add
    executors' logs (``log_files``).
    """

    def __init__(
        self,
        *,
        toolchain: Toolchain | None = None,
        environment: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
        driver_addresses: DriverAddresses = LOOPBACK_DRIVER,
    ) -> None:
        """``environment`` is where drivers' environments take the few variables they inherit
        (default: the server's); ``sandbox`` encloses every driver (None: drivers run bare,
        only for tests of the launcher itself and ``streamjobs`` run without isolation);
        ``driver_addresses`` are those of drivers of a cluster (``launch.driver_addresses``)."""
        self.driver_addresses = driver_addresses
        self._toolchain = toolchain
        self._environment = environment
        self._sandbox = sandbox
        self._children: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def toolchain(self) -> Toolchain:
        if self._toolchain is None:
            self._toolchain = Toolchain.installed()
        return self._toolchain

    def master_for(self, attempt: AttemptSpec) -> str:
        raise NotImplementedError

    def submit(self, attempt: AttemptSpec) -> DriverHandle:
        master = self.master_for(attempt)
        _check_attempt(attempt)
        ui_port = free_loopback_port()
        command = spark_submit_command(
            attempt,
            master=master,
            ui_port=ui_port,
            toolchain=self.toolchain,
            base_environment=os.environ if self._environment is None else self._environment,
            driver_addresses=self.driver_addresses,
        )
        driver_host = addresses_of_driver(master, self.driver_addresses).host
        directory = attempt.directory
        try:
            _prepare_directory(attempt)
        except OSError as error:
            raise LaunchFailed(
                f"cannot prepare the attempt directory {directory}: {error}"
            ) from None
        if self._sandbox is not None:
            command = self._sandbox.enclose(attempt, command)
        argv = wrapped(
            command,
            python=self.toolchain.python,
            exit_code_file=directory / EXIT_CODE_FILE,
            fence=attempt.fence,
        )
        launch = {
            "fence": attempt.fence,
            "ui_port": ui_port,
            "master": master,
            "driver_host": driver_host,
        }
        (directory / LAUNCH_FILE).write_text(json.dumps(launch), encoding="utf-8")
        try:
            with (
                open(directory / STDOUT_FILE, "ab") as stdout,
                open(directory / STDERR_FILE, "ab") as stderr,
            ):
                child = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    env=command.environment,
                    start_new_session=True,
                )
        except OSError as error:
            raise LaunchFailed(
                f"cannot start the driver of {attempt.job.name!r}: {error}"
            ) from None
        self._children[child.pid] = child
        return DriverHandle(
            pid=child.pid,
            started_at=_start_time(child.pid),
            directory=str(directory),
            ui_port=ui_port,
            master=master,
            driver_host=driver_host,
            launched_on=socket.gethostname(),
        )

    def poll(self, handle: DriverHandle) -> DriverHealth:
        self._reap(handle.pid)
        if _leader_alive(handle) or _stragglers(handle):
            return DriverHealth(DriverState.RUNNING)
        exit_code = read_exit_code(Path(handle.directory) / EXIT_CODE_FILE)
        return DriverHealth(DriverState.EXITED, exit_code)

    def stop(self, handle: DriverHandle, *, snapshot: SnapshotRequest | None = None) -> None:
        """A pipeline's runner watches for the stop file (which holds the snapshot to take
        before it exits, if any); other programs get SIGTERM, which spark-submit and the JVM
        take as the request to shut down."""
        directory = Path(handle.directory)
        if not _stops_by_file(directory):
            self.abort(handle)
        elif snapshot is None:
            (directory / STOP_FILE).touch()
        else:
            _write_for_driver(directory / STOP_FILE, json.dumps(snapshot.to_wire()))

    def request_snapshot(self, handle: DriverHandle, request: SnapshotRequest) -> None:
        """Write the request where a pipeline's runner looks for it; nothing for other programs,
        or when the attempt directory is gone."""
        directory = Path(handle.directory)
        if _stops_by_file(directory):
            with contextlib.suppress(FileNotFoundError):
                _write_for_driver(directory / SNAPSHOT_REQUEST_FILE, json.dumps(request.to_wire()))

    def promote(self, handle: DriverHandle, *, start_at: datetime) -> None:
        """Write the promotion where a standby's runner looks for it, whole (see
        ``Launcher.promote``); nothing when the attempt directory is gone."""
        with contextlib.suppress(FileNotFoundError):
            promotion = json.dumps({"startAt": start_at.isoformat()})
            _write_for_driver(Path(handle.directory) / PROMOTE_FILE, promotion)

    def standby_ready(self, handle: DriverHandle) -> bool:
        """Whether the standby's runner wrote its ready file: a plain file there (the directory
        is the driver's, so only its kind is trusted, never where a link would lead)."""
        return _is_plain_file(standby_ready_path(Path(handle.directory)))

    def abort(self, handle: DriverHandle) -> None:
        _signal_group(handle, signal.SIGTERM)

    def kill(self, handle: DriverHandle) -> None:
        _signal_group(handle, signal.SIGKILL)
        self._reap(handle.pid)

    def log_files(self, handle: DriverHandle) -> dict[str, Path]:
        directory = Path(handle.directory)
        candidates = {"driver": directory / STDERR_FILE, "driver-stdout": directory / STDOUT_FILE}
        return {name: path for name, path in candidates.items() if path.is_file()}

    def recover(self, directory: Path, fence: str) -> DriverHandle | DriverHealth:
        """The driver whose wrapper carries ``fence``, found among this machine's processes;
        else how it ended (see ``Launcher.recover``)."""
        try:
            launch = json.loads((directory / LAUNCH_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            launch = None
        if fence and isinstance(launch, dict) and launch.get("fence") == fence:
            for wrapper in _wrappers_carrying(fence):
                with contextlib.suppress(psutil.Error):
                    return DriverHandle(
                        pid=wrapper.pid,
                        started_at=float(wrapper.create_time()),
                        directory=str(directory),
                        ui_port=int(launch["ui_port"]),
                        master=str(launch["master"]),
                        driver_host=str(launch.get("driver_host", LOOPBACK_DRIVER.host)),
                        launched_on=socket.gethostname(),
                    )
        return DriverHealth(DriverState.EXITED, read_exit_code(directory / EXIT_CODE_FILE, fence))

    def _reap(self, pid: int) -> None:
        """Collect the exit of a driver this process started, so it is not left a zombie."""
        child = self._children.get(pid)
        if child is not None:
            if child.poll() is not None:
                del self._children[pid]
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _check_attempt(attempt: AttemptSpec) -> None:
    """What would make the driver fail at once: files missing here, a report URL without token."""
    missing = [path for path in paths_to_check(attempt.job) if not Path(path).exists()]
    if missing:
        raise LaunchFailed(
            f"job {attempt.job.name!r} needs files that do not exist on this machine: "
            + ", ".join(missing)
        )
    if attempt.report_url and not attempt.report_token:
        raise LaunchFailed(f"application {attempt.application_id} has a report URL but no token")


def _prepare_directory(attempt: AttemptSpec) -> None:
    """The attempt directory with the driver's files, and none left from an earlier start."""
    directory = attempt.directory
    directory.parent.parent.mkdir(parents=True, exist_ok=True)
    for private in (directory.parent, directory):
        private.mkdir(mode=0o700, exist_ok=True)
    for stale in (EXIT_CODE_FILE, STOP_FILE, SNAPSHOT_REQUEST_FILE, SECRET_CONF_FILE, PROMOTE_FILE):
        (directory / stale).unlink(missing_ok=True)
    if attempt.standby:  # its runner writes the ready file in its work directory
        work = directory / WORK_DIRECTORY
        if work.is_symlink():
            work.unlink()
        work.mkdir(mode=0o700, exist_ok=True)
        standby_ready_path(directory).unlink(missing_ok=True)
    for name, content in attempt_files(attempt).items():
        (directory / name).write_text(content, encoding="utf-8")
    for name, content in private_files(attempt).items():
        _write_private(directory / name, content)


def _write_private(path: Path, content: str) -> None:
    """Write a file only its owner can read, from its creation on."""
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(content)


def _write_for_driver(path: Path, content: str) -> None:
    """Write a file the driver (its own account, in its sandbox) may read, all at once: under a
    temporary name, then renamed, so the runner never reads it half-written."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(content)
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)


def _is_plain_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _start_time(pid: int) -> float:
    try:
        return float(psutil.Process(pid).create_time())
    except psutil.NoSuchProcess:
        # Only when the driver was reaped already, which only ``poll`` does: not yet.
        raise LaunchFailed(f"the driver process {pid} vanished as it started") from None


def _leader_alive(handle: DriverHandle) -> bool:
    """The wrapper still runs: same pid, same start time, not a zombie."""
    try:
        process = psutil.Process(handle.pid)
        return _is_ours(process, handle) and bool(process.status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def _is_ours(process: psutil.Process, handle: DriverHandle) -> bool:
    return abs(float(process.create_time()) - handle.started_at) < START_TIME_TOLERANCE


def _stragglers(handle: DriverHandle) -> list[psutil.Process]:
    """Live processes of the driver's group when its leader is gone without an exit code
    (the wrapper alone was killed): the driver has not ended while they run.

    While a process group has members, the system gives its id to no new process, so members
    found under the id of a leader that no longer exists are the driver's.
    """
    directory = Path(handle.directory)
    if (directory / EXIT_CODE_FILE).exists() or psutil.pid_exists(handle.pid):
        return []
    members = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if (
                os.getpgid(process.pid) == handle.pid
                and process.status() != psutil.STATUS_ZOMBIE
                and process.create_time() >= handle.started_at - START_TIME_TOLERANCE
            ):
                members.append(process)
    return members


def _wrappers_carrying(fence: str) -> list[psutil.Process]:
    """Live wrappers of the server's user whose command line names ``fence``: a job, running
    as its own account, cannot pose as one."""
    found = []
    for process in psutil.process_iter(["cmdline", "uids", "status"]):
        info = process.info
        arguments = info.get("cmdline") or []
        if (
            "streamjobs.launch.wrapper" in arguments
            and _follows(arguments, "--fence", fence)
            and info.get("uids") is not None
            and info["uids"].real == os.getuid()
            and info.get("status") != psutil.STATUS_ZOMBIE
        ):
            found.append(process)
    return found


def _follows(arguments: list[str], option: str, value: str) -> bool:
    return any(a == option and b == value for a, b in itertools.pairwise(arguments))


def _signal_group(handle: DriverHandle, number: signal.Signals) -> None:
    """Send ``number`` to the driver's whole process group; nothing when it is gone, or when
    its pid now belongs to another process.

    bubblewrap, which holds a sandboxed driver, is spared every signal but SIGKILL: it would die
    of SIGTERM and take the driver with it at once, where the driver, signalled itself, shuts
    down in order (and bubblewrap exits with its code).
    """
    try:
        leader = psutil.Process(handle.pid)
    except psutil.NoSuchProcess:
        leader = None
    if leader is not None and not _is_ours(leader, handle):
        return
    if number is signal.SIGKILL:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(handle.pid, number)
        return
    for process in _group_members(handle.pid):
        with contextlib.suppress(psutil.Error):
            if not _is_sandbox_monitor(process, handle):
                process.send_signal(number)


def _is_sandbox_monitor(process: psutil.Process, handle: DriverHandle) -> bool:
    """bubblewrap as the wrapper started it: the wrapper's own child, which the job (inside,
    as another process) cannot pose as by renaming itself."""
    return bool(process.ppid() == handle.pid and process.name() == SANDBOX_PROGRAM)


def _group_members(group: int) -> list[psutil.Process]:
    members = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getpgid(process.pid) == group:
                members.append(process)
    return members


def _stops_by_file(directory: Path) -> bool:
    """Whether the driver is the runner of a pipeline, which stops when the stop file appears."""
    try:
        manifest = yaml.safe_load((directory / MANIFEST_FILE).read_text(encoding="utf-8"))
        return bool(manifest["spec"]["application"]["type"] == ApplicationType.PIPELINE)
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return False
