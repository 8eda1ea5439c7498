"""The rate -> Parquet job of figures 2 and 3, its bare ``spark-submit``, and its commits."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.processes import RunPaths, signal_group, start, wait_until_gone
from streamjobs.launch.base import AttemptSpec, NodeSize
from streamjobs.launch.command import (
    DriverCommand,
    Toolchain,
    local_master,
    spark_submit_command,
)
from streamjobs.launch.ports import free_loopback_port
from streamjobs.runner.main import load_job

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "rate-to-parquet.yaml"
JOB = "bench-rate-to-parquet"
OUTPUT = "even_ticks"
TRIGGER = "1 second"
SMALL = NodeSize(cores=1, memory_mb=1024)
POLL_SECONDS = 0.05
TIMEOUT_SECONDS = 300.0


def keeps(value: int) -> bool:
    """Whether the example's query keeps a rate value (``WHERE value % 2 = 0``)."""
    return value % 2 == 0


class RatePaths(RunPaths):
    @property
    def commits(self) -> Path:
        return self.checkpoint / OUTPUT / "commits"


def job_manifest(
    paths: RatePaths,
    restart_policy: dict[str, Any] | None = None,
    instance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The example job, writing into ``paths``, triggered every second."""
    job: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
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
    if instance is not None:
        job["spec"]["instance"] = instance
    return job


def bare_command(paths: RatePaths) -> DriverCommand:
    """``spark-submit <runner> --manifest job.yaml`` with the settings and environment the
    launcher gives the job's driver (``local[1]``, ``--driver-memory 1024m``, its ``--conf``s)."""
    paths.directory.mkdir(parents=True, exist_ok=True)
    paths.manifest.write_text(yaml.safe_dump(job_manifest(paths), sort_keys=False))
    toolchain = Toolchain.installed()
    attempt = AttemptSpec(
        application_id="bench-bare",
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
    out, err = paths.directory / f"{name}.out", paths.directory / f"{name}.err"
    return start(command.argv, paths.directory, command.environment, out, err)


def kill_group(process: subprocess.Popen[bytes], *, wait_for_all: bool = True) -> None:
    """SIGKILL the process's group and wait for the process (``spark-submit`` execs the JVM, so
    that is when a shell running it would go on), then, unless told not to, for the whole group."""
    signal_group(process.pid)
    process.wait(timeout=60)
    if wait_for_all:
        wait_until_gone(process.pid)


def commit_ids(commits: Path) -> list[int]:
    """The committed batch ids, ascending (temporary and checksum files left out)."""
    try:
        names = [entry.name for entry in os.scandir(commits)]
    except FileNotFoundError:
        return []
    return sorted(int(name) for name in names if name.isdigit())


@dataclass(frozen=True)
class Commit:
    batch: int
    at: float


def wait_for_commit(
    commits: Path,
    *,
    after: int,
    timeout: float = TIMEOUT_SECONDS,
    alive: Callable[[], bool] = lambda: True,
) -> Commit:
    """The first commit of a batch id above ``after``; RuntimeError after ``timeout`` seconds
    or as soon as ``alive()`` says the subject is gone."""
    deadline = time.monotonic() + timeout
    while True:
        above = [batch for batch in commit_ids(commits) if batch > after]
        if above:
            return Commit(above[0], (commits / str(above[0])).stat().st_mtime)
        if time.monotonic() > deadline:
            raise RuntimeError(f"no commit above batch {after} in {commits} after {timeout:g} s")
        if not alive():
            raise RuntimeError(f"the subject ended before committing a batch above {after}")
        time.sleep(POLL_SECONDS)


@dataclass(frozen=True)
class ValueCheck:
    """An output against what the query should have written."""

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
    """The values found against every value 0..highest that ``kept`` selects, each once."""
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
    """How a supervised driver's ``spark-submit`` differs from the bare one."""
    submit = [index for index, item in enumerate(supervised) if item.endswith("spark-submit")]
    if submit:
        supervised = supervised[submit[0] :]
    (bare_options, bare_flags), (options, flags) = _parse_submit(bare), _parse_submit(supervised)
    differences = [
        f"{key}: bare {bare_options.get(key)!r}, streamjobs {options.get(key)!r}"
        for key in sorted(bare_options.keys() | options.keys())
        if bare_options.get(key) != options.get(key)
    ]
    for side, mine, others in (("bare", bare_flags, flags), ("streamjobs", flags, bare_flags)):
        alone = [flag for flag in mine if flag not in others]
        if alone:
            differences.append(f"runner flags of {side} only: {' '.join(alone)}")
    return differences


def _parse_submit(argv: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """``spark-submit`` options (``--conf k=v`` as ``--conf k``; each takes a value), and the
    runner's flags after the application file."""
    options: dict[str, str] = {}
    index = 1
    while index < len(argv) and argv[index].startswith("--"):
        key, value = argv[index], argv[index + 1] if index + 1 < len(argv) else ""
        if key == "--conf":
            key, _, value = value.partition("=")
            key = f"--conf {key}"
        options[key] = value
        index += 2
    return options, [part for part in argv[index + 1 :] if part.startswith("--")]
