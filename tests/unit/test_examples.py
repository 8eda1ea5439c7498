"""Every manifest in examples/ is valid: the README and `make run` rely on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.domain.connections import Connection, dataset_errors
from streamjobs.domain.kinds import parse_resource
from streamjobs.domain.spec import StreamingJob, load_documents

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.y*ml")) + sorted(EXAMPLES.glob("*.json"))


def parse_example(path: Path) -> list[StreamingJob | Connection]:
    documents = load_documents(path.read_text(encoding="utf-8"), source=path.name)
    return [
        parse_resource(document, checkpoint_root="file:///tmp/sj", source=path.name)
        for document in documents
    ]


def all_examples() -> list[StreamingJob | Connection]:
    return [manifest for path in EXAMPLE_FILES for manifest in parse_example(path)]


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda path: path.name)
def test_example_is_valid(path: Path) -> None:
    assert parse_example(path)


def test_the_examples_the_readme_promises_are_there() -> None:
    names = {path.name for path in EXAMPLE_FILES}
    assert {
        "rate-to-parquet.yaml",
        "kafka-json-to-delta.yaml",
        "files-to-iceberg.yaml",
        "python-app.yaml",
        "jvm-app.yaml",
        "connections.yaml",
    } <= names


@pytest.mark.parametrize("kind", ["StreamingJob", "Connection"])
def test_example_names_are_unique_per_kind(kind: str) -> None:
    names = [manifest.name for manifest in all_examples() if manifest.kind == kind]
    assert names
    assert len(names) == len(set(names))


def test_every_example_dataset_names_an_example_connection_that_fits() -> None:
    examples = all_examples()
    connections = {item.name: item for item in examples if isinstance(item, Connection)}
    assert {"kafka-main", "lakehouse", "files", "warehouse-db"} <= connections.keys()
    for job in (item for item in examples if isinstance(item, StreamingJob)):
        assert dataset_errors(job, connections) == [], job.name
