"""The CLI refuses what the server would ignore, before sending it, and Run's refusal of a
standard job on a server without a standalone master exits non-zero naming the setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run, write
from tests.factories import changed, pipeline_manifest, python_manifest


@pytest.mark.parametrize("command", ["validate", "apply"])
def test_kubernetes_fields_and_a_programs_guarantee_exit_2(
    cli: CliRunner, tmp_path: Path, command: str, job_name: str
) -> None:
    manifest = changed(
        python_manifest(job_name),
        ("spec.application.image", "registry.example.com/job:1.0"),
        ("spec.processing.guarantee", "NONE"),
    )
    result = run(cli, command, "-f", str(write(tmp_path / "job.yaml", manifest)))
    assert result.exit_code == 2, result.output
    assert "spec.application.image: a container image needs the Kubernetes deployment" in (
        result.output
    )
    assert "spec.processing.guarantee: python/jvm jobs manage their own delivery guarantee" in (
        result.output
    )
    assert run(cli, "get", "job", job_name).exit_code != 0


def test_a_batch_job_with_a_trigger_exits_2(cli: CliRunner, tmp_path: Path, job_name: str) -> None:
    manifest = changed(
        pipeline_manifest(job_name),
        ("spec.pipeline.batchMode", True),
        ("spec.pipeline.inputs[0]", {"name": "ticks", "format": "parquet", "path": "/tmp/out/x"}),
        ("spec.pipeline.streaming", {"triggerMode": "Once"}),
    )
    result = run(cli, "apply", "-f", str(write(tmp_path / "job.yaml", manifest)))
    assert result.exit_code == 2, result.output
    assert "spec.pipeline.streaming.triggerMode: batchMode reads every input once" in result.output


def test_running_a_standard_job_without_a_master_exits_1(
    cli: CliRunner, tmp_path: Path, job_name: str
) -> None:
    manifest = changed(pipeline_manifest(job_name), ("spec.instance.deployment", "standard"))
    assert run(cli, "apply", "-f", str(write(tmp_path / "job.yaml", manifest))).exit_code == 0
    result = run(cli, "run", job_name)
    assert result.exit_code == 1, result.output
    assert "spec.instance.deployment" in result.output
    assert "STREAMJOBS_SPARK_MASTER" in result.output
