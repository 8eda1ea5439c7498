"""The compatibility check of an upgrade on each backend, over a tool runner that answers as told:
static refusals before any dry run, the dry run on a copy of the checkpoint (removed after), its
failures explained at their output, and what there is nothing to check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamjobs.domain.access import Permission
from streamjobs.domain.errors import Conflict, FieldConflict, Forbidden, InvalidInput
from streamjobs.domain.states import AppState
from streamjobs.launch.tool_runs import FakeToolRunner, ToolResult, ToolRun
from streamjobs.services.compatibility import CompatibilityCheck
from tests.factories import changed, python_manifest
from tests.usecases.snapshot_fixtures import (
    ADMIN,
    BUNDLE,
    QUERY,
    World,
    world,
    write_checkpoint,
)

__all__ = ["world"]

pytestmark = pytest.mark.snapshots

KEY_SCHEMA_FAILURE = (
    "[STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE] Provided key schema does not match existing state "
    "key schema.\nExisting key_schema=StructType(StructField(user,StringType,true)) and new "
    "key_schema=StructType(StructField(id,LongType,true)).\nIf you want to force it"
)


def answering(document: dict[str, Any] | None, **result: Any) -> FakeToolRunner:
    """A tool runner whose every run answers ``document``."""
    fields = {"exit_code": 0, "stderr_tail": "", "timed_out": False, **result}
    return FakeToolRunner(lambda run: ToolResult(result=document, **fields))


def check_over(world: World, tools: FakeToolRunner, tmp_path: Path) -> CompatibilityCheck:
    return CompatibilityCheck(
        store=world.services.store,
        clock=world.clock,
        tools=tools,
        checkpoint_root=world.services.settings.resolved_checkpoint_root,
        work_directory=tmp_path / "work",
    )


def manifest_of(world: World, job: str) -> dict[str, Any]:
    with world.services.store.reading() as repos:
        return dict(repos.jobs.get(job).manifest)


def test_a_fitting_spec_is_replayed_on_a_copy_that_is_removed_after(
    world: World, tmp_path: Path
) -> None:
    job = world.job()
    application = world.running(job)
    write_checkpoint(world.checkpoint(job), 2)
    seen: list[tuple[ToolRun, list[str]]] = []

    def answer(run: ToolRun) -> ToolResult:
        copy = Path(run.arguments[run.arguments.index("--checkpoint") + 1])
        seen.append((run, sorted(path.name for path in (copy / QUERY / "commits").iterdir())))
        document = {"compatible": True, "queries": [{"query": QUERY, "batch": 2}]}
        return ToolResult(0, document, "", timed_out=False)

    new = changed(
        manifest_of(world, job),
        ("spec.pipeline.steps[0].sequence[0].sql", "SELECT * FROM ticks WHERE value > 0"),
    )
    report = check_over(world, FakeToolRunner(answer), tmp_path).check(job, new, actor=ADMIN)

    assert report.compatible
    assert report.refusals == []
    assert report.dry_run is not None
    assert [(query.query, query.batch) for query in report.dry_run.queries] == [(QUERY, 2)]
    report.raise_if_incompatible()
    [(run, commits)] = seen
    assert run.tool == "dry-run"
    assert commits == ["0", "1", "2"]
    assert (run.readable, run.writable) == ([], [])
    assert run.directory.parent == tmp_path / "work"
    assert run.run_as == "admin"
    assert not list((tmp_path / "work").iterdir()), "the copy is removed"
    assert (world.checkpoint(job) / QUERY / "commits" / "2").is_file()
    with world.services.store.reading() as repos:
        after = repos.applications.get(application.id)
    assert (after.state, after.version, after.requested) == (AppState.RUNNING, 1, None)


def test_a_static_refusal_ends_the_check_before_any_dry_run(world: World, tmp_path: Path) -> None:
    job = world.job()
    world.running(job)
    write_checkpoint(world.checkpoint(job), 1)
    tools = answering({"compatible": True})
    new = changed(manifest_of(world, job), ("spec.pipeline.streaming.forEachBatchMode", True))

    report = check_over(world, tools, tmp_path).check(job, new, actor=ADMIN)

    assert not report.compatible
    assert [refusal.rule for refusal in report.refusals] == ["for-each-batch-mode"]
    assert report.dry_run is None
    assert tools.runs == []
    with pytest.raises(FieldConflict, match=r"spec.pipeline.streaming.forEachBatchMode: changed"):
        report.raise_if_incompatible()


def test_the_dry_runs_failures_are_explained_at_their_output(world: World, tmp_path: Path) -> None:
    job = world.job()
    world.running(job)
    write_checkpoint(world.checkpoint(job), 3)
    failed = {
        "query": QUERY,
        "batch": 3,
        "error": KEY_SCHEMA_FAILURE,
        "errorClass": "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE",
        "operators": [{"operatorId": 0, "operatorName": "stateStoreSave"}],
    }
    tools = answering({"compatible": False, "queries": [failed]})

    report = check_over(world, tools, tmp_path).check(job, actor=ADMIN)

    assert not report.compatible
    assert report.dry_run is not None
    [failure] = report.dry_run.failures
    assert (failure.path, failure.rule) == ("spec.pipeline.outputs[0]", "state-key-schema")
    assert "operator 0 (an aggregation)" in failure.message
    wire = report.to_wire()
    assert wire["dryRun"]["queries"] == [{"query": QUERY, "batch": 3, "compatible": False}]
    with pytest.raises(FieldConflict) as refused:
        report.raise_if_incompatible()
    assert "spec.pipeline.outputs[0]: the state key of operator 0" in refused.value.detail


@pytest.mark.parametrize(
    "result",
    [
        {"exit_code": None, "result": None, "timed_out": True},
        {"exit_code": 1, "result": None, "timed_out": False},
        {"exit_code": 1, "result": {"compatible": False, "error": "no Kafka"}, "timed_out": False},
    ],
)
def test_a_dry_run_that_did_not_answer_refuses_saying_so(
    world: World, tmp_path: Path, result: dict[str, Any]
) -> None:
    job = world.job()
    world.running(job)
    write_checkpoint(world.checkpoint(job), 1)
    tools = FakeToolRunner(lambda run: ToolResult(stderr_tail="log", **result))

    report = check_over(world, tools, tmp_path).check(job, actor=ADMIN)

    assert not report.compatible
    assert report.dry_run is not None
    assert [failure.rule for failure in report.dry_run.failures] == ["dry-run-failed"]


def test_without_a_live_application_the_checkpoint_alone_is_checked(
    world: World, tmp_path: Path
) -> None:
    job = world.job()
    tools = answering({"compatible": True, "queries": []})
    with pytest.raises(Conflict, match="nothing to check"):
        check_over(world, tools, tmp_path).check(job, actor=ADMIN)
    write_checkpoint(world.checkpoint(job), 1)

    report = check_over(world, tools, tmp_path).check(job, actor=ADMIN)

    assert report.compatible
    assert "no application of the job is live" in report.warnings[0]
    assert len(tools.runs) == 1


def test_a_checkpoint_holding_a_link_is_not_copied(world: World, tmp_path: Path) -> None:
    job = world.job()
    world.running(job)
    checkpoint = world.checkpoint(job)
    write_checkpoint(checkpoint, 1)
    (tmp_path / "secret").write_text("the server's")
    (checkpoint / QUERY / "state").symlink_to(tmp_path / "secret")
    tools = answering({"compatible": True})

    with pytest.raises(Conflict, match="symbolic link"):
        check_over(world, tools, tmp_path).check(job, actor=ADMIN)
    assert tools.runs == []
    assert not list((tmp_path / "work").iterdir())


def test_only_who_may_upgrade_checks_and_only_this_jobs_manifest(
    world: World, tmp_path: Path
) -> None:
    job = world.job()
    world.running(job)
    viewer = world.grant("viewer", Permission.VIEW)
    check = check_over(world, answering({"compatible": True}), tmp_path)
    with pytest.raises(Forbidden):
        check.check(job, actor=viewer)
    other = changed(manifest_of(world, job), ("metadata.name", "another"))
    with pytest.raises(InvalidInput, match=r"metadata\.name"):
        check.check(job, other, actor=ADMIN)


def test_a_program_has_nothing_to_compare_and_says_so(world: World, tmp_path: Path) -> None:
    manifest = python_manifest("program")
    manifest["spec"]["bundle"] = BUNDLE
    world.services.jobs.create(manifest, actor=ADMIN)
    world.running("program")
    tools = answering({"compatible": True})

    report = check_over(world, tools, tmp_path).check("program", actor=ADMIN)

    assert report.compatible
    assert report.dry_run is None
    assert "no rules to compare and no dry run" in report.warnings[0]
    assert tools.runs == []
