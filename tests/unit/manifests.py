"""Valid manifests to start tests from, and ways to change one field and to see what breaks."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.spec import StreamingJob, parse_manifest

DELETE = object()
"""Passed as the value to ``changed``: remove the field instead of setting it."""

_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def pipeline_manifest() -> dict[str, Any]:
    """A minimal valid pipeline job: rate -> one SQL step -> parquet."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "ticks"},
        "spec": {
            "application": {"type": "pipeline"},
            "pipeline": {
                "streaming": {"triggerDuration": "5 seconds"},
                "inputs": [{"name": "ticks", "format": "rate"}],
                "steps": [{"sequence": [{"name": "evens", "sql": "SELECT * FROM ticks"}]}],
                "outputs": [{"name": "evens", "format": "parquet", "path": "/tmp/out/evens"}],
            },
        },
    }


def python_manifest() -> dict[str, Any]:
    """A minimal valid python application job."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "python-app"},
        "spec": {"application": {"type": "python", "mainApplicationFile": "local:///app/job.py"}},
    }


def jvm_manifest() -> dict[str, Any]:
    """A minimal valid jvm application job."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "jvm-app"},
        "spec": {
            "application": {
                "type": "jvm",
                "mainClass": "com.example.Job",
                "mainApplicationFile": "file:///opt/jobs/app.jar",
            }
        },
    }


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


def parse(manifest: Any, checkpoint_root: str | None = None) -> StreamingJob:
    return parse_manifest(manifest, checkpoint_root=checkpoint_root)


def errors_of(manifest: Any, checkpoint_root: str | None = None) -> tuple[FieldError, ...]:
    """The errors parsing ``manifest`` gives; fails the test if it parses."""
    with pytest.raises(InvalidInput) as caught:
        parse_manifest(manifest, checkpoint_root=checkpoint_root)
    return caught.value.errors


def assert_error(
    manifest: Any, path: str, message_part: str, checkpoint_root: str | None = None
) -> None:
    """Parsing ``manifest`` fails with an error at ``path`` whose message holds ``message_part``."""
    errors = errors_of(manifest, checkpoint_root)
    messages = [error.message for error in errors if error.path == path]
    assert any(message_part in message for message in messages), (
        f"no error at {path!r} containing {message_part!r}; got: {[str(e) for e in errors]}"
    )
