"""No control characters in what users write: checked once, over the whole document.

A manifest's strings end up in command lines, environment variables, file names, logs and
terminals. A NUL cannot be passed to a process at all (``Popen`` raises), and the other control
characters garble logs and terminals or hide text, so every string of a document is checked
before it is parsed, mapping keys included, and each one holding a control character is an
error at its field path.

What counts as a control character: the C0 set (U+0000 to U+001F), DEL (U+007F) and the C1 set
(U+0080 to U+009F). Every field may hold a tab. Fields that are text by nature, where a person
writes several lines (descriptions, SQL, schemas, JVM options, option values: a certificate, a
JSON document), may also hold line feeds and carriage returns (a browser's form sends CRLF).
Mapping keys are names, and single-line wherever they appear.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.validation import format_path

ANY = "*"
"""In a path pattern, any key or list index."""
PathPattern = tuple[str, ...]
"""The path of a field, with ``ANY`` for parts that vary; a string below one (in a nested value)
matches too."""

SINGLE_LINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
"""Not allowed in a single-line field: every control character but the tab."""
MULTI_LINE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Not allowed in a multi-line field: every control character but tab, line feed and return."""

JOB_MULTI_LINE: tuple[PathPattern, ...] = (
    ("metadata", "description"),
    ("spec", "pipeline", "steps", ANY, "sequence", ANY, "sql"),
    ("spec", "pipeline", "inputs", ANY, "schema"),
    ("spec", "pipeline", "inputs", ANY, "options", ANY),
    ("spec", "pipeline", "outputs", ANY, "options", ANY),
    ("spec", "configuration", "env", ANY),
    ("spec", "configuration", "javaOptions"),
)
"""The StreamingJob fields that may span lines."""
CONNECTION_MULTI_LINE: tuple[PathPattern, ...] = (
    ("metadata", "description"),
    ("spec", "options", ANY),
)
"""The Connection fields that may span lines."""

_Trail = tuple["_Trail", int | str] | None
"""A path as a chain of links to the parent's path: taking a step copies nothing."""

_MAX_ERRORS = 20
"""Enough to show a pattern; a document full of them is not listed in full."""


def refuse_control_characters(
    document: Any, *, multi_line: Collection[PathPattern] = (), source: str | None = None
) -> None:
    """``InvalidInput`` naming each string of ``document`` (a manifest as parsed from JSON or
    YAML) that holds a control character its field may not hold; nothing when none does."""
    errors = control_character_errors(document, multi_line=multi_line)
    if errors:
        raise InvalidInput(errors, source=source)


def control_character_errors(
    document: Any, *, multi_line: Collection[PathPattern] = ()
) -> list[FieldError]:
    """Each string of ``document`` (keys too) with a control character its field may not hold,
    at its path. The walk is iterative and each step keeps only a link to its parent's path, so
    however deep the document, it neither overflows nor copies paths."""
    errors: list[FieldError] = []
    pending: list[tuple[_Trail, Any]] = [(None, document)]
    while pending and len(errors) < _MAX_ERRORS:
        trail, node = pending.pop()
        if isinstance(node, str):
            if SINGLE_LINE.search(node) is None:
                continue
            path = _path_of(trail)
            _check(node, path, _is_multi_line(path, multi_line), errors)
        elif isinstance(node, Mapping):
            for key, value in node.items():
                child = (trail, key)
                if isinstance(key, str) and SINGLE_LINE.search(key):
                    _check(key, _path_of(child), False, errors, what="key")
                pending.append((child, value))
        elif isinstance(node, Sequence) and not isinstance(node, bytes | bytearray):
            pending.extend(((trail, index), item) for index, item in enumerate(node))
    return sorted(errors, key=lambda error: error.path)[:_MAX_ERRORS]


def text_error(text: str, *, path: str, multi_line: bool = False) -> FieldError | None:
    """The error for one string field (a secret's value, a bundle's description), or None."""
    errors: list[FieldError] = []
    _check(text, (), multi_line, errors, path_text=path)
    return errors[0] if errors else None


def _check(
    text: str,
    path: tuple[int | str, ...],
    multi_line: bool,
    errors: list[FieldError],
    *,
    what: str = "value",
    path_text: str | None = None,
) -> None:
    found = (MULTI_LINE if multi_line else SINGLE_LINE).search(text)
    if found is None:
        return
    code = f"U+{ord(found.group()):04X}"
    allowed = "tabs, line feeds and carriage returns" if multi_line else "tabs"
    where = path_text if path_text is not None else format_path(path)
    errors.append(
        FieldError(
            where,
            f"this {what} holds the control character {code} (at character "
            f"{found.start() + 1}); of the control characters, only {allowed} are allowed here",
        )
    )


def _path_of(trail: _Trail) -> tuple[int | str, ...]:
    parts: list[int | str] = []
    while trail is not None:
        trail, part = trail
        parts.append(part)
    return tuple(reversed(parts))


def _is_multi_line(path: tuple[int | str, ...], patterns: Collection[PathPattern]) -> bool:
    return any(_below(path, pattern) for pattern in patterns)


def _below(path: tuple[int | str, ...], pattern: PathPattern) -> bool:
    """Whether ``path`` is the field ``pattern`` names, or inside it."""
    if len(path) < len(pattern):
        return False
    return all(part == ANY or part == str(step) for part, step in zip(pattern, path, strict=False))
