"""The runner takes snapshots of a running pipeline's checkpoint at a batch boundary.

A watermarked windowed count writes into Delta and into parquet; the test plays the server: it
writes ``snapshot-request`` and the stop file into what would be the attempt directory, and reads
the snapshots the runner stages there (``domain.snapshots``).
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from streamjobs.domain.snapshots import (
    SNAPSHOT_CHECKPOINT_DIRECTORY,
    SNAPSHOT_RECORD_FILE,
    OutputPosition,
    StagedSnapshot,
    parse_staged,
)
from streamjobs.runner.main import RunRequest, run
from streamjobs.runner.positions import read_position
from tests.spark.conftest import CollectingReporter
from tests.spark.pipelines import pipeline_job

pytestmark = [pytest.mark.spark, pytest.mark.snapshots]
SCHEMA = "k STRING, ts TIMESTAMP"
WAIT_SECONDS = 180.0
DELTA, PARQUET = "counts-0", "counts-1"
"""The two outputs both write the view ``counts``, so their keys carry their index."""


def counting_job(
    name: str, tmp_path: Path, *, formats: tuple[str, ...] = ("delta", "parquet"), **processing: Any
) -> dict[str, Any]:
    """Events from json files, counted per key in 10-second windows, into each of ``formats``."""
    job = pipeline_job(
        name,
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "1 second"},
        inputs=[
            {
                "name": "events",
                "format": "json",
                "path": str(tmp_path / "in"),
                "schema": SCHEMA,
                "watermark": {"column": "ts", "delay": "0 seconds"},
            }
        ],
        steps=[
            [
                (
                    "counts",
                    "SELECT window.start AS start, k, COUNT(*) AS n FROM events "
                    "GROUP BY window(ts, '10 seconds'), k",
                )
            ]
        ],
        outputs=[
            {"name": "counts", "format": spark_format, "path": str(tmp_path / spark_format)}
            for spark_format in formats
        ],
    )
    job["spec"]["processing"].update(processing)
    return job


def add_events(tmp_path: Path, name: str, seconds: list[int]) -> None:
    """A file of events at these seconds past midnight (written whole, then renamed in)."""
    directory = tmp_path / "in"
    directory.mkdir(exist_ok=True)
    lines = [json.dumps({"k": "a", "ts": f"2026-01-01T00:00:{s:02d}"}) for s in seconds]
    write_whole(directory / name, "\n".join(lines) + "\n")


def write_whole(path: Path, text: str) -> None:
    """As the server writes its files: under a temporary name, then renamed."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


@dataclass
class Attempt:
    """A pipeline run in a thread of its own, with its attempt directory's files."""

    directory: Path
    checkpoint: Path
    thread: threading.Thread
    exit_code: list[int]

    @property
    def snapshots(self) -> Path:
        return self.directory / "snapshots"

    def request_snapshot(self, name: str) -> None:
        write_whole(self.directory / "snapshot-request", json.dumps({"name": name}))

    def stop(self, snapshot: dict[str, str] | None = None) -> int:
        write_whole(self.directory / "stop", json.dumps(snapshot) if snapshot else "")
        self.thread.join(WAIT_SECONDS)
        assert not self.thread.is_alive(), "the run did not stop"
        return self.exit_code[0]

    def staged(self, name: str) -> StagedSnapshot:
        """The record of snapshot ``name``, once the runner has written it."""
        record = self.snapshots / name / SNAPSHOT_RECORD_FILE
        wait_for(record.exists, f"snapshot {name}")
        return parse_staged(record.read_text(), source=str(record))


@pytest.fixture
def attempt(spark: object, tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], Attempt]]:
    """Starts a run of a manifest as the server would (stop file, snapshot files), and makes
    sure it is stopped at the end of the test."""
    started: list[Attempt] = []

    def start(manifest: dict[str, Any]) -> Attempt:
        directory = tmp_path / "attempt"
        directory.mkdir()
        (directory / "job.yaml").write_text(yaml.safe_dump(manifest))
        request = RunRequest(
            manifest=str(directory / "job.yaml"),
            checkpoint_root=(tmp_path / "checkpoints").as_uri(),
            stop_file=str(directory / "stop"),
            snapshot_request_file=str(directory / "snapshot-request"),
            snapshot_directory=str(directory / "snapshots"),
        )
        exit_code: list[int] = []
        thread = threading.Thread(
            target=lambda: exit_code.append(run(request, reporter=CollectingReporter())),
            daemon=True,
        )
        name = manifest["metadata"]["name"]
        begun = Attempt(directory, tmp_path / "checkpoints" / "default" / name, thread, exit_code)
        started.append(begun)
        thread.start()
        return begun

    yield start
    for begun in started:
        if begun.thread.is_alive():
            (begun.directory / "stop").touch()
            begun.thread.join(WAIT_SECONDS)


def wait_for(condition: Callable[[], object], what: str) -> None:
    done = threading.Event()
    waited = 0.0
    while not condition():
        assert waited < WAIT_SECONDS, f"gave up waiting for {what}"
        done.wait(0.25)
        waited += 0.25


def positions(staged: StagedSnapshot) -> dict[str, OutputPosition]:
    return {position.output: position for position in staged.positions}


def delta_now(tmp_path: Path) -> int:
    """The Delta output's newest version (-1 before the first)."""
    version = read_position(DELTA, "delta", str(tmp_path / "delta")).version
    return -1 if version is None else version


def parquet_batch(tmp_path: Path) -> int:
    batch = read_position(PARQUET, "parquet", str(tmp_path / "parquet")).batch_id
    return -1 if batch is None else batch


def test_snapshots_while_running_and_at_a_stop(
    attempt: Callable[[dict[str, Any]], Attempt], tmp_path: Path
) -> None:
    add_events(tmp_path, "1.json", [1, 2, 12])  # the watermark passes the first window
    running = attempt(counting_job("counting", tmp_path))
    wait_for(lambda: parquet_batch(tmp_path) >= 1 and delta_now(tmp_path) >= 1, "first windows")

    running.request_snapshot("while-running")
    taken = running.staged("while-running")

    assert taken.error is None
    assert taken.kind == "manual"
    assert set(taken.batches) == {DELTA, PARQUET}
    at = positions(taken)
    assert at[PARQUET].batch_id == taken.batches[PARQUET]
    assert at[DELTA].version is not None
    assert at[DELTA].txn_version == taken.batches[DELTA]
    assert at[DELTA].txn_app_id  # Delta's streaming sink: the query's id
    copy = running.snapshots / "while-running" / SNAPSHOT_CHECKPOINT_DIRECTORY
    for key in (DELTA, PARQUET):
        assert (copy / key / "commits" / str(taken.batches[key])).is_file()
        assert (copy / key / "state").is_dir()
    assert not list(running.snapshots.glob("while-running/.*"))  # no temporary left

    add_events(tmp_path, "2.json", [25])  # closes the second window
    assert at[DELTA].version is not None
    wait_for(lambda: delta_now(tmp_path) > at[DELTA].version, "the queries to go on writing")  # type: ignore[operator]
    wait_for(lambda: parquet_batch(tmp_path) > taken.batches[PARQUET], "more parquet batches")

    assert running.stop({"name": "at-stop", "kind": "stop"}) == 0
    stopped = running.staged("at-stop")

    assert stopped.error is None
    assert stopped.kind == "stop"
    live = {key: last_commit(running.checkpoint / key) for key in (DELTA, PARQUET)}
    assert stopped.batches == live  # the run stopped after the batch the snapshot is at
    assert stopped.batches[PARQUET] > taken.batches[PARQUET]
    aligned = positions(stopped)
    assert aligned[PARQUET].batch_id == stopped.batches[PARQUET] == parquet_batch(tmp_path)
    assert aligned[DELTA].txn_version == stopped.batches[DELTA]
    assert aligned[DELTA].version == delta_now(tmp_path)


def last_commit(checkpoint: Path) -> int:
    return max(
        int(entry.name) for entry in (checkpoint / "commits").iterdir() if entry.name.isdigit()
    )


def test_periodic_snapshots(attempt: Callable[[dict[str, Any]], Attempt], tmp_path: Path) -> None:
    add_events(tmp_path, "1.json", [1, 12])
    job = counting_job("periodic", tmp_path, formats=("parquet",), snapshotIntervalMillis=5000)
    running = attempt(job)

    def periodic_records() -> list[Path]:
        return sorted(running.snapshots.glob(f"periodic-*/{SNAPSHOT_RECORD_FILE}"))

    more = itertools.count()

    def two_taken() -> bool:
        """Events keep coming: a periodic snapshot is only taken of batches not kept yet."""
        number = next(more)
        if number % 8 == 0:
            add_events(tmp_path, f"more-{number}.json", [13 + number % 40])
        return len(periodic_records()) >= 2

    wait_for(two_taken, "two periodic snapshots")
    assert running.stop() == 0

    for record in periodic_records():
        staged = parse_staged(record.read_text(), source=str(record))
        assert staged.kind == "periodic"
        assert staged.name == record.parent.name
        assert staged.error is None
        assert (record.parent / SNAPSHOT_CHECKPOINT_DIRECTORY).is_dir()
    newest = parse_staged(periodic_records()[-1].read_text(), source="newest")
    assert newest.error is None
    assert set(newest.batches) == {"counts"}
    assert newest.positions[0].batch_id is not None


def test_a_pipeline_without_a_checkpoint_records_why_it_has_no_snapshot(
    attempt: Callable[[dict[str, Any]], Attempt], tmp_path: Path
) -> None:
    add_events(tmp_path, "1.json", [1])
    job = pipeline_job(
        "unguaranteed",
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "1 second"},
        inputs=[
            {"name": "events", "format": "json", "path": str(tmp_path / "in"), "schema": SCHEMA}
        ],
        outputs=[{"name": "events", "format": "json", "path": str(tmp_path / "out")}],
        guarantee="NONE",
    )
    running = attempt(job)
    running.request_snapshot("now")
    assert running.staged("now").error == "guarantee NONE keeps no checkpoint"
    wait_for(lambda: list((tmp_path / "out").glob("*.json")), "the query to go on writing")

    assert running.stop({"name": "at-stop", "kind": "stop"}) == 0
    assert running.staged("at-stop").error == "guarantee NONE keeps no checkpoint"
    assert not list(running.snapshots.glob(f"*/{SNAPSHOT_CHECKPOINT_DIRECTORY}"))
