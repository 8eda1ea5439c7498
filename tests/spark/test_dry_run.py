"""The dry run of an upgrade: a windowed aggregation's checkpoint, and new specs replaying its
last batch on a copy of it, in the shared session (``runner.dry_run``) and once as the server runs
it (the compatibility check, ``spark-submit`` of the tool in its sandbox as the job's account)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.dry_runs import DryRunResult, explain
from streamjobs.domain.spec import parse_manifest, resolved_template
from streamjobs.domain.states import AppState
from streamjobs.launch.command import Toolchain
from streamjobs.launch.tool_runs import SparkSubmitToolRunner
from streamjobs.launch.tool_sandbox import ToolSandbox
from streamjobs.runner.dry_run import dry_run
from streamjobs.services.compatibility import CompatibilityCheck
from streamjobs.services.container import Services, open_services
from streamjobs.settings import Settings
from tests.factories import changed
from tests.spark.conftest import PipelineRunner
from tests.spark.pipelines import pipeline_job

pytestmark = [pytest.mark.spark, pytest.mark.snapshots]
ADMIN = Actor(Principal("admin", is_admin=True))

WINDOWED_TOTALS = (
    "SELECT window(ts, '5 minutes') AS slot, user, sum(amount) AS total "
    "FROM {source} GROUP BY window(ts, '5 minutes'), user"
)


def totals_job(directory: Path, *steps: tuple[str, str]) -> dict[str, Any]:
    """Events from JSON files (one file a batch), totals per user and 5-minute window."""
    return pipeline_job(
        "totals",
        inputs=[
            {
                "name": "events",
                "format": "json",
                "path": str(directory / "events"),
                "schema": "id BIGINT, user STRING, amount DOUBLE, ts TIMESTAMP",
                "watermark": {"column": "ts", "delay": "1 minute"},
                "options": {"maxFilesPerTrigger": 1},
            }
        ],
        steps=[list(steps or [("totals", WINDOWED_TOTALS.format(source="events"))])],
        outputs=[{"name": "totals", "format": "parquet", "path": str(directory / "out")}],
    )


@pytest.fixture(scope="module")
def checkpoint(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkpoint of ``totals_job`` after three batches (one per file)."""
    directory = tmp_path_factory.mktemp("dry-run")
    (directory / "events").mkdir()
    for number in range(3):
        moment = f"2026-01-01T00:0{number}:00"
        rows = [
            {"id": number * 10 + i, "user": f"u{i}", "amount": 1.0, "ts": moment} for i in range(3)
        ]
        (directory / "events" / f"{number}.json").write_text(
            "\n".join(json.dumps(row) for row in rows) + "\n"
        )
    runner = PipelineRunner(directory)
    assert runner.run(totals_job(directory)) == 0
    query = directory / "checkpoints" / "default" / "totals" / "totals"
    assert len([name for name in (query / "commits").iterdir() if name.name.isdigit()]) >= 2
    return directory


def dry_run_of(
    spark: SparkSession, directory: Path, manifest: dict[str, Any], copy: Path
) -> DryRunResult:
    """The dry run of ``manifest`` against a fresh copy of the module's checkpoint."""
    shutil.copytree(directory / "checkpoints" / "default" / "totals", copy)
    return dry_run(
        spark,
        parse_manifest(manifest),
        connections={},
        secrets={},
        checkpoint=copy,
        timeout_seconds=120,
    )


def test_a_filter_added_in_a_stateless_step_fits_the_checkpoint(
    spark: SparkSession, checkpoint: Path, tmp_path: Path
) -> None:
    new = totals_job(
        checkpoint,
        ("valid", "SELECT * FROM events WHERE amount >= 0"),
        ("totals", WINDOWED_TOTALS.format(source="valid")),
    )

    result = dry_run_of(spark, checkpoint, new, tmp_path / "copy")

    assert result.compatible, result
    [query] = result.queries
    assert query.query == "totals"
    assert query.batch is not None
    assert query.batch >= 1
    assert [operator.operator_name for operator in query.operators] == ["stateStoreSave"]
    original = checkpoint / "checkpoints" / "default" / "totals" / "totals" / "commits"
    assert (original / str(query.batch)).is_file(), "the original checkpoint is left as it was"


def test_a_changed_aggregation_key_is_named_with_its_operator_and_schemas(
    spark: SparkSession, checkpoint: Path, tmp_path: Path
) -> None:
    by_id = WINDOWED_TOTALS.format(source="events").replace("user", "id")
    new = totals_job(checkpoint, ("totals", by_id))

    result = dry_run_of(spark, checkpoint, new, tmp_path / "copy")

    assert not result.compatible
    [query] = result.queries
    assert query.error_class == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
    refusal = explain(query, where="spec.pipeline.outputs[0]")
    assert refusal.rule == "state-key-schema"
    assert "operator 0 (an aggregation)" in refusal.message
    assert "lost column user string" in refusal.message
    assert "column id bigint added" in refusal.message
    assert "--mode stateless" in refusal.message


def test_a_new_stateful_step_is_refused_naming_the_added_operator(
    spark: SparkSession, checkpoint: Path, tmp_path: Path
) -> None:
    new = totals_job(
        checkpoint,
        ("unique", "SELECT DISTINCT * FROM events"),
        ("totals", WINDOWED_TOTALS.format(source="unique")),
    )

    result = dry_run_of(spark, checkpoint, new, tmp_path / "copy")

    assert not result.compatible
    [query] = result.queries
    refusal = explain(query, where="spec.pipeline.outputs[0]")
    assert refusal.rule == "stateful-operators", query
    assert "operator 1 (an aggregation) was added" in refusal.message


def test_the_check_runs_the_dry_run_tool_sandboxed_against_a_copy(
    checkpoint: Path, tmp_path: Path
) -> None:
    """The whole check as the server runs it: the job stored with a live application, the
    checkpoint copied, ``spark-submit tool_main.py dry-run`` in its sandbox as the job's
    account, its answer explained, the copy removed."""
    settings = Settings(home=tmp_path / "home")
    services = open_services(settings)
    services.bundles.create("dry", actor=ADMIN, data_roots=[checkpoint.as_uri()])
    located = {"checkpointLocation": str(checkpoint / "checkpoints" / "default" / "totals")}
    old = totals_job(checkpoint)
    old["spec"]["bundle"] = "dry"
    old["spec"]["pipeline"]["streaming"].update(located)
    services.jobs.create(old, actor=ADMIN)
    running(services, "totals")
    by_id = WINDOWED_TOTALS.format(source="events").replace("user", "id")
    new = changed(old, ("spec.pipeline.steps[0].sequence[0].sql", by_id))
    toolchain = Toolchain.installed()
    sandbox = ToolSandbox(
        hidden=[settings.resolved_home], identity_homes=tmp_path / "identities", toolchain=toolchain
    )
    work = settings.resolved_home / "tool-runs"
    check = CompatibilityCheck(
        store=services.store,
        clock=services.clock,
        tools=SparkSubmitToolRunner(toolchain=toolchain, sandbox=sandbox),
        checkpoint_root=settings.resolved_checkpoint_root,
        work_directory=work,
    )

    report = check.check("totals", new, actor=ADMIN)

    assert report.dry_run is not None, report
    assert not report.compatible, report
    [failure] = report.dry_run.failures
    assert (failure.path, failure.rule) == ("spec.pipeline.outputs[0]", "state-key-schema")
    assert "operator 0 (an aggregation)" in failure.message
    assert not list(work.iterdir()), "the copy and the tool's files are removed"
    services.store.close()


def running(services: Services, job: str) -> None:
    """A RUNNING application of ``job``, stored as Run stores one."""
    root = services.settings.resolved_checkpoint_root
    with services.store.transaction() as repos:
        record = repos.jobs.get(job)
        spec = resolved_template(
            parse_manifest(record.manifest, checkpoint_root=root), checkpoint_root=root
        )
        repos.applications.add(
            job_name=job,
            namespace=record.namespace,
            bundle=record.bundle,
            tags={},
            spec=spec,
            state=AppState.RUNNING,
            triggered_by="admin",
            run_as="admin",
            at=services.clock.now(),
            job_version=record.version,
        )
