"""batchMode pipelines and saveMode: what a batch job refuses, and where saveMode applies."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.spec import resolved_template
from tests.unit.manifests import (
    DELETE,
    EXACTLY_ONCE,
    INPUT,
    KAFKA_JSON_INPUT,
    OUTPUT,
    STREAMING,
    assert_error,
    broken,
    changed,
    errors_of,
    parse,
    pipeline_manifest,
)

FILES_IN = {"name": "ticks", "format": "parquet", "path": "/data/in", "isStream": False}
BATCH = changed(
    pipeline_manifest(),
    ("spec.pipeline.batchMode", True),
    (STREAMING, DELETE),
    (INPUT, FILES_IN),
)
SAVE_MODE = f"{OUTPUT}.options.saveMode"


def test_a_batch_pipeline_over_files_parses_and_derives_no_checkpoint() -> None:
    job = parse(changed(BATCH, (f"{INPUT}.isStream", True)), checkpoint_root="file:///cp")
    template = resolved_template(job, checkpoint_root="file:///cp")
    assert template["spec"]["pipeline"]["batchMode"] is True
    assert template["spec"]["pipeline"]["streaming"]["checkpointLocation"] is None
    streaming = parse(pipeline_manifest(), checkpoint_root="file:///cp")
    derived = resolved_template(streaming, checkpoint_root="file:///cp")
    assert (
        derived["spec"]["pipeline"]["streaming"]["checkpointLocation"] == "file:///cp/default/ticks"
    )


@pytest.mark.parametrize(
    ("manifest", "path", "message_part"),
    [
        broken(
            BATCH,
            [(f"{STREAMING}.triggerMode", "AvailableNow")],
            f"{STREAMING}.triggerMode",
            "with no trigger; remove triggerMode",
            "trigger mode",
        ),
        broken(
            BATCH,
            [(f"{STREAMING}.triggerDuration", "5 seconds")],
            f"{STREAMING}.triggerDuration",
            "remove triggerDuration",
            "trigger duration",
        ),
        broken(
            BATCH,
            [(f"{STREAMING}.forEachBatchMode", True)],
            f"{STREAMING}.forEachBatchMode",
            "turn forEachBatchMode off",
            "foreachBatch",
        ),
        broken(
            BATCH,
            [(f"{STREAMING}.checkpointLocation", "file:///cp/x")],
            f"{STREAMING}.checkpointLocation",
            "a batch job keeps no checkpoint",
            "checkpoint",
        ),
        broken(
            BATCH, [EXACTLY_ONCE], "spec.processing.guarantee", "cannot give EXACTLY_ONCE", "eo"
        ),
        broken(
            BATCH,
            [(INPUT, {"name": "ticks", "format": "rate"})],
            f"{INPUT}.format",
            "the rate source only streams",
            "rate",
        ),
        broken(
            BATCH,
            [(f"{INPUT}.watermark", {"column": "ts", "delay": "1 minute"})],
            f"{INPUT}.watermark",
            "a watermark bounds a stream's state",
            "watermark",
        ),
        broken(
            BATCH,
            [(f"{INPUT}.options", {"maxFilesPerTrigger": 10})],
            f"{INPUT}.options.maxFilesPerTrigger",
            "limits each micro-batch",
            "per trigger",
        ),
        broken(
            BATCH,
            [
                (
                    INPUT,
                    {**KAFKA_JSON_INPUT, "name": "ticks", "options": {"startingOffsets": "latest"}},
                )
            ],
            f"{INPUT}.options.startingOffsets",
            "'latest' would read nothing",
            "kafka latest",
        ),
        broken(
            BATCH,
            [(f"{OUTPUT}.outputMode", "complete")],
            f"{OUTPUT}.outputMode",
            "outputMode is for streaming queries",
            "output mode",
        ),
    ],
)
def test_batch_mode_refuses_what_only_a_stream_has(
    manifest: dict[str, Any], path: str, message_part: str
) -> None:
    assert_error(manifest, path, message_part)


def test_a_batch_kafka_read_may_start_anywhere_but_latest() -> None:
    kafka = {**KAFKA_JSON_INPUT, "name": "ticks", "options": {"startingOffsets": "earliest"}}
    manifest = changed(BATCH, (INPUT, kafka))
    assert parse(manifest).spec.pipeline is not None


@pytest.mark.parametrize("mode", ["append", "overwrite", "errorifexists", "ignore", "Overwrite"])
def test_every_save_mode_is_taken_by_a_batch_file_output(mode: str) -> None:
    job = parse(changed(BATCH, (f"{OUTPUT}.options", {"saveMode": mode})))
    assert job.spec.pipeline is not None


@pytest.mark.parametrize("mode", ["truncate", "", 3, None])
def test_an_unknown_save_mode_is_refused(mode: Any) -> None:
    assert_error(
        changed(BATCH, (f"{OUTPUT}.options", {"saveMode": mode})),
        SAVE_MODE,
        "is not a save mode: use one of append, overwrite, errorifexists, ignore",
    )


def test_a_streaming_query_takes_no_save_mode_but_append() -> None:
    streaming = changed(pipeline_manifest(), (f"{OUTPUT}.options", {"saveMode": "overwrite"}))
    assert_error(streaming, SAVE_MODE, "a streaming query appends what each trigger gives")
    appending = changed(pipeline_manifest(), (f"{OUTPUT}.options", {"saveMode": "append"}))
    assert parse(appending).spec.pipeline is not None
    for_each_batch = changed(streaming, (f"{STREAMING}.forEachBatchMode", True))
    assert parse(for_each_batch).spec.pipeline is not None


@pytest.mark.parametrize(
    ("output", "mode", "message_part"),
    [
        ({"format": "kafka", "dataset": "kafka-main:out"}, "overwrite", "errorifexists"),
        ({"format": "console"}, "ignore", "its saveMode is append"),
        (
            {"format": "jdbc", "dataset": "db:t", "options": {"keyColumns": ["id"]}},
            "overwrite",
            "upserts by key",
        ),
    ],
)
def test_sinks_that_take_only_some_save_modes(
    output: dict[str, Any], mode: str, message_part: str
) -> None:
    options = {**output.pop("options", {}), "saveMode": mode}
    manifest = changed(BATCH, (OUTPUT, {"name": "evens", **output, "options": options}))
    assert_error(manifest, SAVE_MODE, message_part)


def test_every_batch_refusal_is_reported_at_once() -> None:
    manifest = changed(
        BATCH,
        (f"{STREAMING}.triggerMode", "Once"),
        (f"{OUTPUT}.options", {"saveMode": "sometimes"}),
    )
    paths = {error.path for error in errors_of(manifest)}
    assert {f"{STREAMING}.triggerMode", SAVE_MODE} <= paths
