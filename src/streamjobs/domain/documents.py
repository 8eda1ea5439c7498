"""Manifest text (YAML with any number of ``---`` documents, or JSON) into plain mappings.

Kept apart from the manifest rules so that every entry point (CLI files, API bodies, examples)
reads text the same way and reports text problems by line and column. Only YAML's safe subset is
read, and a document whose aliases expand into an unreasonable number of values is refused, so a
small file cannot make validation run for hours.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from streamjobs.domain.errors import FieldError, InvalidInput

MAX_DOCUMENT_VALUES = 100_000


class _UnreadableError(Exception):
    """The text is not YAML (or JSON); ``error`` says where and why."""

    def __init__(self, error: FieldError) -> None:
        super().__init__(str(error))
        self.error = error


def load_documents(text: str, *, source: str) -> list[dict[str, Any]]:
    """The mappings in ``text``, empty documents skipped, in order.

    Raises ``InvalidInput`` naming ``source`` when the text does not parse (at a path like
    ``line 12, column 3``) or when a document is not a mapping.
    """
    try:
        documents = _read(text)
    except _UnreadableError as unreadable:
        raise InvalidInput([unreadable.error], source=source) from None
    errors = [
        FieldError(position, f"a manifest {not_a_mapping(document)}")
        for document, position in documents
        if not isinstance(document, dict)
    ]
    if errors:
        raise InvalidInput(errors, source=source)
    return [document for document, _ in documents]


def not_a_mapping(value: object) -> str:
    """The end of a message about ``value``, which should have been a mapping."""
    kind = "a list" if isinstance(value, list) else f"a {type(value).__name__}"
    return f"must be a mapping of keys to values (apiVersion, kind, metadata, spec), not {kind}"


def _read(text: str) -> list[tuple[Any, str]]:
    """Each non-empty document with the position where it starts.

    JSON is YAML, except for what YAML refuses such as tab indentation: text that YAML cannot
    read and that looks like JSON is read as JSON, and JSON's error is the one reported.
    """
    try:
        return _read_yaml(text)
    except _UnreadableError:
        if not text.lstrip().startswith(("{", "[")):
            raise
        return [(_read_json(text), "line 1, column 1")]


def _read_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        position = f"line {error.lineno}, column {error.colno}"
        raise _UnreadableError(FieldError(position, error.msg)) from None
    except RecursionError:
        raise _UnreadableError(FieldError("", "the JSON nests too deeply")) from None


def _read_yaml(text: str) -> list[tuple[Any, str]]:
    try:
        return _yaml_documents(text)
    except yaml.MarkedYAMLError as error:
        raise _UnreadableError(_marked_error(error)) from None
    except yaml.reader.ReaderError as error:
        message = f"character #x{error.character:04x} is not allowed in YAML"
        raise _UnreadableError(FieldError(_text_position(text, error.position), message)) from None
    except yaml.YAMLError as error:
        raise _UnreadableError(FieldError("", str(error))) from None
    except RecursionError:
        raise _UnreadableError(FieldError("", "the YAML nests too deeply")) from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise _UnreadableError(FieldError("", str(error))) from None


def _yaml_documents(text: str) -> list[tuple[Any, str]]:
    loader = yaml.SafeLoader(text)
    documents: list[tuple[Any, str]] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # only at the end of the stream, which check_node() ruled out
                break
            _check_size(node)
            document = loader.construct_document(node)
            if document is not None:
                documents.append((document, _position(node.start_mark)))
    finally:
        loader.dispose()
    return documents


def _check_size(root: Node) -> None:
    """Refuse a document whose aliases expand into more than ``MAX_DOCUMENT_VALUES`` values,
    or that contains itself."""
    sizes: dict[int, int] = {}

    def expanded_size(node: Node, ancestors: frozenset[int]) -> int:
        if id(node) in ancestors:
            raise yaml.MarkedYAMLError(
                problem="an alias refers to a value that contains it", problem_mark=node.start_mark
            )
        if id(node) not in sizes:
            inside = ancestors | {id(node)}
            sizes[id(node)] = 1 + sum(expanded_size(child, inside) for child in _children(node))
        if sizes[id(node)] > MAX_DOCUMENT_VALUES:
            raise yaml.MarkedYAMLError(
                problem=f"the document holds more than {MAX_DOCUMENT_VALUES} values once its "
                "aliases are expanded",
                problem_mark=node.start_mark,
            )
        return sizes[id(node)]

    expanded_size(root, frozenset())


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _marked_error(error: yaml.MarkedYAMLError) -> FieldError:
    mark = error.problem_mark or error.context_mark
    position = _position(mark) if mark is not None else ""
    message = "; ".join(part for part in (error.context, error.problem) if part)
    return FieldError(position, message or str(error))


def _position(mark: yaml.Mark) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _text_position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    return f"line {line}, column {column}"
