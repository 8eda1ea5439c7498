"""A batchMode job run by the server: its driver reads once, writes once, and it COMPLETES."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_applications import Server, server, wait_for

__all__ = ["server"]
pytestmark = pytest.mark.spark


def test_a_batch_job_completes_with_its_rows_written(server: Server, tmp_path: Path) -> None:
    source, target = tmp_path / "data" / "in", tmp_path / "data" / "out"
    source.mkdir(parents=True)
    (source / "a.json").write_text("".join(json.dumps({"id": i}) + "\n" for i in range(5)))
    job: dict[str, Any] = {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "batch-once"},
        "spec": {
            "application": {"type": "pipeline"},
            "pipeline": {
                "batchMode": True,
                "logLevel": "WARN",
                "inputs": [
                    {"name": "rows", "format": "json", "path": source.as_uri(), "schema": "id INT"}
                ],
                "steps": [
                    {"sequence": [{"name": "odd", "sql": "SELECT id FROM rows WHERE id % 2 = 1"}]}
                ],
                "outputs": [
                    {
                        "name": "odd",
                        "format": "json",
                        "path": target.as_uri(),
                        "options": {"saveMode": "overwrite"},
                    }
                ],
            },
        },
    }
    with server.client() as api:
        assert api.put("/api/v1/jobs/batch-once", json=job).is_success
        app_id = api.post("/api/v1/jobs/batch-once/run").json()["id"]
        app = wait_for(
            "COMPLETED",
            lambda: (
                (a := api.get(f"/api/v1/applications/{app_id}").json())["state"]
                in {"COMPLETED", "FAILED"}
                and a
            ),
        )
        assert app["state"] == "COMPLETED", app
        assert api.get("/api/v1/jobs/batch-once").json()["status"]["phase"] == "COMPLETED"
    rows = [
        json.loads(line)["id"]
        for part in target.glob("part-*.json")
        for line in part.read_text().splitlines()
    ]
    assert sorted(rows) == [1, 3]
