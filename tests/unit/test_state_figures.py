"""The State view's rules without Spark: progress figures merged with the state metadata by
operator name and order, query names to checkpoint directories, preview bounds, the tool's
answer checked strictly."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.reports import ProgressReport
from streamjobs.domain.state_figures import latest_by_query, state_figures, stateful
from streamjobs.domain.state_inspection import (
    PreviewRequest,
    QueryState,
    StoreMetadata,
    UnreadableResult,
    parse_result,
    preview_request,
    tool_arguments,
)

pytestmark = pytest.mark.snapshots

AT = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def progress(name: str, batch: int, operators: list[dict[str, Any]], watermark: str) -> Any:
    return ProgressReport.model_validate(
        {
            "type": "progress",
            "name": name,
            "progress": {
                "name": name,
                "batchId": batch,
                "eventTime": {"watermark": watermark},
                "stateOperators": operators,
            },
        }
    )


def store(operator: int, name: str, store_name: str = "default", **more: Any) -> StoreMetadata:
    return StoreMetadata(
        operator_id=operator,
        operator_name=name,
        state_store_name=store_name,
        num_partitions=more.get("partitions", 4),
        min_batch_id=more.get("low", 3),
        max_batch_id=more.get("high", 9),
    )


def test_operators_pair_by_name_and_order_and_keep_what_either_source_says() -> None:
    reports = [
        (
            progress(
                "orders/totals",
                8,
                [{"operatorName": "stateStoreSave", "numRowsTotal": 1}],
                "1970-01-01T00:00:00.000Z",
            ),
            AT,
        ),
        (
            progress(
                "orders/totals",
                9,
                [
                    {
                        "operatorName": "dedupe",
                        "numRowsTotal": 10,
                        "memoryUsedBytes": 2048,
                        "numRowsRemoved": 1,
                        "numRowsDroppedByWatermark": 2,
                        "numShufflePartitions": 8,
                    },
                    {"operatorName": "stateStoreSave", "numRowsTotal": 3, "numRowsUpdated": 2},
                    {"operatorName": "mystery", "numRowsTotal": 5},
                ],
                "2024-05-01T11:59:00.000Z",
            ),
            AT,
        ),
        (progress("orders/totals/preview", 9, [], "1970-01-01T00:00:00.000Z"), AT),
    ]
    latest = latest_by_query("orders", reports)
    assert set(latest) == {"totals"}
    metadata = [
        QueryState(
            query="totals",
            stores=[
                store(1, "stateStoreSave"),
                store(0, "dedupe", partitions=8),
                store(2, "sessionWindow"),
            ],
        ),
        QueryState(query="plain"),
    ]
    (plain, totals) = state_figures(latest, metadata)
    assert plain.operators == ()
    assert stateful([plain, totals]) == [totals]
    assert totals.batch_id == 9
    assert totals.watermark == "2024-05-01T11:59:00.000Z"
    by_id = {operator.id: operator for operator in totals.operators}
    assert by_id[0].name == "dedupe"
    assert by_id[0].rows == 10
    assert by_id[0].memory_bytes == 2048
    assert by_id[0].rows_removed == 1
    assert by_id[0].rows_dropped_by_watermark == 2
    assert by_id[0].partitions == 8
    assert (by_id[0].min_batch, by_id[0].max_batch) == (3, 9)
    assert by_id[1].name == "stateStoreSave"
    assert by_id[1].rows == 3
    assert by_id[1].rows_updated == 2
    assert by_id[2].name == "sessionWindow"
    assert by_id[2].rows is None
    assert by_id[2].previewable
    assert by_id[None].name == "mystery"
    assert by_id[None].rows == 5
    assert not by_id[None].previewable


def test_without_the_checkpoint_the_reports_alone_give_the_figures() -> None:
    report = progress(
        "orders",
        4,
        [{"operatorName": "stateStoreSave", "numRowsTotal": 7, "numShufflePartitions": 2}],
        "1970-01-01T00:00:00.000Z",
    )
    (query,) = state_figures(latest_by_query("orders", [(report, AT)]), None)
    assert query.key == "foreachBatch"
    assert query.watermark is None  # the epoch: no watermark yet
    (operator,) = query.operators
    assert (operator.id, operator.rows, operator.partitions) == (None, 7, 2)


def test_a_join_keeps_its_four_stores_under_one_operator() -> None:
    names = [
        "left-keyToNumValues",
        "left-keyWithIndexToValue",
        "right-keyToNumValues",
        "right-keyWithIndexToValue",
    ]
    metadata = [
        QueryState(query="joined", stores=[store(0, "symmetricHashJoin", name) for name in names])
    ]
    (query,) = state_figures({}, metadata)
    (operator,) = query.operators
    assert operator.stores == tuple(names)


def test_preview_requests_are_bounded_and_name_the_parameter() -> None:
    assert preview_request(operator=None, query=None, store_name=None, limit=None) is None
    assert preview_request(
        operator="2", query="totals", store_name=None, limit=""
    ) == PreviewRequest(operator=2, query="totals", limit=20)
    for given, path in [
        ({"operator": "x"}, "query.operator"),
        ({"operator": "1", "limit": "101"}, "query.limit"),
        ({"operator": "1", "limit": "0"}, "query.limit"),
        ({"operator": "1", "query": "../other"}, "query.query"),
        ({"operator": "1", "store_name": "a/b"}, "query.storeName"),
        ({"limit": "5"}, "query.operator"),
    ]:
        arguments = {"operator": None, "query": None, "store_name": None, "limit": None, **given}
        with pytest.raises(InvalidInput) as refused:
            preview_request(**arguments)
        assert refused.value.errors[0].path == path


def test_the_tool_is_asked_for_the_preview_and_its_answer_checked() -> None:
    asked = PreviewRequest(operator=1, query="totals", store_name="default", limit=5)
    arguments = tool_arguments("/data/ck", asked)
    assert arguments[:2] == ["--checkpoint", "/data/ck"]
    assert arguments[4:6] == ["--operator", "1"]
    assert "--store-name" in arguments
    assert "--operator" not in tool_arguments("/data/ck", None)
    with pytest.raises(UnreadableResult, match="queries"):
        parse_result({"queries": [{"query": 3}]})
    with pytest.raises(UnreadableResult, match="no answer"):
        parse_result(None)
    assert parse_result({"queries": [], "preview": None}).queries == []
