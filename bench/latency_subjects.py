"""Figure 6's subjects, its triggers, and the processes that run them until told to stop."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.latency_samples import RECORD_SCHEMA, SQL, VIEW
from bench.processes import start
from bench.sandboxed_runner import sandboxed
from bench.throughput_subjects import RunPaths, shared_conf

BASELINE_SCRIPT = Path(__file__).resolve().parent / "latency_baseline.py"
CONNECTION = "bench-kafka"
OUTPUT = "kept"
MASTER = "local[2]"
STOP_GRACE_SECONDS = 3.0

STREAMJOBS = "streamjobs"
LOW_LATENCY = "streamjobs-low-latency"
BASELINE = "baseline"
LABELS = {
    STREAMJOBS: "(a) streamjobs",
    LOW_LATENCY: "(a') streamjobs low latency",
    BASELINE: "(b) hand-written PySpark",
}


@dataclass(frozen=True)
class Mode:
    """A trigger as the manifest declares it and as the hand-written script's ``--trigger``."""

    key: str
    label: str
    streaming: dict[str, str]
    baseline_trigger: str
    output_mode: str = "append"


DEFAULT = Mode("default", "unspecified trigger (back to back)", {}, "default")
PROCESSING_TIME_0 = Mode(
    "processing-time-0",
    "ProcessingTime 0",
    {"triggerMode": "ProcessingTime", "triggerDuration": "0 seconds"},
    "processingTime:0 seconds",
)
CONTINUOUS = Mode(
    "continuous",
    "Continuous 1 second",
    {"triggerMode": "Continuous", "triggerDuration": "1 second"},
    "continuous:1 second",
)
REAL_TIME = Mode(
    "real-time",
    "RealTime 5 minutes",
    {"triggerMode": "RealTime", "triggerDuration": "5 minutes"},
    "realTime:5 minutes",
    output_mode="update",
)
MODES = (DEFAULT, PROCESSING_TIME_0, CONTINUOUS, REAL_TIME)


@dataclass(frozen=True)
class Topics:
    input: str
    output: str


def job_manifest(
    paths: RunPaths, mode: Mode, topics: Topics, *, low_latency: bool = False
) -> dict[str, Any]:
    """The streamjobs manifest of the figure's pipeline, with ``mode``'s trigger."""
    streaming: dict[str, Any] = {**mode.streaming, "checkpointLocation": paths.checkpoint.as_uri()}
    if low_latency:
        streaming["lowLatency"] = True
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "bench-latency"},
        "spec": {
            "application": {"type": "pipeline"},
            "pipeline": {
                "logLevel": "ERROR",
                "streaming": streaming,
                "inputs": [
                    {
                        "name": VIEW,
                        "dataset": f"{CONNECTION}:{topics.input}",
                        "format": "kafkajson",
                        "schema": RECORD_SCHEMA,
                        "options": {"startingOffsets": "latest"},
                    }
                ],
                "steps": [{"sequence": [{"name": OUTPUT, "sql": SQL}]}],
                "outputs": [
                    {
                        "name": OUTPUT,
                        "dataset": f"{CONNECTION}:{topics.output}",
                        "format": "kafka",
                        "outputMode": mode.output_mode,
                    }
                ],
            },
        },
    }


def prepare(paths: RunPaths, subject: str, mode: Mode, topics: Topics) -> None:
    """The run's directory with its manifest (the plain one for the hand-written script, whose
    Spark settings come from it)."""
    paths.event_log.mkdir(parents=True)
    manifest = job_manifest(paths, mode, topics, low_latency=subject == LOW_LATENCY)
    paths.manifest.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")


def command(
    subject: str, paths: RunPaths, mode: Mode, topics: Topics, bootstrap_servers: str, work: Path
) -> tuple[list[str], dict[str, str]]:
    """The subject's command and the environment it adds, for a run prepared in ``paths``."""
    if subject != BASELINE:
        runner = [
            sys.executable,
            "-m",
            "streamjobs.runner",
            f"--manifest={paths.manifest}",
            f"--connections={work / 'connections.yaml'}",
            f"--master={MASTER}",
            f"--stop-file={stop_file(paths)}",
        ]
        return sandboxed(runner, paths, data_root=work)
    script = [
        sys.executable,
        str(BASELINE_SCRIPT),
        f"--bootstrap-servers={bootstrap_servers}",
        f"--input={topics.input}",
        f"--output={topics.output}",
        f"--schema={RECORD_SCHEMA}",
        f"--checkpoint={paths.checkpoint / OUTPUT}",
        f"--trigger={mode.baseline_trigger}",
        f"--stop-file={stop_file(paths)}",
        f"--master={MASTER}",
    ]
    return script + [
        f"--conf={key}={value}" for key, value in shared_conf(paths, MASTER).items()
    ], {}


def stop_file(paths: RunPaths) -> Path:
    return paths.directory / "stop"


class Subject:
    """A subject's process, started in its own session, its output in ``<name>.out/.err``."""

    def __init__(self, name: str, argv: list[str], environment: dict[str, str], paths: RunPaths):
        self.name, self.paths = name, paths
        self.stdout, self.stderr = paths.directory / f"{name}.out", paths.directory / f"{name}.err"
        env = {"PYSPARK_PYTHON": sys.executable, **environment}
        self.process = start(argv, paths.directory, env, self.stdout, self.stderr)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Ask it to stop (its stop file), then end its process group whatever it does."""
        stop_file(self.paths).touch()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=STOP_GRACE_SECONDS)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        time.sleep(0.5)  # the JVM's group goes with it; its ports and files are released

    def failure(self) -> str:
        lines = self.stderr.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join([f"{self.name}: last lines of {self.stderr}:", *lines[-30:]])
