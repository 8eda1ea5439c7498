"""How the runner takes in snapshot requests: the stop file, ``snapshot-request``, its own
timer, each name once; and which pipelines can have none (``runner.snapshots``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.snapshots import SnapshotKind, SnapshotRequest
from streamjobs.domain.spec import parse_manifest
from streamjobs.runner.snapshots import SnapshotInbox, refusal_for
from streamjobs.runner.watchers import (
    Repeating,
    ask_for_periodic_snapshots,
    watch_snapshot_requests,
    watch_stop_file,
)
from tests.factories import changed, pipeline_manifest

pytestmark = pytest.mark.snapshots
STOP = SnapshotRequest(name="stop-20261127-013000", kind=SnapshotKind.STOP)
WAIT = 30.0


class TestInbox:
    def test_each_name_is_taken_once(self) -> None:
        inbox = SnapshotInbox()
        assert inbox.offer(SnapshotRequest(name="a"))
        assert not inbox.offer(SnapshotRequest(name="a"))
        assert inbox.waiting()
        assert inbox.take() == [SnapshotRequest(name="a")]
        assert not inbox.offer(SnapshotRequest(name="a"))
        assert not inbox.waiting()

    def test_a_name_that_is_no_snapshot_name_is_dropped(self) -> None:
        inbox = SnapshotInbox()
        assert not inbox.offer(SnapshotRequest(name="../elsewhere"))
        inbox.offer_at_stop(SnapshotRequest(name="", kind=SnapshotKind.STOP))
        assert inbox.take_at_end() == []

    def test_periodic_requests_do_not_pile_up(self) -> None:
        inbox = SnapshotInbox()
        assert inbox.offer(SnapshotRequest(name="periodic-1", kind=SnapshotKind.PERIODIC))
        assert not inbox.offer(SnapshotRequest(name="periodic-2", kind=SnapshotKind.PERIODIC))
        assert inbox.offer(SnapshotRequest(name="manual-1"))

    def test_at_the_end_the_stops_and_the_asked_for_are_left_not_the_periodic(self) -> None:
        inbox = SnapshotInbox()
        inbox.offer(SnapshotRequest(name="periodic-1", kind=SnapshotKind.PERIODIC))
        inbox.offer(SnapshotRequest(name="manual-1"))
        inbox.offer_at_stop(STOP)
        assert inbox.take_at_end() == [SnapshotRequest(name="manual-1"), STOP]
        assert inbox.take_at_end() == []


class TestRefusals:
    def test_a_streaming_pipeline_with_a_local_checkpoint_can_have_snapshots(self) -> None:
        manifest = changed(
            pipeline_manifest(), ("spec.pipeline.streaming.checkpointLocation", "file:///ckpt")
        )
        assert refusal_for(parse_manifest(manifest)) is None

    @pytest.mark.parametrize(
        ("change", "reason"),
        [
            (("spec.processing", {"guarantee": "NONE"}), "guarantee NONE keeps no checkpoint"),
            (
                ("spec.pipeline.streaming.checkpointLocation", "s3a://bucket/ckpt"),
                "the checkpoint location s3a://bucket/ckpt is not on this machine's file system",
            ),
        ],
    )
    def test_why_none_can_be_taken(self, change: tuple[str, object], reason: str) -> None:
        manifest = changed(
            pipeline_manifest(), ("spec.pipeline.streaming.checkpointLocation", "/ckpt"), change
        )
        assert refusal_for(parse_manifest(manifest)) == reason

    def test_a_batch_job_keeps_no_checkpoint(self) -> None:
        manifest = changed(
            pipeline_manifest(),
            ("spec.pipeline.batchMode", True),
            ("spec.pipeline.streaming", {}),
            (
                "spec.pipeline.inputs[0]",
                {"name": "ticks", "format": "json", "path": "/in", "schema": "a INT"},
            ),
        )
        assert refusal_for(parse_manifest(manifest)) == "a batchMode pipeline keeps no checkpoint"


class Received:
    """What a watcher handed on, and when it has."""

    def __init__(self) -> None:
        self.items: list[object] = []
        self.arrived = threading.Event()

    def __call__(self, item: object) -> bool:
        self.items.append(item)
        self.arrived.set()
        return True


def handed_on(start: Callable[[Received], Repeating]) -> list[object]:
    """What the watcher ``start(received)`` starts has handed on once it first has; the
    watcher cancelled."""
    received = Received()
    watcher = start(received)
    try:
        assert received.arrived.wait(WAIT)
    finally:
        watcher.cancel()
    return received.items


def test_a_stop_file_with_a_request_stops_with_it(tmp_path: Path) -> None:
    stop_file = tmp_path / "stop"
    stop_file.write_text(json.dumps(STOP.to_wire()))
    assert handed_on(lambda received: watch_stop_file(stop_file, received)) == [STOP]


def test_an_empty_stop_file_is_a_plain_stop(tmp_path: Path) -> None:
    stop_file = tmp_path / "stop"
    stop_file.touch()
    assert handed_on(lambda received: watch_stop_file(stop_file, received)) == [None]


def test_the_request_file_is_offered_as_the_server_writes_it(tmp_path: Path) -> None:
    request_file = tmp_path / "snapshot-request"
    request_file.write_text(json.dumps({"name": "nightly"}))
    items = handed_on(lambda received: watch_snapshot_requests(request_file, received))
    assert items[0] == SnapshotRequest(name="nightly")


def test_periodic_snapshots_are_named_for_when_they_were_asked() -> None:
    clock = FakeClock()
    items = handed_on(
        lambda received: ask_for_periodic_snapshots(received, clock=clock, interval=0.05)
    )
    expected = SnapshotRequest(name="periodic-20260101-000000", kind=SnapshotKind.PERIODIC)
    assert items[0] == expected
