"""The pipeline's steps and outputs: a manifest that breaks each rule, the exact path of the error
and what it says."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.manifests import (
    DELETE,
    EXACTLY_ONCE,
    OUTPUT,
    PIPELINE,
    STEP,
    assert_error,
    broken,
    changed,
    parse,
)


class TestSteps:
    def test_a_step_reads_only_views_defined_before_it(self) -> None:
        manifest = changed(PIPELINE, (f"{STEP}.sql", "SELECT * FROM ticks JOIN ghosts USING (v)"))
        assert_error(
            manifest,
            f"{STEP}.sql",
            "step 'evens' reads view 'ghosts', which no input or earlier step defines; "
            "defined so far: ticks",
        )

    def test_a_step_cannot_read_a_later_step(self) -> None:
        sequence = [
            {"name": "first", "sql": "SELECT * FROM second"},
            {"name": "second", "sql": "SELECT * FROM ticks"},
        ]
        manifest = changed(
            PIPELINE, ("spec.pipeline.steps[0].sequence", sequence), (f"{OUTPUT}.name", "second")
        )
        assert_error(manifest, f"{STEP}.sql", "step 'first' reads view 'second'")

    def test_a_step_cannot_read_itself(self) -> None:
        manifest = changed(PIPELINE, (f"{STEP}.sql", "SELECT * FROM evens"))
        assert_error(manifest, f"{STEP}.sql", "defined so far: ticks")

    def test_steps_read_earlier_steps_across_sequences(self) -> None:
        steps = [
            {"sequence": [{"name": "a", "sql": "SELECT * FROM ticks"}]},
            {
                "sequence": [
                    {"name": "b", "sql": "SELECT * FROM a"},
                    {"name": "evens", "sql": "SELECT * FROM A JOIN b USING (value)"},
                ]
            },
        ]
        assert parse(changed(PIPELINE, ("spec.pipeline.steps", steps))).spec.pipeline is not None

    def test_the_error_lists_earlier_steps_too(self) -> None:
        steps = [
            {"sequence": [{"name": "a", "sql": "SELECT * FROM ticks"}]},
            {"sequence": [{"name": "evens", "sql": "SELECT * FROM nope"}]},
        ]
        assert_error(
            changed(PIPELINE, ("spec.pipeline.steps", steps)),
            "spec.pipeline.steps[1].sequence[0].sql",
            "defined so far: ticks, a",
        )

    @pytest.mark.parametrize(
        "sql",
        [
            "WITH recent AS (SELECT * FROM ticks) SELECT * FROM recent",
            "SELECT * FROM ticks t JOIN warehouse.dims d ON t.value = d.id",
            "SELECT * FROM catalog.db.table_a UNION ALL SELECT * FROM Ticks",
            "SELECT /*+ BROADCAST(d) */ * FROM ticks t JOIN ticks d ON t.value = d.value",
            "SELECT count(*) FROM ticks GROUP BY window(timestamp, '1 minute')",
            "SELECT * FROM ticks WHERE value IN (SELECT value FROM ticks)",
            "SELECT 1 AS one",
        ],
    )
    def test_what_is_not_a_pipeline_view_is_not_checked(self, sql: str) -> None:
        assert parse(changed(PIPELINE, (f"{STEP}.sql", sql))).spec.pipeline is not None

    @pytest.mark.parametrize(
        ("sql", "message_part"),
        [
            ("SELECT * FROM", "step 'evens' does not parse: Expected table name"),
            ("SELECT 'open", "step 'evens' does not parse: Error tokenizing"),
            ("SELECT 1; SELECT 2", "step 'evens' holds 2 statements; a step is one query"),
            ("DROP TABLE ticks", "step 'evens' is not a query (SELECT ...)"),
            ("-- nothing", "step 'evens' holds no query"),
        ],
    )
    def test_sql_that_is_not_one_query(self, sql: str, message_part: str) -> None:
        assert_error(changed(PIPELINE, (f"{STEP}.sql", sql)), f"{STEP}.sql", message_part)

    def test_a_step_cannot_reuse_an_input_name(self) -> None:
        assert_error(
            changed(PIPELINE, (f"{STEP}.name", "ticks"), (f"{OUTPUT}.name", "ticks")),
            f"{STEP}.name",
            "view 'ticks' is already defined at spec.pipeline.inputs[0].name",
        )

    def test_step_names_are_unique_across_steps(self) -> None:
        steps = [
            {"sequence": [{"name": "evens", "sql": "SELECT * FROM ticks"}]},
            {"sequence": [{"name": "evens", "sql": "SELECT * FROM ticks"}]},
        ]
        assert_error(
            changed(PIPELINE, ("spec.pipeline.steps", steps)),
            "spec.pipeline.steps[1].sequence[0].name",
            f"view 'evens' is already defined at {STEP}.name",
        )


class TestOutputs:
    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(
                PIPELINE,
                [(f"{OUTPUT}.name", "nowhere")],
                f"{OUTPUT}.name",
                "output 'nowhere' names no view; an output writes the input or step of its "
                "name, one of: ticks, evens",
                "name-not-a-view",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.format", "avro")],
                f"{OUTPUT}.format",
                "must be 'parquet', 'json', 'csv', 'delta', 'iceberg', 'kafka', 'jdbc' or "
                "'console'",
                "unknown-format",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.path", DELETE)],
                f"{OUTPUT}.dataset",
                "a parquet output needs a dataset",
                "no-location",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.dataset", "lake:evens")],
                f"{OUTPUT}.path",
                "a parquet output takes a dataset or a path, not both",
                "dataset-and-path",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.format", "console")],
                f"{OUTPUT}.path",
                "a console output takes no path: it prints to the driver's log",
                "console-with-path",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.format", "jdbc"), (f"{OUTPUT}.options", {"keyColumns": "id"})],
                f"{OUTPUT}.options.keyColumns",
                "keyColumns must be a list of column names",
                "key-columns-not-a-list",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.options", {"keyColumns": []})],
                f"{OUTPUT}.options.keyColumns",
                "keyColumns must be a list of column names",
                "key-columns-empty",
            ),
            broken(
                PIPELINE,
                [(f"{OUTPUT}.outputMode", "overwrite")],
                f"{OUTPUT}.outputMode",
                "must be 'append', 'update' or 'complete'",
                "output-mode",
            ),
        ],
    )
    def test_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    def test_an_output_may_write_an_input(self) -> None:
        assert parse(changed(PIPELINE, (f"{OUTPUT}.name", "ticks"))).spec.pipeline is not None

    def test_a_console_output_needs_no_location(self) -> None:
        output = {"name": "evens", "format": "console", "outputMode": "update"}
        assert parse(changed(PIPELINE, (OUTPUT, output))).spec.pipeline is not None

    def test_a_jdbc_upsert(self) -> None:
        output = {
            "name": "evens",
            "format": "jdbc",
            "dataset": "warehouse:public.evens",
            "options": {"keyColumns": ["value"], "saveMode": "append"},
        }
        parsed = parse(changed(PIPELINE, (OUTPUT, output), EXACTLY_ONCE), "file:///cp")
        assert parsed.spec.pipeline is not None
        assert parsed.spec.pipeline.outputs[0].options["keyColumns"] == ["value"]
