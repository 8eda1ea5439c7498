"""Assertions on parsing manifests: what parses, and which error a broken field gives."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.spec import StreamingJob, parse_manifest
from tests.factories import DELETE, changed, jvm_manifest, pipeline_manifest, python_manifest

__all__ = [
    "DELETE",
    "EXACTLY_ONCE",
    "INPUT",
    "KAFKA_JSON_INPUT",
    "OUTPUT",
    "PIPELINE",
    "STEP",
    "STREAMING",
    "Changes",
    "assert_error",
    "broken",
    "changed",
    "errors_of",
    "jvm_manifest",
    "parse",
    "pipeline_manifest",
    "python_manifest",
]

PIPELINE = pipeline_manifest()
INPUT = "spec.pipeline.inputs[0]"
STEP = "spec.pipeline.steps[0].sequence[0]"
OUTPUT = "spec.pipeline.outputs[0]"
STREAMING = "spec.pipeline.streaming"
KAFKA_JSON_INPUT = {
    "name": "orders",
    "dataset": "kafka-main:orders",
    "format": "kafkajson",
    "schema": "id BIGINT, ts TIMESTAMP",
}
EXACTLY_ONCE = ("spec.processing.guarantee", "EXACTLY_ONCE")
Changes = list[tuple[str, Any]]


def broken(base: dict[str, Any], changes: Changes, path: str, message_part: str, case: str) -> Any:
    """A rule-table row: ``base`` with ``changes`` fails at ``path``, saying ``message_part``."""
    return pytest.param(changed(base, *changes), path, message_part, id=case)


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
