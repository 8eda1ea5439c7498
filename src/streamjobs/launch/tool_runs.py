"""Short-lived Spark tools beside a pipeline: ``spark-submit runner/tool_main.py <tool> ...``.

Some questions about a job only Spark can answer: whether a new spec fits the job's checkpoint
(the ``dry-run`` tool), what its state holds (``state``). The server asks them by running a tool,
a small Spark application (``local[1]``, little memory), under the same rules as the job's
driver: its command line and environment built as a driver's (``launch.command``: the job's
Spark settings and connectors, an environment from an allow-list plus the job's secrets), in a
sandbox (``launch.tool_sandbox``) as the job's account, seeing nothing of the server's but the
run's own directories. A tool writes its answer as JSON to ``<directory>/result.json``; the
runner reads it without following links and never more than ``MAX_RESULT_BYTES``, since the
job's account wrote it. At the timeout the tool's whole process group gets SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from streamjobs.domain.connections import Connection
from streamjobs.domain.manifest import StreamingJob
from streamjobs.launch.attempt_cleanup import remove_private_files
from streamjobs.launch.attempt_directory import (
    CONNECTIONS_FILE,
    MANIFEST_FILE,
    SECRET_CONF_FILE,
    attempt_files,
    private_files,
)
from streamjobs.launch.base import AttemptSpec, LaunchFailed, NodeSize
from streamjobs.launch.command import (
    DriverCommand,
    Toolchain,
    check_secret_settings,
    driver_environment,
    local_master,
    spark_settings,
)
from streamjobs.launch.tool_sandbox import WORK_TMP, ToolSandbox
from streamjobs.launch.wrapper import exit_code_of

RESULT_FILE = "result.json"
MAX_RESULT_BYTES = 4 * 1024 * 1024
STDERR_TAIL_CHARACTERS = 4000
TOOL_DRIVER = NodeSize(cores=1, memory_mb=1024)
GRACE_SECONDS = 10.0
"""Between SIGTERM and SIGKILL at a tool's timeout."""
MAX_CONCURRENT_RUNS = 2
"""Tools running at once; another waits for one of them (within its own timeout)."""


@dataclass(frozen=True)
class ToolRun:
    """One run of a tool for one job.

    The runner writes the job's manifest and connections into ``directory`` (``manifest_file``,
    ``connections_file``: the tool's arguments may name them) and runs
    ``tool_main.py <tool> --result-file <directory>/result.json <arguments...>``.
    """

    tool: str
    """``dry-run`` or ``state``."""
    job: StreamingJob
    """The job as resolved (its checkpoint location filled in)."""
    arguments: list[str]
    """The tool's own arguments."""
    directory: Path
    """A fresh directory the server made for this run: the tool's files and answer, its
    temporary files; the tool may write there. The caller removes it afterwards."""
    readable: list[str]
    """Host directories the tool sees read-only (e.g. the job's checkpoint)."""
    writable: list[str]
    """Host directories the tool may write besides ``directory`` (handed to the job's account)."""
    timeout_seconds: float = 180.0
    connections: Sequence[Connection] = ()
    secrets: Mapping[str, str] = field(default_factory=dict)
    """Environment variables holding secrets (``envSecrets``, connections' secrets)."""
    spark_conf_secrets: Mapping[str, str] = field(default_factory=dict)
    run_as: str = "streamjobs"
    """The identity the job's driver runs as: the tool runs as its account too."""
    data_roots: tuple[str, ...] = ()
    """The job's bundle's data roots, which the tool may read (never write)."""
    packaged_jars: tuple[str, ...] | None = None
    """The server-resolved jars of the job's packages, as a driver gets them (None: resolve)."""

    @property
    def result_file(self) -> Path:
        return self.directory / RESULT_FILE


@dataclass(frozen=True)
class ToolResult:
    """How a tool run ended: its exit code (None when killed at the timeout, or never started),
    its answer (None when it wrote none that reads as a JSON object), the end of its log."""

    exit_code: int | None
    result: dict[str, Any] | None
    stderr_tail: str
    timed_out: bool


class ToolRunner(Protocol):
    """Runs a tool to its end.

    Contract: ``run`` blocks until the tool has exited or been killed at
    ``run.timeout_seconds`` (its whole process group: nothing of it outlives ``run``), and
    returns how it ended; it raises ``LaunchFailed`` only when the tool could not be started
    (no sandbox, a path it may not bind). It writes only into ``run.directory`` (and what the
    tool writes in ``run.writable``); it never touches the job's running application.
    """

    def run(self, run: ToolRun) -> ToolResult: ...


def manifest_file(directory: Path) -> Path:
    """Where the runner writes the run's job manifest."""
    return directory / MANIFEST_FILE


def connections_file(directory: Path) -> Path:
    """Where the runner writes the run's connections (only when it has any)."""
    return directory / CONNECTIONS_FILE


class SparkSubmitToolRunner:
    """Runs tools with ``spark-submit --master local[1]`` on this machine, sandboxed."""

    def __init__(
        self,
        *,
        toolchain: Toolchain | None = None,
        environment: Mapping[str, str] | None = None,
        sandbox: ToolSandbox | None = None,
        driver: NodeSize = TOOL_DRIVER,
        max_concurrent: int = MAX_CONCURRENT_RUNS,
    ) -> None:
        """As ``SparkSubmitLauncher``: ``environment`` gives the few variables tools inherit
        (default: the server's); ``sandbox`` None runs them bare (isolation off)."""
        self._toolchain = toolchain
        self._environment = environment
        self._sandbox = sandbox
        self._driver = driver
        self._slots = threading.BoundedSemaphore(max_concurrent)

    @property
    def toolchain(self) -> Toolchain:
        if self._toolchain is None:
            self._toolchain = Toolchain.installed()
        return self._toolchain

    def run(self, run: ToolRun) -> ToolResult:
        if not self._slots.acquire(timeout=run.timeout_seconds):
            busy = f"{run.tool} did not start: other tools ran for longer than its timeout"
            return ToolResult(exit_code=None, result=None, stderr_tail=busy, timed_out=True)
        try:
            return self._run(run)
        finally:
            self._slots.release()

    def _run(self, run: ToolRun) -> ToolResult:
        attempt = _attempt_of(run, self._driver)
        try:
            _write_files(attempt)
        except OSError as error:
            raise LaunchFailed(f"cannot prepare {run.directory} for {run.tool}: {error}") from None
        try:
            command = tool_command(
                run,
                toolchain=self.toolchain,
                base_environment=os.environ if self._environment is None else self._environment,
                driver=self._driver,
            )
            if self._sandbox is not None:
                command = self._sandbox.enclose_tool(
                    attempt, command, readable=run.readable, writable=run.writable
                )
            else:
                (run.directory / WORK_TMP).mkdir(exist_ok=True)
            with tempfile.TemporaryFile() as log:
                exit_code, timed_out = _run_to_end(command, run, log)
                tail = _tail(log)
        finally:
            remove_private_files(run.directory)
        result = None if timed_out else read_result(run.result_file)
        return ToolResult(exit_code=exit_code, result=result, stderr_tail=tail, timed_out=timed_out)


def tool_command(
    run: ToolRun, *, toolchain: Toolchain, base_environment: Mapping[str, str], driver: NodeSize
) -> DriverCommand:
    """The spark-submit command line and environment of ``run``: a driver's, with the tool as
    the application and no UI."""
    attempt = _attempt_of(run, driver)
    master = local_master(driver)
    settings = dict(spark_settings(attempt, master=master, ui_port=0, toolchain=toolchain))
    settings["spark.ui.enabled"] = "false"
    argv = [str(toolchain.spark_submit), "--master", master]
    argv += ["--driver-memory", f"{driver.memory_mb}m"]
    java_options = run.job.spec.configuration.java_options
    if java_options:
        argv += ["--driver-java-options", java_options]
    for key, value in settings.items():
        argv += ["--conf", f"{key}={value}"]
    if run.spark_conf_secrets:
        check_secret_settings(attempt)
        argv += ["--properties-file", str(run.directory / SECRET_CONF_FILE)]
        argv += ["--load-spark-defaults"]
    entry = toolchain.runner_entry.with_name("tool_main.py")
    argv += [str(entry), run.tool, "--result-file", str(run.result_file), *run.arguments]
    environment = driver_environment(attempt, toolchain, base_environment)
    tmp = str(run.directory / WORK_TMP)
    environment.update({"TMPDIR": tmp, "SPARK_LOCAL_DIRS": tmp})
    return DriverCommand(argv=tuple(argv), environment=environment)


def read_result(path: Path) -> dict[str, Any] | None:
    """The JSON object at ``path``; None when there is none, it is a link or anything but a
    regular file, larger than ``MAX_RESULT_BYTES``, or not a JSON object (the job's account
    wrote it)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # none, a link (ELOOP), or one the tool made unreadable
        return None
    with os.fdopen(descriptor, "rb") as answer:
        status = os.fstat(answer.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_RESULT_BYTES:
            return None
        data = answer.read(MAX_RESULT_BYTES + 1)
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return document if isinstance(document, dict) else None


class FakeToolRunner:
    """For tests of what uses tools: records each run and answers as ``answer`` says (by
    default an exit code 0 and an empty answer)."""

    def __init__(self, answer: Callable[[ToolRun], ToolResult] | None = None) -> None:
        self.runs: list[ToolRun] = []
        self._answer = answer or (lambda run: ToolResult(0, {}, "", timed_out=False))

    def run(self, run: ToolRun) -> ToolResult:
        self.runs.append(run)
        return self._answer(run)


def _attempt_of(run: ToolRun, driver: NodeSize) -> AttemptSpec:
    """The run as the attempt of a driver would be: what the command and the sandbox read."""
    return AttemptSpec(
        application_id=f"tool-{run.tool}",
        attempt=1,
        job=run.job,
        directory=run.directory,
        driver=driver,
        connections=run.connections,
        secrets=run.secrets,
        spark_conf_secrets=run.spark_conf_secrets,
        run_as=run.run_as,
        data_roots=run.data_roots,
        packaged_jars=run.packaged_jars,
    )


def _write_files(attempt: AttemptSpec) -> None:
    """The manifest and connections for the tool; the Spark settings from secrets for
    spark-submit alone (mode 600 from the start)."""
    for name, content in attempt_files(attempt).items():
        (attempt.directory / name).write_text(content, encoding="utf-8")
    for name, content in private_files(attempt).items():
        path = attempt.directory / name
        path.unlink(missing_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(content)


def _run_to_end(command: DriverCommand, run: ToolRun, log: IO[bytes]) -> tuple[int | None, bool]:
    """Run ``command`` in a session of its own until it exits or the run's timeout; then
    SIGTERM to its group, SIGKILL after ``GRACE_SECONDS``. Its exit code, and whether it timed
    out."""
    try:
        child = subprocess.Popen(
            command.argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=command.environment,
            cwd=run.directory,
            start_new_session=True,
        )
    except OSError as error:
        raise LaunchFailed(f"cannot start the {run.tool} tool: {error}") from None
    try:
        return exit_code_of(child.wait(timeout=run.timeout_seconds)), False
    except subprocess.TimeoutExpired:
        _signal_group(child.pid, signal.SIGTERM)
        try:
            child.wait(timeout=GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            _signal_group(child.pid, signal.SIGKILL)
            child.wait()
        return None, True
    finally:
        if child.poll() is None:  # interrupted while waiting: leave nothing behind
            _signal_group(child.pid, signal.SIGKILL)
            child.wait()


def _signal_group(group: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, number)


def _tail(log: IO[bytes]) -> str:
    log.seek(0, os.SEEK_END)
    size = log.tell()
    log.seek(max(size - STDERR_TAIL_CHARACTERS * 4, 0))
    text = log.read().decode("utf-8", errors="replace")
    return text[-STDERR_TAIL_CHARACTERS:]
