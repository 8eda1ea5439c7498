"""The rules on snapshots, without I/O: which outputs went on past a snapshot, which automatic
snapshots retention deletes, reading batch ids and Delta commits from names and text, and the
records runner and server hand each other."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.snapshots import (
    Kept,
    OutputPosition,
    SnapshotKind,
    SnapshotRequest,
    automatic_name,
    delta_commit_file,
    delta_transaction,
    delta_versions,
    last_batch,
    outputs_ahead,
    parse_request,
    parse_staged,
    to_prune,
)

pytestmark = pytest.mark.snapshots

T0 = datetime(2026, 11, 27, 1, 30, tzinfo=UTC)


def delta(output: str, version: int | None, txn: int | None = None) -> OutputPosition:
    return OutputPosition(
        output=output, format="delta", version=version, txn_app_id="q", txn_version=txn
    )


def files(output: str, batch: int | None) -> OutputPosition:
    return OutputPosition(output=output, format="parquet", batch_id=batch)


class TestOutputsAhead:
    def test_an_output_written_since_is_named_with_both_positions(self) -> None:
        ahead = outputs_ahead([delta("sums", 3, 7)], {"sums": delta("sums", 5, 9)})
        assert ahead == [
            "sums: the snapshot is at delta version 3 (batch 7), "
            "the output now at delta version 5 (batch 9)"
        ]

    def test_outputs_at_or_behind_the_snapshot_are_not_ahead(self) -> None:
        snapshot = [delta("sums", 3), files("raw", 4)]
        assert outputs_ahead(snapshot, {"sums": delta("sums", 3), "raw": files("raw", 4)}) == []
        assert outputs_ahead(snapshot, {"sums": delta("sums", 2), "raw": files("raw", 1)}) == []

    def test_a_file_sink_log_batch_past_the_snapshot_is_ahead(self) -> None:
        assert outputs_ahead([files("raw", 4)], {"raw": files("raw", 5)}) == [
            "raw: the snapshot is at parquet sink log batch 4, "
            "the output now at parquet sink log batch 5"
        ]

    def test_an_output_empty_at_the_snapshot_and_written_since_is_ahead(self) -> None:
        assert len(outputs_ahead([delta("sums", None)], {"sums": delta("sums", 0)})) == 1

    def test_untracked_and_unknown_outputs_are_not_judged(self) -> None:
        kafka = OutputPosition(output="out", format="kafka", tracked=False)
        snapshot = [kafka, delta("gone", 1)]
        assert outputs_ahead(snapshot, {"out": kafka, "new": delta("new", 9)}) == []

    def test_another_iceberg_snapshot_is_ahead(self) -> None:
        taken = OutputPosition(output="t", format="iceberg", snapshot_id=11, batch_marker="b3")
        now = OutputPosition(output="t", format="iceberg", snapshot_id=12)
        assert outputs_ahead([taken], {"t": now}) == [
            "t: the snapshot is at iceberg snapshot 11 (b3), the output now at iceberg snapshot 12"
        ]
        assert outputs_ahead([taken], {"t": taken}) == []


class TestRetention:
    def kept(self, name: str, kind: SnapshotKind, minutes: int) -> Kept:
        return Kept(name, kind, T0 + timedelta(minutes=minutes))

    def test_the_newest_automatic_ones_are_kept_and_the_oldest_go_first(self) -> None:
        snapshots = [
            self.kept("p1", SnapshotKind.PERIODIC, 1),
            self.kept("s2", SnapshotKind.STOP, 2),
            self.kept("p3", SnapshotKind.PERIODIC, 3),
            self.kept("u4", SnapshotKind.SUSPEND, 4),
            self.kept("p5", SnapshotKind.PERIODIC, 5),
        ]
        assert to_prune(reversed(snapshots), keep=3) == ["p1", "s2"]
        assert to_prune(snapshots, keep=5) == []

    def test_manual_and_replaced_ones_are_never_pruned(self) -> None:
        snapshots = [
            self.kept("m0", SnapshotKind.MANUAL, 0),
            self.kept("r0", SnapshotKind.REPLACED, 0),
            self.kept("p1", SnapshotKind.PERIODIC, 1),
            self.kept("p2", SnapshotKind.PERIODIC, 2),
        ]
        assert to_prune(snapshots, keep=1) == ["p1"]


class TestCheckpointNames:
    def test_last_batch_reads_commits_and_compacted_sink_logs(self) -> None:
        assert last_batch(["0", "1", "12", ".12.crc", "9"]) == 12
        assert last_batch(["18", "19.compact", "_tmp"]) == 19
        assert last_batch([]) is None
        assert last_batch(["metadata", ".0.crc", "x1"]) is None

    def test_delta_versions_newest_first_and_commit_file_names(self) -> None:
        names = [delta_commit_file(0), delta_commit_file(2), "00000000000000000001.crc", "_x.json"]
        assert delta_commit_file(2) == "00000000000000000002.json"
        assert delta_versions([*names, delta_commit_file(1)]) == [2, 1, 0]
        assert delta_versions(["_last_checkpoint"]) == []

    def test_delta_transaction_finds_the_writers_version(self) -> None:
        commit = "\n".join(
            [
                json.dumps({"commitInfo": {"operation": "STREAMING UPDATE"}}),
                json.dumps({"txn": {"appId": "other", "version": 1}}),
                'not json {"txn"',
                json.dumps({"txn": {"appId": "q-1", "version": 7}}),
            ]
        )
        assert delta_transaction(commit, "q-1") == 7
        assert delta_transaction(commit, "absent") is None
        assert delta_transaction(json.dumps({"txn": {"appId": "q", "version": "7"}}), "q") is None


class TestRecords:
    def staged(self, **changes: object) -> str:
        record = {
            "name": "manual-1",
            "kind": "manual",
            "takenAt": T0.isoformat(),
            "batches": {"evens": 3},
            "positions": [{"output": "evens", "format": "parquet", "batchId": 3}],
        }
        return json.dumps(record | changes)

    def test_a_staged_record_parses_with_its_positions(self) -> None:
        record = parse_staged(self.staged(), source="snapshot.json")
        assert (record.name, record.kind, record.batches) == ("manual-1", "manual", {"evens": 3})
        assert record.positions == [files("evens", 3)]
        assert record.error is None

    def test_a_record_that_is_not_json_names_its_source(self) -> None:
        with pytest.raises(InvalidInput, match=r"^snapshot\.json: is not JSON") as raised:
            parse_staged("{", source="snapshot.json")
        assert raised.value.source == "snapshot.json"

    @pytest.mark.parametrize(
        ("changes", "field"),
        [
            ({"kind": "nightly"}, "kind"),
            ({"batches": {"evens": "3"}}, "batches.evens"),
            ({"positions": [{"output": "evens"}]}, "positions.0.format"),
            ({"surprise": 1}, "surprise"),
        ],
    )
    def test_each_broken_field_is_named(self, changes: dict[str, object], field: str) -> None:
        with pytest.raises(InvalidInput) as raised:
            parse_staged(self.staged(**changes), source="snapshot.json")
        assert field in [error.path for error in raised.value.errors]

    def test_a_stop_file_is_a_plain_stop_or_a_snapshot_request(self) -> None:
        assert parse_request("") is None
        assert parse_request("  \n") is None
        assert parse_request("not json") is None
        request = SnapshotRequest(name="stop-1", kind=SnapshotKind.STOP)
        assert parse_request(json.dumps(request.to_wire())) == request
        assert parse_request('{"name": "x"}') == SnapshotRequest(name="x")

    def test_automatic_names_carry_kind_and_time(self) -> None:
        assert automatic_name(SnapshotKind.PERIODIC, T0) == "periodic-20261127-013000"
        assert automatic_name(SnapshotKind.REPLACED, T0) == "replaced-20261127-013000"

    def test_positions_in_words(self) -> None:
        assert delta("s", 7, 12).describe() == "delta version 7 (batch 12)"
        assert delta("s", 7).describe() == "delta version 7"
        assert files("r", None).describe() == "parquet: nothing written yet"
        untracked = OutputPosition(output="k", format="kafka", tracked=False)
        assert untracked.describe() == "kafka: not tracked"
