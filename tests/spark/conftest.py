"""One local[2] Spark session for every Spark test, with every connector the runner can use."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from pyspark.sql import SparkSession

from streamjobs.domain.connectors import CONNECTOR_PACKAGES, packages_for, spark_conf_for
from streamjobs.domain.spark_conf import (
    DELTA_SNAPSHOT_PARTITIONS,
    SCHEDULER_MODE_SETTING,
    local_maven_jars,
)
from streamjobs.runner.main import RunRequest, run
from streamjobs.runner.pipeline import PipelineRun
from streamjobs.runner.session import MAVEN_REPOSITORY
from tests.conftest import SESSION_JAVA_OPTIONS

ALL_FORMATS = sorted(CONNECTOR_PACKAGES)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("streamjobs-tests")
        .config("spark.jars.packages", ",".join(packages_for(ALL_FORMATS)))
        .config("spark.jars", ",".join(local_maven_jars(ALL_FORMATS, MAVEN_REPOSITORY)))
        .config(DELTA_SNAPSHOT_PARTITIONS, "2")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "true")  # its REST API shows each stage's scheduler pool
        .config("spark.ui.port", "0")  # any free port: other sessions may run beside
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config(SCHEDULER_MODE_SETTING, "FAIR")  # as pipelines' drivers run (a static setting)
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.driver.memory", "1g")
        .config("spark.driver.defaultJavaOptions", SESSION_JAVA_OPTIONS)
    )
    for key, value in spark_conf_for(ALL_FORMATS).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


class CollectingReporter:
    """Keeps every event, for assertions."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def report(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.events.append(event)

    def close(self) -> None:
        return None

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        with self._lock:
            return [event for event in self.events if event["type"] == kind]


class PipelineRunner:
    """Writes manifests to a directory and runs them in the shared session."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.reporter = CollectingReporter()

    def write(self, name: str, *documents: dict[str, Any]) -> str:
        path = self.directory / name
        path.write_text(yaml.safe_dump_all(documents))
        return str(path)

    def run(
        self,
        manifest: dict[str, Any],
        *,
        connections: list[dict[str, Any]] = (),  # type: ignore[assignment]
        until_idle: bool = False,
        stop_when: Callable[[PipelineRun], bool] | None = None,
        environment: dict[str, str] | None = None,
        stop_file: Path | None = None,
        hold_until: datetime | None = None,
        timeout: float = 180,
    ) -> int:
        """Run to the end (or until ``stop_when`` holds, checked twice a second)."""
        request = RunRequest(
            manifest=self.write("job.yaml", manifest),
            connections=self.write("connections.yaml", *connections) if connections else None,
            checkpoint_root=(self.directory / "checkpoints").as_uri(),
            until_idle=until_idle,
            environment=environment or {},
            stop_file=str(stop_file) if stop_file else None,
            hold_until=hold_until,
        )
        watcher = _Watcher(stop_when, timeout) if stop_when else None
        return run(request, reporter=self.reporter, on_started=watcher.start if watcher else None)


class _Watcher:
    def __init__(self, condition: Callable[[PipelineRun], bool], timeout: float) -> None:
        self._condition = condition
        self._timeout = timeout

    def start(self, pipeline_run: PipelineRun) -> None:
        def watch() -> None:
            waited = 0.0
            while waited < self._timeout and not self._condition(pipeline_run):
                threading.Event().wait(0.5)
                waited += 0.5
            pipeline_run.request_stop()

        threading.Thread(target=watch, daemon=True).start()


@pytest.fixture
def runner(spark: SparkSession, tmp_path: Path) -> PipelineRunner:
    return PipelineRunner(tmp_path)
