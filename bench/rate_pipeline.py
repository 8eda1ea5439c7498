"""The rate -> parquet pipeline of figures 2 and 3, run bare, and how its commits are observed.

Both figures run ``examples/rate-to-parquet.yaml`` (Spark's rate source, 10 rows/s, the even
values kept, a Parquet file sink) with a 1-second processing-time trigger and its output and
checkpoint in the figure's scratch directory. streamjobs runs it through its server
(``bench.streamjobs_server``); the bare baseline is the same ``spark-submit`` of the same runner
with the same Spark settings, built here by the launcher's own ``spark_submit_command`` for an
attempt on the ``small`` driver node type, less what only a supervised driver has: no wrapper,
no server, no reporting, no stop file (``--manifest`` is its only argument).

A micro-batch is committed when Spark writes ``<checkpoint>/<output>/commits/<batch id>`` (to a
hidden temporary file, renamed into place). Both subjects are timed by that file's modification
time, so the polling interval does not count.
"""

from __future__ import annotations

import contextlib
import copy
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.run_directory import RunDirectory
from streamjobs.launch.base import AttemptSpec, NodeSize
from streamjobs.launch.command import (
    DriverCommand,
    Toolchain,
    local_master,
    spark_submit_command,
)
from streamjobs.launch.ports import free_loopback_port
from streamjobs.runner.main import load_job

REPOSITORY = Path(__file__).resolve().parent.parent
EXAMPLE = REPOSITORY / "examples" / "rate-to-parquet.yaml"
JOB = "bench-rate-to-parquet"
OUTPUT = "even_ticks"
"""The example's output (and query) name: its checkpoint is ``<checkpoint>/even_ticks``."""
TRIGGER = "1 second"
SMALL = NodeSize(cores=1, memory_mb=1024)
"""The ``small`` driver node type the store seeds, which a job without ``spec.instance`` gets."""
BARE_APPLICATION = "bench-bare"
POLL_SECONDS = 0.05


def keeps(value: int) -> bool:
    """Whether the example's query keeps a rate value (``WHERE value % 2 = 0``)."""
    return value % 2 == 0


class RatePaths(RunDirectory):
    """Where one run of the pipeline keeps its manifest, output, checkpoint and process output."""

    @property
    def commits(self) -> Path:
        return self.checkpoint / OUTPUT / "commits"


def job_manifest(paths: RatePaths, restart_policy: dict[str, Any] | None = None) -> dict[str, Any]:
    """The example job, writing into ``paths``, triggered every second."""
    job: dict[str, Any] = copy.deepcopy(yaml.safe_load(EXAMPLE.read_text(encoding="utf-8")))
    job["metadata"]["name"] = JOB
    pipeline = job["spec"]["pipeline"]
    pipeline["streaming"] = {
        "triggerMode": "ProcessingTime",
        "triggerDuration": TRIGGER,
        "checkpointLocation": paths.checkpoint.as_uri(),
    }
    (output,) = pipeline["outputs"]
    if output["name"] != OUTPUT:
        raise RuntimeError(f"{EXAMPLE} no longer writes output {OUTPUT!r}")
    output["path"] = paths.output.as_uri()
    if restart_policy is not None:
        job["spec"]["restartPolicy"] = restart_policy
    return job


def write_manifest(paths: RatePaths, restart_policy: dict[str, Any] | None = None) -> None:
    paths.directory.mkdir(parents=True, exist_ok=True)
    manifest = job_manifest(paths, restart_policy)
    paths.manifest.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")


def bare_command(paths: RatePaths) -> DriverCommand:
    """``spark-submit <runner> --manifest job.yaml`` with the settings and environment the
    launcher gives the job's driver (``local[1]``, ``--driver-memory 1024m``, its ``--conf``s)."""
    toolchain = Toolchain.installed()
    attempt = AttemptSpec(
        application_id=BARE_APPLICATION,
        attempt=1,
        job=load_job(str(paths.manifest), checkpoint_root=None),
        directory=paths.directory,
        driver=SMALL,
    )
    command = spark_submit_command(
        attempt,
        master=local_master(SMALL),
        ui_port=free_loopback_port(),
        toolchain=toolchain,
        base_environment=os.environ,
    )
    entry = command.argv.index(str(toolchain.runner_entry))
    argv = (*command.argv[: entry + 1], "--manifest", str(paths.manifest))
    return DriverCommand(argv=argv, environment=command.environment)


def start_bare(command: DriverCommand, paths: RatePaths, name: str) -> subprocess.Popen[bytes]:
    """Start the bare driver in its own session; its output goes to ``<name>.out``/``.err``."""
    with (
        (paths.directory / f"{name}.out").open("wb") as out,
        (paths.directory / f"{name}.err").open("wb") as err,
    ):
        return subprocess.Popen(
            list(command.argv),
            cwd=paths.directory,
            env=command.environment,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )


def kill_leader(process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """SIGKILL the process's whole group (its JVM and Python) and wait for the process itself:
    ``spark-submit`` execs the JVM, so this returns when a shell running it would go on."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=timeout)


def kill_group(process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """SIGKILL the process's whole group and wait until every process of it is gone."""
    kill_leader(process, timeout)
    wait_until_gone(process.pid, timeout=timeout)


def wait_until_gone(group: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"process group {group} still alive {timeout:g} s after SIGKILL")
        time.sleep(POLL_SECONDS)


def commit_ids(commits: Path) -> list[int]:
    """The committed batch ids, ascending (temporary and checksum files left out)."""
    try:
        names = [entry.name for entry in os.scandir(commits)]
    except FileNotFoundError:
        return []
    return sorted(int(name) for name in names if name.isdigit())


def last_commit(commits: Path) -> int:
    """The highest committed batch id, -1 when none is."""
    ids = commit_ids(commits)
    return ids[-1] if ids else -1


@dataclass(frozen=True)
class Commit:
    batch: int
    at: float
    """The commit file's modification time, seconds since the epoch."""


def wait_for_commit(
    commits: Path,
    *,
    after: int,
    timeout: float,
    alive: Callable[[], bool] = lambda: True,
) -> Commit:
    """The first commit of a batch id above ``after``; RuntimeError after ``timeout`` seconds
    or as soon as ``alive()`` says the subject is gone."""
    deadline = time.monotonic() + timeout
    while True:
        above = [batch for batch in commit_ids(commits) if batch > after]
        if above:
            batch = above[0]
            return Commit(batch, (commits / str(batch)).stat().st_mtime)
        if time.monotonic() > deadline:
            raise RuntimeError(f"no commit above batch {after} in {commits} after {timeout:g} s")
        if not alive():
            raise RuntimeError(f"the subject ended before committing a batch above {after}")
        time.sleep(POLL_SECONDS)


@dataclass(frozen=True)
class ValueCheck:
    """What a run's output holds against what the query should have written: ``lost`` are kept
    values below the highest one written that are missing, ``duplicated`` rows beyond the first
    of their value, ``unexpected`` values the query drops. Values lost after the highest one
    written cannot be seen."""

    rows: int
    distinct: int
    highest: int
    lost: int
    duplicated: int
    unexpected: int

    @property
    def exact(self) -> bool:
        return self.lost == 0 and self.duplicated == 0 and self.unexpected == 0


def check_values(values: Iterable[int], kept: Callable[[int], bool] = keeps) -> ValueCheck:
    """Compare the rate values found in an output with every value 0..highest that ``kept``
    selects; each should be there exactly once."""
    found = list(values)
    distinct = set(found)
    highest = max(distinct, default=-1)
    expected = {value for value in range(highest + 1) if kept(value)}
    return ValueCheck(
        rows=len(found),
        distinct=len(distinct),
        highest=highest,
        lost=len(expected - distinct),
        duplicated=len(found) - len(distinct),
        unexpected=len(distinct - expected),
    )


def command_differences(bare: Sequence[str], supervised: Sequence[str]) -> list[str]:
    """How a supervised driver's ``spark-submit`` command differs from the bare one: options
    and ``--conf`` settings with other values or on one side only, then the runner's flags one
    side alone has. What runs it (the wrapper, the sandbox) is left out."""
    submit = [index for index, item in enumerate(supervised) if item.endswith("spark-submit")]
    if submit:
        supervised = supervised[submit[0] :]
    bare_options, bare_flags = _parse_submit(bare)
    supervised_options, supervised_flags = _parse_submit(supervised)
    differences = []
    for key in sorted(bare_options.keys() | supervised_options.keys()):
        mine, theirs = bare_options.get(key), supervised_options.get(key)
        if mine != theirs:
            differences.append(f"{key}: bare {mine!r}, streamjobs {theirs!r}")
    for side, flags, others in (
        ("bare", bare_flags, supervised_flags),
        ("streamjobs", supervised_flags, bare_flags),
    ):
        alone = [flag for flag in flags if flag not in others]
        if alone:
            differences.append(f"runner flags of {side} only: {' '.join(alone)}")
    return differences


def _parse_submit(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """``spark-submit`` options (``--conf k=v`` as ``--conf k``), and the runner's flags after
    the application file. Every option spark-submit is given here takes a value."""
    options: dict[str, str] = {}
    index = 1
    while index < len(argv) and argv[index].startswith("--"):
        key, value = argv[index], argv[index + 1] if index + 1 < len(argv) else ""
        if key == "--conf":
            key, _, value = value.partition("=")
            key = f"--conf {key}"
        options[key] = value
        index += 2
    flags = [part for part in argv[index + 1 :] if part.startswith("--")]
    return options, flags
