"""Manifests for tests: small valid jobs and connections to start from, and a way to change one
field of them."""

from __future__ import annotations

import copy
import re
from typing import Any

DELETE = object()
"""Passed as the value to ``changed``: remove the field instead of setting it."""

RATE_PIPELINE_YAML = """\
inputs:
  - name: ticks
    format: rate
steps:
  - sequence:
      - name: evens
        sql: SELECT * FROM ticks WHERE value % 2 = 0
outputs:
  - name: evens
    format: parquet
    path: /tmp/streamjobs-web/evens
"""
"""A valid pipeline block as a person types it in the web UI's editor (rate -> SQL -> parquet)."""

_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def pipeline_manifest(name: str = "ticks", **spec_overrides: Any) -> dict[str, Any]:
    """A minimal valid pipeline job (rate -> SQL -> parquet, into a directory of its own, as two
    jobs may not write one); overrides replace spec keys."""
    manifest: dict[str, Any] = {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": name},
        "spec": {
            "application": {"type": "pipeline"},
            "pipeline": {
                "streaming": {"triggerDuration": "5 seconds"},
                "inputs": [{"name": "ticks", "format": "rate"}],
                "steps": [{"sequence": [{"name": "evens", "sql": "SELECT * FROM ticks"}]}],
                "outputs": [
                    {"name": "evens", "format": "parquet", "path": f"/tmp/out/{name}/evens"}
                ],
            },
        },
    }
    manifest["spec"].update(copy.deepcopy(spec_overrides))
    return manifest


def console_manifest(name: str = "ticks", **spec_overrides: Any) -> dict[str, Any]:
    """A pipeline job that claims no location for itself (it prints to the console, and its
    checkpoint is derived from its name), so a copy of it may be created as it is."""
    return changed(
        pipeline_manifest(name, **spec_overrides),
        ("spec.pipeline.outputs[0]", {"name": "evens", "format": "console"}),
    )


def python_manifest(name: str = "python-app") -> dict[str, Any]:
    """A minimal valid python application job."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": name},
        "spec": {"application": {"type": "python", "mainApplicationFile": "local:///app/job.py"}},
    }


def jvm_manifest(name: str = "jvm-app") -> dict[str, Any]:
    """A minimal valid jvm application job."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": name},
        "spec": {
            "application": {
                "type": "jvm",
                "mainClass": "com.example.Job",
                "mainApplicationFile": "file:///opt/jobs/app.jar",
            }
        },
    }


CONNECTION_TARGETS: dict[str, dict[str, str]] = {
    "kafka": {"bootstrapServers": "127.0.0.1:9092"},
    "lakehouse": {"warehouse": "file:///tmp/lakehouse"},
    "files": {"root": "file:///tmp/landing"},
    "jdbc": {"url": "jdbc:postgresql://127.0.0.1:5432/analytics"},
}
"""The one field each type of connection requires, with a value that passes."""


def connection_manifest(
    name: str = "kafka-main", connection_type: str = "kafka", **spec_overrides: Any
) -> dict[str, Any]:
    """A minimal valid connection of ``connection_type``; overrides replace spec keys."""
    spec = {"type": connection_type, **CONNECTION_TARGETS[connection_type]}
    spec.update(copy.deepcopy(spec_overrides))
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "Connection",
        "metadata": {"name": name},
        "spec": spec,
    }


def dataset_job_manifest(name: str, *, reads: str, writes: str | None = None) -> dict[str, Any]:
    """A valid pipeline job that reads the dataset ``reads`` as kafkajson and writes parquet to
    ``writes`` (a dataset too, or a path when None)."""
    output = {"name": "events", "format": "parquet"}
    output.update({"dataset": writes} if writes else {"path": f"/tmp/out/{name}/events"})
    return changed(
        pipeline_manifest(name),
        (
            "spec.pipeline.inputs[0]",
            {"name": "events", "dataset": reads, "format": "kafkajson", "schema": "id BIGINT"},
        ),
        ("spec.pipeline.steps", []),
        ("spec.pipeline.outputs[0]", output),
    )


def changed(manifest: dict[str, Any], *changes: tuple[str, Any]) -> dict[str, Any]:
    """A copy of ``manifest`` with each ``(path, value)`` set, in order.

    Paths look like ``spec.pipeline.inputs[0].name``. Missing mappings on the way are created, an
    index one past a list's end appends, and the value ``DELETE`` removes the field.
    """
    result = copy.deepcopy(manifest)
    for path, value in changes:
        *parents, last = _parts(path)
        node: Any = result
        for part in parents:
            node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
        if value is DELETE:
            del node[last]
        elif isinstance(node, list) and last == len(node):
            node.append(copy.deepcopy(value))
        else:
            node[last] = copy.deepcopy(value)
    return result


def _parts(path: str) -> list[str | int]:
    return [int(index) if index else key for key, index in _PATH_PART.findall(path)]
