"""Reads manifests for ``apply`` and ``validate`` from a file, a directory or standard input."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamjobs.domain.documents import load_documents
from streamjobs.domain.errors import FieldError, InvalidInput

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class SourcedDocument:
    """One manifest and where it came from, e.g. ``examples/jobs.yaml#2``."""

    source: str
    document: dict[str, Any]


def read_manifests(targets: list[str]) -> list[SourcedDocument]:
    """Every document in the targets (files, directories of *.yaml/*.yml/*.json, or ``-``)."""
    documents: list[SourcedDocument] = []
    for target in targets:
        for source, text in _texts(target):
            loaded = load_documents(text, source=source)
            documents.extend(
                SourcedDocument(source if len(loaded) == 1 else f"{source}#{index}", document)
                for index, document in enumerate(loaded, start=1)
            )
    return documents


def _texts(target: str) -> list[tuple[str, str]]:
    if target == "-":
        return [("<stdin>", sys.stdin.read())]
    path = Path(target)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in MANIFEST_SUFFIXES and p.is_file())
        if not files:
            raise InvalidInput([FieldError(target, "the directory holds no .yaml, .yml or .json")])
        return [(str(file), _read(file)) for file in files]
    if not path.exists():
        raise InvalidInput([FieldError(target, "no such file or directory")])
    return [(target, _read(path))]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidInput([FieldError(str(path), f"cannot be read: {error}")]) from error
