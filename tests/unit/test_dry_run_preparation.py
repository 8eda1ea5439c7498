"""What the dry run does before Spark runs: the checkpoint copy rewound by one batch, and the job
turned into one that writes nothing, triggers once and starts only queries with a checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.domain.manifest import OutputFormat, TriggerMode
from streamjobs.domain.spec import parse_manifest
from streamjobs.runner import tool_main
from streamjobs.runner.dry_run import rewind, trial_job
from tests.factories import changed, pipeline_manifest

pytestmark = pytest.mark.snapshots


def query_directory(root: Path, *, offsets: int, commits: int) -> Path:
    """A query's checkpoint that planned batches 0..offsets-1 and committed 0..commits-1."""
    for entry, count in (("offsets", offsets), ("commits", commits)):
        (root / entry).mkdir(parents=True)
        for number in range(count):
            (root / entry / str(number)).write_text("v1\n{}\n")
            (root / entry / f".{number}.crc").write_bytes(b"")
    return root


def test_the_last_committed_batch_is_replayed(tmp_path: Path) -> None:
    query = query_directory(tmp_path / "q", offsets=3, commits=3)

    assert rewind(query) == 2
    assert sorted(path.name for path in (query / "commits").iterdir()) == [
        ".0.crc",
        ".1.crc",
        "0",
        "1",
    ]


def test_a_batch_planned_and_not_committed_is_replayed_as_it_is(tmp_path: Path) -> None:
    query = query_directory(tmp_path / "q", offsets=4, commits=3)
    assert rewind(query) == 3
    assert (query / "commits" / "2").is_file()
    assert rewind(query_directory(tmp_path / "empty", offsets=0, commits=0)) is None


def test_the_trial_writes_nothing_triggers_once_and_keeps_queries_with_a_checkpoint() -> None:
    manifest = changed(
        pipeline_manifest("orders"),
        ("spec.pipeline.explain", True),
        ("spec.pipeline.showPreviewLines", 5),
        ("spec.pipeline.outputs[1]", {"name": "ticks", "format": "console"}),
    )
    job = parse_manifest(manifest)

    trial = trial_job(job, checkpoint="file:///copy", keys=["evens"])

    pipeline = trial.spec.pipeline
    assert pipeline is not None
    assert [output.name for output in pipeline.outputs] == ["evens"]
    assert [output.format for output in pipeline.outputs] == [OutputFormat.PARQUET]
    assert pipeline.outputs[0].path is None
    assert pipeline.streaming.trigger_mode is TriggerMode.ONCE
    assert pipeline.streaming.checkpoint_location == "file:///copy"
    assert (pipeline.explain, pipeline.show_preview_lines) == (False, 0)
    assert job.spec.pipeline is not None
    assert job.spec.pipeline.outputs[0].path is not None, "the job itself is left as it was"


def test_outputs_are_all_kept_when_leaving_some_out_would_rename_the_others() -> None:
    manifest = changed(
        pipeline_manifest("orders"),
        ("spec.pipeline.outputs[1]", {"name": "evens", "format": "console"}),
    )

    trial = trial_job(parse_manifest(manifest), checkpoint="file:///copy", keys=["evens-1"])

    assert trial.spec.pipeline is not None
    assert len(trial.spec.pipeline.outputs) == 2


def test_the_tool_entry_refuses_a_tool_it_does_not_know(capsys: pytest.CaptureFixture[str]) -> None:
    assert tool_main.main(["compact", "--result-file", "/nowhere"]) == 2
    assert "dry-run,state" in capsys.readouterr().err
