"""A person's Suspend in the supervisor's tick: a graceful stop that asks a pipeline's runner for
an aligned snapshot, escalates as a Stop does, and ends in SUSPENDED whatever the exit code; and
which applications' graceful stops take a snapshot at all."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.snapshots import SnapshotKind, SnapshotRequest
from streamjobs.domain.spec import parse_manifest, resolved_template
from streamjobs.domain.states import AppEvent, AppState
from streamjobs.supervisor.reconcile import DriverCall, Observed, Request, tick
from streamjobs.supervisor.terms import ApplicationTerms
from tests.factories import DELETE, changed, pipeline_manifest, python_manifest
from tests.supervisor.test_reconcile import NOW, TIMING, app, one, seconds_ago

pytestmark = pytest.mark.snapshots


def terminating(requested: Request = Request.SUSPEND, **fields: Any) -> Observed:
    defaults: dict[str, Any] = {
        "attempt": 1,
        "attempt_live": True,
        "driver_ready": True,
        "requested": requested,
        "requested_at": seconds_ago(5),
        "takes_snapshots": True,
    }
    return app(AppState.TERMINATING, **(defaults | fields))


def test_a_suspend_stops_the_driver_with_an_aligned_snapshot_named_after_the_request() -> None:
    action = one(terminating())
    assert action.driver is DriverCall.STOP
    assert action.event is None
    assert action.snapshot == SnapshotRequest(
        name="suspend-20261122-115955", kind=SnapshotKind.SUSPEND
    )


def test_a_stop_asks_for_a_snapshot_of_kind_stop() -> None:
    action = one(terminating(Request.STOP))
    assert action.driver is DriverCall.STOP
    assert action.snapshot == SnapshotRequest(name="stop-20261122-115955", kind=SnapshotKind.STOP)


def test_every_tick_asks_for_the_same_snapshot() -> None:
    first = one(terminating(requested_at=seconds_ago(1)))
    later = one(terminating(requested_at=seconds_ago(1)))
    assert first.snapshot == later.snapshot


@pytest.mark.parametrize("requested", [Request.STOP, Request.SUSPEND])
def test_an_application_without_a_checkpoint_is_stopped_without_a_snapshot(
    requested: Request,
) -> None:
    action = one(terminating(requested, takes_snapshots=False))
    assert action.driver is DriverCall.STOP
    assert action.snapshot is None


def test_an_abort_asks_for_no_snapshot() -> None:
    action = one(terminating(Request.ABORT))
    assert (action.driver, action.snapshot) == (DriverCall.ABORT, None)


def test_a_suspend_that_takes_too_long_is_aborted_then_killed_as_a_stop_is() -> None:
    aborted = one(terminating(requested_at=seconds_ago(TIMING.stop_timeout + 1)))
    assert (aborted.driver, aborted.snapshot) == (DriverCall.ABORT, None)
    late = TIMING.stop_timeout + TIMING.abort_grace + 1
    assert one(terminating(requested_at=seconds_ago(late))).driver is DriverCall.KILL


def test_once_the_driver_is_gone_the_application_is_suspended() -> None:
    action = one(terminating(attempt_live=False, exit_code=0))
    assert action.event is AppEvent.SUSPENDED
    assert action.driver is None
    assert action.changes == {"exit_code": 0, "next_attempt_at": None}
    assert action.note == ("suspended", "suspended after the micro-batch in flight")
    assert action.attempt_outcome == "suspended"


@pytest.mark.parametrize("code", [1, 137, None])
def test_it_is_suspended_whatever_the_exit_code_and_the_event_says_a_bad_one(
    code: int | None,
) -> None:
    action = one(terminating(attempt_live=False, exit_code=code))
    assert action.event is AppEvent.SUSPENDED
    assert action.note is not None
    if code is None:
        assert "exited with code" not in action.note[1]
    else:
        assert f"exited with code {code} while stopping" in action.note[1]


def test_a_stop_that_exits_badly_still_fails() -> None:
    action = one(terminating(Request.STOP, attempt_live=False, exit_code=1))
    assert action.event is AppEvent.FAILED


def test_a_suspended_application_is_left_alone() -> None:
    suspended = app(AppState.SUSPENDED, attempt=1, requested=Request.SUSPEND)
    assert tick([suspended], now=NOW, timing=TIMING) == []


@pytest.mark.parametrize(
    ("changes", "takes"),
    [
        ((), True),
        ((("spec.processing", {"guarantee": "NONE"}),), False),
        ((("spec.pipeline.streaming.checkpointLocation", "s3a://bucket/ticks"),), False),
        (
            (
                ("spec.pipeline.batchMode", True),
                ("spec.pipeline.streaming", DELETE),
                (
                    "spec.pipeline.inputs[0]",
                    {"name": "ticks", "format": "parquet", "path": "/in", "isStream": False},
                ),
            ),
            False,
        ),
    ],
)
def test_a_streaming_pipeline_with_a_local_checkpoint_takes_snapshots(
    changes: tuple[tuple[str, object], ...], takes: bool
) -> None:
    manifest = changed(pipeline_manifest(), *changes)
    job = parse_manifest(manifest, checkpoint_root="file:///checkpoints")
    spec = resolved_template(job, checkpoint_root="file:///checkpoints")
    assert ApplicationTerms.of(spec, 1).takes_snapshots is takes


def test_a_program_takes_no_snapshots() -> None:
    spec = resolved_template(parse_manifest(python_manifest()), checkpoint_root="file:///c")
    assert ApplicationTerms.of(spec, 1).takes_snapshots is False
