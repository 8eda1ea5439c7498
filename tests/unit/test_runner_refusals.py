"""The runner refuses a bad pipeline before Spark starts: exit code 2 and the field path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.factories import changed, pipeline_manifest

KAFKA = {
    "apiVersion": "streamjobs.io/v1",
    "kind": "Connection",
    "metadata": {"name": "kafka-main"},
    "spec": {
        "type": "kafka",
        "bootstrapServers": "127.0.0.1:9",
        "secretOptions": {"kafka.sasl.jaas.config": "jaas"},
    },
}


def run_runner(
    tmp_path: Path, manifest: dict[str, Any], *extra: str
) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(manifest))
    return subprocess.run(
        [sys.executable, "-m", "streamjobs.runner", "--manifest", str(path), *extra],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        (("spec.pipeline.inputs[0].format", "avro"), "spec.pipeline.inputs[0].format", "must be"),
        (
            ("spec.pipeline.inputs[0]", {"name": "ticks", "format": "json", "path": "/in"}),
            "spec.pipeline.inputs[0].schema",
            "schema",
        ),
        (
            ("spec.pipeline.steps[0].sequence[0].sql", "SELECT * FROM tickz"),
            "spec.pipeline.steps[0].sequence[0].sql",
            "tickz",
        ),
        (
            (
                "spec.pipeline.streaming",
                {"triggerMode": "Continuous", "triggerDuration": "1 second"},
            ),
            "spec.pipeline.outputs[0].format",
            "cannot write parquet",
        ),
    ],
)
def test_bad_pipelines_stop_before_spark(
    tmp_path: Path, change: tuple[str, Any], path: str, words: str
) -> None:
    result = run_runner(tmp_path, changed(pipeline_manifest(), change))
    assert result.returncode == 2, result.stderr
    assert path in result.stderr
    assert words in result.stderr
    assert "SparkContext" not in result.stderr


def test_unknown_connections_and_missing_secrets_stop_before_spark(tmp_path: Path) -> None:
    manifest = changed(
        pipeline_manifest(),
        (
            "spec.pipeline.inputs[0]",
            {"name": "ticks", "format": "kafka", "dataset": "kafka-main:t"},
        ),
        ("spec.pipeline.outputs[0].dataset", "nowhere:out"),
    )
    del manifest["spec"]["pipeline"]["outputs"][0]["path"]
    connections = tmp_path / "connections.yaml"
    connections.write_text(yaml.safe_dump(KAFKA))
    result = run_runner(tmp_path, manifest, "--connections", str(connections))
    assert result.returncode == 2
    assert (
        "spec.pipeline.inputs[0].dataset: connection 'kafka-main' needs secret 'jaas'"
        in result.stderr
    )
    assert "spec.pipeline.outputs[0].dataset: connection 'nowhere' is not defined" in result.stderr
