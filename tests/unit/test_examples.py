"""Every manifest in examples/ is valid: the README and `make run` rely on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.domain.spec import StreamingJob, load_documents, parse_manifest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.y*ml")) + sorted(EXAMPLES.glob("*.json"))


def parse_example(path: Path) -> list[StreamingJob]:
    documents = load_documents(path.read_text(encoding="utf-8"), source=path.name)
    return [
        parse_manifest(document, checkpoint_root="file:///tmp/sj", source=path.name)
        for document in documents
    ]


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
    } <= names


def test_example_job_names_are_unique() -> None:
    names = [job.name for path in EXAMPLE_FILES for job in parse_example(path)]
    assert len(names) == len(set(names))
