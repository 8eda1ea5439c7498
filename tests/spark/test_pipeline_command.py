"""``streamjobs pipeline run`` as a person runs it: its own process, its own Spark, its stdout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.spark.pipelines import pipeline_job
from tests.spark.test_file_pipelines import EVENT_SCHEMA, events, write_events

pytestmark = pytest.mark.spark


def test_console_output_and_preview_lines_print_the_rows(tmp_path: Path) -> None:
    write_events(tmp_path / "in", "a.json", events(0, 6))
    job = pipeline_job(
        "to-console",
        inputs=[
            {"name": "e", "format": "json", "path": str(tmp_path / "in"), "schema": EVENT_SCHEMA}
        ],
        steps=[
            [("shown", "SELECT id, concat('user-', user) AS who FROM e")],
            [("stored", "SELECT id FROM e")],
        ],
        outputs=[
            {"name": "shown", "format": "console", "options": {"truncate": False}},
            {"name": "stored", "format": "parquet", "path": str(tmp_path / "stored")},
        ],
    )
    job["spec"]["pipeline"]["showPreviewLines"] = 2
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump(job))
    finished = subprocess.run(
        [sys.executable, "-m", "streamjobs.cli", "pipeline", "run", "-f", str(manifest)],
        env={**os.environ, "STREAMJOBS_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    out = finished.stdout
    for i in range(6):
        assert f"user-u{i % 3}" in out
    assert out.count("only showing top 2 rows") >= 1, out[-3000:]
    assert "batch 0" in out
