"""YAML typed into the web UI: read as one mapping, written back readably, and the line a field
path such as ``spec.pipeline.inputs[0].format`` points at, so an error can be shown by its line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from streamjobs.domain.documents import read_documents
from streamjobs.domain.errors import InvalidInput

PathPart = str | int

_PATH_PART = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')
_TEXT_POSITION = re.compile(r"^line (\d+), column \d+$")


@dataclass(frozen=True)
class TextProblem:
    """Why a text is not the mapping it should be, and on which line (when one is known)."""

    message: str
    line: int | None = None


class FieldLines:
    """The lines of the fields of one YAML text, found in the node tree it was read into once
    (reading it again for each error would cost a parse per error)."""

    def __init__(self, root: Node | None) -> None:
        self._root = root

    @classmethod
    def of(cls, text: str) -> FieldLines:
        """The lines of ``text``'s one document; none when it is unreadable or not one."""
        try:
            documents = read_documents(text, source="text")
        except InvalidInput:
            return cls(None)
        return cls(documents[0].node if len(documents) == 1 else None)

    def line_of(self, parts: Sequence[PathPart]) -> int | None:
        """The line where the field at ``parts`` is written: its key's line for a mapping
        entry, its item's for a list item; the nearest enclosing field's line when the field is
        absent (a missing required field belongs where its parent is). None if unreadable."""
        node = self._root
        if node is None:
            return None
        line = node.start_mark.line + 1
        for part in parts:
            found = _child(node, part)
            if found is None:
                break
            marker, node = found
            line = marker.start_mark.line + 1
        return line


@dataclass(frozen=True)
class MappingText:
    """A text read as one mapping: the mapping (None when it is not one) and why not, and the
    lines of its fields."""

    mapping: dict[str, Any] | None
    problems: list[TextProblem]
    lines: FieldLines


def read_mapping(text: str, *, what: str) -> tuple[dict[str, Any] | None, list[TextProblem]]:
    """The one mapping ``text`` holds, or None and the problems (YAML syntax with its line, not
    a mapping, several documents). ``what`` names the mapping in messages ("the pipeline")."""
    read = read_mapping_text(text, what=what)
    return read.mapping, read.problems


def read_mapping_text(text: str, *, what: str) -> MappingText:
    """``read_mapping``, with the lines of the fields of the text, which is read once."""
    try:
        documents = read_documents(text, source=what)
    except InvalidInput as invalid:
        problems = [TextProblem(e.message, position_line(e.path)) for e in invalid.errors]
        return MappingText(None, problems, FieldLines(None))
    if not documents:
        return MappingText(None, [TextProblem(f"{what} is empty")], FieldLines(None))
    if len(documents) > 1:
        second = documents[1].start_line
        problem = TextProblem(f"{what} must be one document, not {len(documents)}", second)
        return MappingText(None, [problem], FieldLines(None))
    [document] = documents
    lines = FieldLines(document.node)
    if not isinstance(document.value, dict):
        problem = TextProblem(f"{what} must be a mapping of keys to values", lines.line_of(()))
        return MappingText(None, [problem], lines)
    return MappingText(document.value, [], lines)


def position_line(path: str) -> int | None:
    """The line of a text position such as ``line 12, column 3``; None for anything else."""
    found = _TEXT_POSITION.match(path)
    return int(found.group(1)) if found else None


def path_parts(path: str) -> list[PathPart] | None:
    """``spec.env["a.b"].x[0]`` as ``["spec", "env", "a.b", "x", 0]``; None if it is no path."""
    parts: list[PathPart] = []
    position = 0
    while position < len(path):
        found = _PATH_PART.match(path, position)
        if found is None or found.end() == position:
            return None
        key, index, quoted = found.groups()
        if key is not None:
            parts.append(key)
        elif index is not None:
            parts.append(int(index))
        else:
            parts.append(json.loads(quoted))
        position = found.end()
    return parts


def line_of(text: str, parts: Sequence[PathPart]) -> int | None:
    """The line of ``text`` where the field at ``parts`` is written (``FieldLines.line_of``):
    for one field; read the text once into ``FieldLines`` for several."""
    return FieldLines.of(text).line_of(parts)


def _child(node: Node, part: PathPart) -> tuple[Node, Node] | None:
    """(the node whose line marks ``part``, the node of its value), or None when absent."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if key.value == str(part):
                return key, value
    if isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        item: Node = node.value[part]
        return item, item
    return None


class _ReadableDumper(yaml.SafeDumper):
    """Writes multi-line strings (SQL, say) as ``|`` blocks instead of one escaped line."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and not value.endswith((" ", "\t")) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _represent_text)


def dump_yaml(value: Any) -> str:
    """``value`` as block-style YAML, keys in their order, multi-line strings as blocks."""
    return yaml.dump(value, Dumper=_ReadableDumper, sort_keys=False, allow_unicode=True, width=100)


def without_empty(value: Any) -> Any:
    """``value`` without null fields and empty maps or lists: the same manifest (an absent
    optional field is its default), shorter to read."""
    if isinstance(value, dict):
        kept = {key: without_empty(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if item not in (None, {}, [])}
    if isinstance(value, list):
        return [without_empty(item) for item in value]
    return value
