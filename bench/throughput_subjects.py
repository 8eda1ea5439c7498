"""Figure 1's two subjects: the pipeline they both run, and the commands that run it."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench import kafka_data
from bench.processes import RunPaths as RunPaths  # figure 6 imports it from here
from streamjobs.domain.spark_conf import local_cores, session_conf
from streamjobs.runner.main import load_job
from streamjobs.runner.session import MAVEN_REPOSITORY

BENCH = Path(__file__).resolve().parent
BASELINE_SCRIPT = BENCH / "baseline_kafka_to_parquet.py"

TOPIC = "orders"
CONNECTION = "bench-kafka"
JOB = "bench-orders"
VIEW = "orders"
OUTPUT = "large_orders"
SQL = (
    "SELECT id, user, amount, currency, country, ts FROM orders "
    "WHERE amount > 100 AND currency IN ('EUR', 'USD', 'GBP')"
)
STREAMJOBS = "streamjobs"
BASELINE = "baseline"
SUBJECTS = (STREAMJOBS, BASELINE)
LABELS = {STREAMJOBS: "(a) streamjobs", BASELINE: "(b) hand-written PySpark"}


@dataclass(frozen=True)
class ThroughputPlan:
    """How big figure 1 is: records in the topic, micro-batch size, sinks and their repetitions."""

    records: int
    max_offsets_per_trigger: int
    sinks: tuple[tuple[str, int], ...]
    partitions: int = 2
    master: str = "local[2]"
    cores: int = 2

    @property
    def formats(self) -> list[str]:
        return [sink for sink, _ in self.sinks]


def write_manifest(paths: RunPaths, sink: str, plan: ThroughputPlan) -> None:
    """The streamjobs manifest of the figure's pipeline, writing into ``paths``."""
    kafka_options = {
        "startingOffsets": "earliest",
        "maxOffsetsPerTrigger": plan.max_offsets_per_trigger,
    }
    manifest = {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": JOB},
        "spec": {
            "application": {"type": "pipeline"},
            "pipeline": {
                "logLevel": "ERROR",
                "streaming": {
                    "triggerMode": "AvailableNow",
                    "checkpointLocation": paths.checkpoint.as_uri(),
                },
                "inputs": [
                    {
                        "name": VIEW,
                        "dataset": f"{CONNECTION}:{TOPIC}",
                        "format": "kafkajson",
                        "schema": kafka_data.RECORD_SCHEMA,
                        "options": kafka_options,
                    }
                ],
                "steps": [{"sequence": [{"name": OUTPUT, "sql": SQL}]}],
                "outputs": [{"name": OUTPUT, "format": sink, "path": str(paths.output)}],
            },
            "configuration": {  # the harness's only addition: an event log, in one file
                "sparkConf": {
                    "spark.eventLog.enabled": "true",
                    "spark.eventLog.dir": paths.event_log.as_uri(),
                    "spark.eventLog.compress": "false",
                    "spark.eventLog.rolling.enabled": "false",
                }
            },
            "processing": {"guarantee": "EXACTLY_ONCE"},
        },
    }
    paths.manifest.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")


def write_connections(work: Path, bootstrap_servers: str) -> Path:
    connection = {
        "apiVersion": "streamjobs.io/v1",
        "kind": "Connection",
        "metadata": {"name": CONNECTION},
        "spec": {"type": "kafka", "bootstrapServers": bootstrap_servers},
    }
    path = work / "connections.yaml"
    path.write_text(yaml.safe_dump(connection, sort_keys=False), encoding="utf-8")
    return path


def streamjobs_command(paths: RunPaths, connections: Path, plan: ThroughputPlan) -> list[str]:
    """(a): the runner as ``spark-submit`` would run it for this job, progress on stdout."""
    return [
        sys.executable,
        "-m",
        "streamjobs.runner",
        f"--manifest={paths.manifest}",
        f"--connections={connections}",
        f"--master={plan.master}",
        "--until-idle",
    ]


def baseline_command(
    paths: RunPaths, sink: str, connections: Path, plan: ThroughputPlan
) -> list[str]:
    """(b): the hand-written script, with the Spark settings streamjobs uses for the same job."""
    command = [
        sys.executable,
        str(BASELINE_SCRIPT),
        f"--bootstrap-servers={bootstrap_servers_in(connections)}",
        f"--topic={TOPIC}",
        f"--schema={kafka_data.RECORD_SCHEMA}",
        f"--view={VIEW}",
        f"--sql={SQL}",
        f"--format={sink}",
        f"--output={paths.output}",
        f"--checkpoint={paths.checkpoint / OUTPUT}",
        f"--max-offsets-per-trigger={plan.max_offsets_per_trigger}",
        f"--master={plan.master}",
    ]
    conf = shared_conf(paths, plan.master)
    return command + [f"--conf={key}={value}" for key, value in conf.items()]


def shared_conf(paths: RunPaths, master: str) -> dict[str, str]:
    """The Spark settings streamjobs gives the job's session, less its application name."""
    conf = session_conf(
        load_job(str(paths.manifest), checkpoint_root=None),
        connections=(),
        maven_repository=MAVEN_REPOSITORY,
        cores=local_cores(master),
    )
    conf.pop("spark.app.name", None)
    return conf


def bootstrap_servers_in(connections: Path) -> str:
    return str(yaml.safe_load(connections.read_text())["spec"]["bootstrapServers"])
