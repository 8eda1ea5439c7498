"""The static rules of an upgrade's compatibility check, and how the dry run's failures read."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.compatibility import review, static_changes, static_warnings
from streamjobs.domain.dry_runs import (
    OPERATORS_CHANGED,
    TIMED_OUT,
    QueryCheck,
    StoredOperator,
    UnreadableResult,
    column_changes,
    error_condition,
    error_summary,
    explain,
    operators_changed_message,
    parse_result,
    parse_struct,
)
from streamjobs.domain.manifest import StreamingJob
from streamjobs.domain.pipeline_queries import output_keys, streaming_inputs_read
from streamjobs.domain.spec import parse_manifest
from tests.factories import DELETE, changed, python_manifest

pytestmark = pytest.mark.snapshots

TOTALS_SQL = (
    "SELECT window(ts, '5 minutes') AS slot, user, count(*) AS n FROM orders "
    "GROUP BY window(ts, '5 minutes'), user"
)


def orders_manifest() -> dict[str, Any]:
    """Orders from Kafka, totals per user and window into parquet."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "orders"},
        "spec": {
            "application": {"type": "pipeline"},
            "pipeline": {
                "streaming": {"checkpointLocation": "file:///checkpoints/orders"},
                "inputs": [
                    {
                        "name": "orders",
                        "dataset": "kafka-main:orders",
                        "format": "kafkajson",
                        "schema": "user STRING, amount BIGINT, ts TIMESTAMP",
                        "watermark": {"column": "ts", "delay": "1 minute"},
                        "options": {"startingOffsets": "earliest"},
                    },
                    {
                        "name": "users",
                        "path": "/data/users",
                        "format": "json",
                        "isStream": False,
                        "schema": "user STRING, country STRING",
                    },
                ],
                "steps": [{"sequence": [{"name": "totals", "sql": TOTALS_SQL}]}],
                "outputs": [{"name": "totals", "format": "parquet", "path": "/lake/totals"}],
            },
        },
    }


def job(manifest: dict[str, Any]) -> StreamingJob:
    return parse_manifest(manifest)


def rules_of(*changes: tuple[str, Any]) -> list[tuple[str, str]]:
    """The (path, rule) of each refusal of ``changes`` to the orders job."""
    old = orders_manifest()
    return [
        (refusal.path, refusal.rule)
        for refusal in static_changes(job(old), job(changed(old, *changes)))
    ]


def warnings_of(*changes: tuple[str, Any]) -> list[str]:
    old = orders_manifest()
    return static_warnings(job(old), job(changed(old, *changes)))


def test_the_same_spec_and_changes_spark_allows_are_not_refused() -> None:
    assert rules_of() == []
    assert warnings_of() == []
    allowed = [
        (
            "spec.pipeline.steps[0].sequence[0].sql",
            TOTALS_SQL.replace("FROM orders", "FROM orders WHERE amount > 0"),
        ),
        ("spec.pipeline.inputs[0].options.maxOffsetsPerTrigger", 1000),
        ("spec.pipeline.inputs[0].format", "kafka"),
        ("spec.pipeline.inputs[1].path", "/data/users-v2"),
        ("spec.pipeline.streaming.triggerMode", "AvailableNow"),
    ]
    for change in allowed:
        if change[0].endswith("format"):
            # kafka gives raw records: the step reads value bytes, still one kafka source
            change_set = [change, ("spec.pipeline.inputs[0].schema", DELETE)]
        else:
            change_set = [change]
        assert rules_of(*change_set) == [], change


@pytest.mark.parametrize(
    ("change", "refused"),
    [
        (
            ("spec.pipeline.inputs[0].format", "json"),
            ("spec.pipeline.inputs[0].format", "input-type"),
        ),
        (
            ("spec.pipeline.inputs[0].dataset", "kafka-main:payments"),
            ("spec.pipeline.inputs[0].dataset", "input-location"),
        ),
        (
            ("spec.pipeline.inputs[0].options.subscribePattern", "orders-.*"),
            ("spec.pipeline.inputs[0].options.subscribePattern", "input-option"),
        ),
        (
            ("spec.pipeline.outputs[0].format", "delta"),
            ("spec.pipeline.outputs[0].format", "sink-type"),
        ),
        (
            ("spec.pipeline.outputs[0].path", "/lake/totals-v2"),
            ("spec.pipeline.outputs[0].path", "sink-location"),
        ),
        (
            ("spec.pipeline.streaming.checkpointLocation", "file:///checkpoints/orders-v2"),
            ("spec.pipeline.streaming.checkpointLocation", "checkpoint-location"),
        ),
        (
            ("spec.pipeline.streaming.forEachBatchMode", True),
            ("spec.pipeline.streaming.forEachBatchMode", "for-each-batch-mode"),
        ),
        (("spec.processing.guarantee", "NONE"), ("spec.processing.guarantee", "no-checkpoint")),
    ],
)
def test_changes_spark_does_not_allow_are_refused_naming_field_and_rule(
    change: tuple[str, Any], refused: tuple[str, str]
) -> None:
    assert rules_of(change) == [refused]


def test_a_refusal_says_what_changed_and_what_to_do() -> None:
    old = orders_manifest()
    new = changed(old, ("spec.pipeline.inputs[0].dataset", "kafka-main:payments"))

    [refusal] = static_changes(job(old), job(new))

    assert "'orders' now reads kafka-main:payments instead of kafka-main:orders" in refusal.message
    assert "--mode stateless" in refusal.message
    assert "a new job" in refusal.message
    assert str(refusal).startswith("spec.pipeline.inputs[0].dataset: input 'orders'")


def test_a_streaming_input_a_query_now_reads_is_refused_at_its_output() -> None:
    joined = "SELECT o.* FROM orders o JOIN clicks c ON o.user = c.user"
    clicks = {
        "name": "clicks",
        "dataset": "kafka-main:clicks",
        "format": "kafkajson",
        "schema": "user STRING, ts TIMESTAMP",
    }

    refused = rules_of(
        ("spec.pipeline.inputs[2]", clicks),
        ("spec.pipeline.steps[0].sequence[1]", {"name": "joined", "sql": joined}),
        ("spec.pipeline.outputs[0].name", "joined"),
    )
    assert refused == []  # a new output's query: it starts afresh, nothing to refuse
    assert rules_of(
        ("spec.pipeline.inputs[2]", clicks),
        (
            "spec.pipeline.steps[0].sequence[0].sql",
            TOTALS_SQL.replace(
                "FROM orders", "FROM (SELECT o.* FROM orders o JOIN clicks c ON o.user = c.user)"
            ),
        ),
    ) == [("spec.pipeline.outputs[0]", "input-added")]


def test_allowed_changes_worth_knowing_come_back_as_warnings() -> None:
    [new_output] = warnings_of(
        ("spec.pipeline.outputs[1]", {"name": "orders", "format": "json", "path": "/lake/orders"})
    )
    assert new_output.startswith("spec.pipeline.outputs[1]: output 'orders' is new")
    assert "startingOffsets" in new_output
    [gone] = warnings_of(
        ("spec.pipeline.steps[0].sequence[0].name", "sums"),
        ("spec.pipeline.outputs[0].name", "sums"),
    )[1:]
    assert "'totals' is gone" in gone
    [starting] = warnings_of(("spec.pipeline.inputs[0].options.startingOffsets", "latest"))
    assert starting.startswith("spec.pipeline.inputs[0].options.startingOffsets: ")
    [watermark] = warnings_of(("spec.pipeline.inputs[0].watermark.delay", "10 minutes"))
    assert "ts delayed by 1 minute to ts delayed by 10 minutes" in watermark
    [store] = warnings_of(("spec.processing.stateStore", "rocksdb"))
    assert "go on with hdfs" in store
    [to_kafka] = warnings_of(
        (
            "spec.pipeline.outputs[0]",
            {"name": "totals", "format": "kafka", "dataset": "kafka-main:t"},
        )
    )
    assert to_kafka.startswith("spec.pipeline.outputs[0].format: ")


def test_a_renamed_output_writing_the_same_place_warns_of_writes_again() -> None:
    warnings = warnings_of(
        ("spec.pipeline.steps[0].sequence[0].name", "sums"),
        ("spec.pipeline.outputs[0].name", "sums"),
    )
    assert "what it wrote may be written again" in warnings[0]


def test_programs_have_no_rules_and_changing_the_application_type_is_refused() -> None:
    python = job(python_manifest("orders"))
    result = review(python, python)
    assert result.refusals == []
    assert "no rules to compare and no dry run" in result.warnings[0]
    [refusal] = static_changes(job(orders_manifest()), python)
    assert refusal.rule == "application-type"


def test_queries_and_the_streaming_inputs_they_read() -> None:
    pipeline = job(orders_manifest()).spec.pipeline
    assert pipeline is not None
    assert output_keys(pipeline) == ["totals"]
    assert streaming_inputs_read(pipeline, "totals") == {"orders"}
    doubled = job(
        changed(
            orders_manifest(), ("spec.pipeline.outputs[1]", {"name": "totals", "format": "console"})
        )
    ).spec.pipeline
    assert doubled is not None
    assert output_keys(doubled) == ["totals-0", "totals-1"]


# -- the dry run's failures, as a person reads them -------------------------------------------

KEY_SCHEMA_FAILURE = (
    "[STREAM_FAILED] Query [id = 5ac2, runId = 331d] terminated with exception: "
    "[STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE] Provided key schema does not match existing state "
    "key schema.\nPlease check number and type of fields.\nExisting key_schema=StructType("
    "StructField(window,StructType(StructField(start,TimestampType,true),StructField(end,"
    "TimestampType,true)),false),StructField(user,StringType,true)) and new key_schema=StructType("
    "StructField(window,StructType(StructField(start,TimestampType,true),StructField(end,"
    "TimestampType,true)),false),StructField(user,StringType,true),StructField(country,"
    "StringType,true)).\nIf you want to force running the query without schema validation, "
    "please set spark.sql.streaming.stateStore.stateSchemaCheck to false.\n=== Streaming Query ==="
    "\nIdentifier: [id = 5ac2]\nLogical Plan:\n~WriteToMicroBatchDataSource NoopTable"
)
METADATA_FAILURE = (
    "[STREAM_FAILED] Query [id = 48] terminated with exception: "
    "[STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA] Streaming stateful operator name "
    "does not match with the operator in state metadata. This likely to happen when user "
    "adds/removes/changes stateful operator of existing streaming query.\nStateful operators in "
    "the metadata: [(OperatorId: 0 -> OperatorName: stateStoreSave)]; Stateful operators in "
    "current batch: [(OperatorId: 0 -> OperatorName: dedupe), (OperatorId: 1 -> OperatorName: "
    "stateStoreSave)]. SQLSTATE: 42K03"
)
WINDOW = (
    "StructType(StructField(window,StructType(StructField(start,TimestampType,true),"
    "StructField(end,TimestampType,true)),false),StructField(user,StringType,true))"
)


def test_a_key_schema_failure_names_the_operator_and_the_columns() -> None:
    assert error_condition(KEY_SCHEMA_FAILURE) == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
    operators = (
        StoredOperator(operator_id=0, operator_name="dedupe", key_schema="StructType()"),
        StoredOperator(operator_id=1, operator_name="stateStoreSave", key_schema=WINDOW),
    )
    check = QueryCheck(
        query="totals", batch=4, error=error_summary(KEY_SCHEMA_FAILURE), operators=operators
    )

    refusal = explain(check, where="spec.pipeline.outputs[0]")

    assert refusal.rule == "state-key-schema"
    assert refusal.message.startswith(
        "the state key of operator 1 (an aggregation) changed: column country string added "
        "(query 'totals', batch 4 replayed)."
    )
    assert (
        "now it is (window struct<start timestamp, end timestamp>, user string, country string)"
        in refusal.message
    )
    assert "--mode stateless" in refusal.message


def test_a_changed_operator_list_says_which_operators_came_and_went() -> None:
    refusal = explain(
        QueryCheck(query="totals", batch=2, error=METADATA_FAILURE), where="spec.pipeline"
    )

    assert refusal.rule == "stateful-operators"
    assert "operator 0 (a deduplication) was an aggregation" in refusal.message
    assert "operator 1 (an aggregation) was added" in refusal.message


def test_the_tools_own_operator_check_reads_like_sparks() -> None:
    message = operators_changed_message([(0, "stateStoreSave")], ["stateStoreSave", "dedupe"])
    check = QueryCheck(query="totals", batch=0, error=message, error_class=OPERATORS_CHANGED)

    assert "operator 1 (a deduplication) was added" in explain(check, where="p").message


def test_other_failures_say_what_spark_said_without_its_plan() -> None:
    summary = error_summary(KEY_SCHEMA_FAILURE)
    assert "Logical Plan" not in summary
    assert "Existing key_schema" in summary
    timed_out = explain(
        QueryCheck(query="q", batch=3, error="late", error_class=TIMED_OUT), where="p"
    )
    assert timed_out.rule == "dry-run-timeout"
    other = explain(QueryCheck(query="q", batch=3, error="[TABLE_OR_VIEW_NOT_FOUND] x"), where="p")
    assert other.rule == "dry-run-failed"
    assert "[TABLE_OR_VIEW_NOT_FOUND] x" in other.message


def test_schemas_as_spark_prints_them_read_as_columns() -> None:
    assert parse_struct(WINDOW) == [
        ("window", "struct<start timestamp, end timestamp>"),
        ("user", "string"),
    ]
    assert parse_struct(
        "StructType(StructField(m,MapType(StringType,DecimalType(12,2),true),true),"
        "StructField(a,ArrayType(LongType,true),true))"
    ) == [("m", "map<string, decimal(12,2)>"), ("a", "array<bigint>")]
    assert parse_struct("not a schema") is None
    assert column_changes([("a", "int"), ("b", "string")], [("a", "bigint"), ("c", "string")]) == [
        "lost column b string",
        "column c string added",
        "column a changed from int to bigint",
    ]


def test_the_tools_answer_is_checked_strictly() -> None:
    result = parse_result({"compatible": False, "queries": [{"query": "totals", "batch": 2}]})
    assert result.queries[0].batch == 2
    with pytest.raises(UnreadableResult, match="compatible"):
        parse_result({"compatible": "yes"})
    with pytest.raises(UnreadableResult, match="no answer"):
        parse_result(None)
