"""Manifests for the API and CLI tests: small valid jobs to start from."""

from __future__ import annotations

import copy
from typing import Any


def pipeline_manifest(name: str = "ticks-to-parquet", **spec_overrides: Any) -> dict[str, Any]:
    """A valid rate -> SQL -> parquet pipeline job; ``spec_overrides`` replace keys of ``spec``."""
    manifest: dict[str, Any] = {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {
            "name": name,
            "description": "Even ticks into parquet",
            "tags": {"team": "payments", "tier": "gold"},
        },
        "spec": {
            "application": {"type": "pipeline"},
            "pipeline": {
                "streaming": {"triggerMode": "ProcessingTime", "triggerDuration": "5 seconds"},
                "inputs": [{"name": "ticks", "format": "rate", "options": {"rowsPerSecond": 10}}],
                "steps": [
                    {
                        "sequence": [
                            {"name": "evens", "sql": "SELECT * FROM ticks WHERE value % 2 = 0"}
                        ]
                    }
                ],
                "outputs": [{"name": "evens", "format": "parquet", "path": "/tmp/sj/out/evens"}],
            },
        },
    }
    manifest["spec"].update(copy.deepcopy(spec_overrides))
    return manifest


def python_manifest(name: str = "python-app") -> dict[str, Any]:
    """A valid Python application job."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": name},
        "spec": {
            "application": {
                "type": "python",
                "mainApplicationFile": "local:///app/job.py",
                "arguments": ["--date", "today"],
            }
        },
    }
