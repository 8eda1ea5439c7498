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

from streamjobs.domain.documents import load_documents
from streamjobs.domain.errors import InvalidInput

PathPart = str | int

_PATH_PART = re.compile(r'\.?([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')
_TEXT_POSITION = re.compile(r"^line (\d+), column \d+$")


@dataclass(frozen=True)
class TextProblem:
    """Why a text is not the mapping it should be, and on which line (when one is known)."""

    message: str
    line: int | None = None


def read_mapping(text: str, *, what: str) -> tuple[dict[str, Any] | None, list[TextProblem]]:
    """The one mapping ``text`` holds, or None and the problems (YAML syntax with its line, not
    a mapping, several documents). ``what`` names the mapping in messages ("the pipeline")."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        message = "; ".join(part for part in (error.context, error.problem) if part)
        return None, [TextProblem(message or str(error), mark.line + 1 if mark else None)]
    except (yaml.YAMLError, RecursionError, ValueError) as error:
        return None, [TextProblem(str(error) or "the YAML cannot be read")]
    if root is None:
        return None, [TextProblem(f"{what} is empty")]
    if not isinstance(root, MappingNode):
        line = root.start_mark.line + 1
        return None, [TextProblem(f"{what} must be a mapping of keys to values", line)]
    try:
        documents = load_documents(text, source=what)
    except InvalidInput as invalid:
        return None, [TextProblem(e.message, position_line(e.path)) for e in invalid.errors]
    return documents[0], []


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
    """The line of ``text`` where the field at ``parts`` is written: its key's line for a
    mapping entry, its item's for a list item; the nearest enclosing field's line when the field
    is absent (a missing required field belongs where its parent is). None if unreadable."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
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
