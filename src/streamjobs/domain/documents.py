"""Manifest text (YAML with any number of ``---`` documents, or JSON) into plain mappings.

Kept apart from the manifest rules so that every entry point (CLI files, API bodies, the web form,
examples) reads text the same way and reports text problems by line and column. Only YAML's safe
subset is read, and documents are bounded: no deeper than ``MAX_NESTING_DEPTH`` levels, and no
larger, once YAML's aliases are expanded, than ``MAX_DOCUMENT_VALUES`` values and
``MAX_EXPANDED_CHARACTERS`` characters of text, so a small input can neither crash the reader nor
become a huge stored row or hours of validation. The text is scanned and parsed by libyaml when
PyYAML has it (pure Python costs seconds of CPU a megabyte, which any token holder could spend);
the bounds are checked as the nodes are composed, in Python, either way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from streamjobs.domain.errors import FieldError, InvalidInput

MAX_NESTING_DEPTH = 64
"""How many levels of mappings and lists a document may nest."""
MAX_DOCUMENT_VALUES = 100_000
"""How many values (keys, scalars, mappings and lists) a document may hold, aliases expanded."""
MAX_EXPANDED_CHARACTERS = 1024 * 1024
"""How many characters of keys and scalars a document may hold, aliases expanded: about what the
largest request body could hold without aliases."""


class DocumentTooLarge(InvalidInput):
    """A document that parses but passes one of the readers' limits (nesting, alias expansion)."""

    title = "Document over a limit"


class _UnreadableError(Exception):
    """The text is not YAML (or JSON); ``error`` says where and why."""

    def __init__(self, error: FieldError) -> None:
        super().__init__(str(error))
        self.error = error


class _LimitError(Exception):
    """The text parses but passes a limit; ``error`` says which and where."""

    def __init__(self, error: FieldError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True)
class ReadDocument:
    """One document of a text, with where it is written."""

    value: Any
    position: str
    """Where its value starts, as ``line L, column C``."""
    start_line: int
    """The line where the document starts (its ``---``, if it has one)."""
    node: Node | None
    """The tree it was built from, with the line and column of each part; None for JSON that
    only the JSON reader could read."""


def load_documents(text: str, *, source: str) -> list[dict[str, Any]]:
    """The mappings in ``text``, empty documents skipped, in order.

    Raises ``InvalidInput`` naming ``source`` when the text does not parse (at a path like
    ``line 12, column 3``) or when a document is not a mapping, and ``DocumentTooLarge`` when a
    document passes a limit.
    """
    documents = read_documents(text, source=source)
    errors = [
        FieldError(document.position, f"a manifest {not_a_mapping(document.value)}")
        for document in documents
        if not isinstance(document.value, dict)
    ]
    if errors:
        raise InvalidInput(errors, source=source)
    return [document.value for document in documents]


def read_documents(text: str, *, source: str) -> list[ReadDocument]:
    """Every non-empty document of ``text``, whatever its value, read once.

    Raises ``InvalidInput`` naming ``source`` when the text does not parse and
    ``DocumentTooLarge`` when a document passes a limit.
    """
    try:
        return _read(text)
    except _UnreadableError as unreadable:
        raise InvalidInput([unreadable.error], source=source) from None
    except _LimitError as limit:
        raise DocumentTooLarge([limit.error], source=source) from None


def load_json(text: str, *, source: str) -> Any:
    """The one JSON value in ``text``.

    Raises ``InvalidInput`` naming ``source`` when the text is not JSON (at ``line L, column C``)
    and ``DocumentTooLarge`` when it nests deeper than ``MAX_NESTING_DEPTH``.
    """
    try:
        return _read_json(text)
    except _UnreadableError as unreadable:
        raise InvalidInput([unreadable.error], source=source) from None
    except _LimitError as limit:
        raise DocumentTooLarge([limit.error], source=source) from None


def not_a_mapping(value: object) -> str:
    """The end of a message about ``value``, which should have been a mapping."""
    kind = "a list" if isinstance(value, list) else f"a {type(value).__name__}"
    return f"must be a mapping of keys to values (apiVersion, kind, metadata, spec), not {kind}"


def _too_deep(position: str = "") -> _LimitError:
    message = f"nests deeper than {MAX_NESTING_DEPTH} levels (the limit)"
    return _LimitError(FieldError(position, message))


def _read(text: str) -> list[ReadDocument]:
    """Each non-empty document with the position where it starts.

    JSON is YAML, except for what YAML refuses such as tab indentation: text that YAML cannot
    read and that looks like JSON is read as JSON, and JSON's error is the one reported.
    """
    try:
        return _read_yaml(text)
    except _UnreadableError:
        if not text.lstrip().startswith(("{", "[")):
            raise
        return [ReadDocument(_read_json(text), "line 1, column 1", 1, None)]


def _read_json(text: str) -> Any:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        position = f"line {error.lineno}, column {error.colno}"
        raise _UnreadableError(FieldError(position, error.msg)) from None
    except RecursionError:  # far deeper than the limit: the parser gave up first
        raise _too_deep() from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise _UnreadableError(FieldError("", str(error))) from None
    if _depth_of(value) > MAX_NESTING_DEPTH:
        raise _too_deep()
    return value


def _depth_of(value: Any) -> int:
    """How many levels of dicts and lists ``value`` nests (0 for a scalar), without recursion."""
    if not isinstance(value, dict | list):
        return 0
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        node, depth = pending.pop()
        children = node.values() if isinstance(node, dict) else node
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING_DEPTH:
            break
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def _read_yaml(text: str) -> list[ReadDocument]:
    try:
        return _yaml_documents(text)
    except yaml.MarkedYAMLError as error:
        raise _UnreadableError(_marked_error(error)) from None
    except yaml.reader.ReaderError as error:
        message = f"character #x{error.character:04x} is not allowed in YAML"
        offset = error.position
        if _Loader.counts_bytes:
            offset = _character_offset(text, offset)
        raise _UnreadableError(FieldError(_text_position(text, offset), message)) from None
    except yaml.YAMLError as error:
        raise _UnreadableError(FieldError("", str(error))) from None
    except RecursionError:
        raise _too_deep() from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise _UnreadableError(FieldError("", str(error))) from None


class _BoundedComposer(Composer):
    """PyYAML's composer (the one part of reading that recurses, once per level), refusing to
    compose a node deeper than ``MAX_NESTING_DEPTH`` or a document of more than
    ``MAX_DOCUMENT_VALUES`` nodes, so that an oversized document is refused before it is built."""

    counts_bytes = False
    """Whether the reader's offsets count bytes of UTF-8 (libyaml's) rather than characters."""

    def __init__(self) -> None:
        Composer.__init__(self)  # not super(): in SafeLoader's order the reader comes next
        self._depth = 0
        self._composed = 0

    def compose_document(self) -> Node | None:
        self._composed = 0
        return super().compose_document()

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        self._depth += 1
        self._composed += 1
        try:
            if self._depth > MAX_NESTING_DEPTH + 1:  # the scalars of the deepest level count too
                raise _too_deep(_position(parent.start_mark) if parent is not None else "")
            if self._composed > MAX_DOCUMENT_VALUES:
                position = _position(parent.start_mark) if parent is not None else ""
                message = f"the document holds more than {MAX_DOCUMENT_VALUES} values (the limit)"
                raise _LimitError(FieldError(position, message))
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _PythonLoader(_BoundedComposer, yaml.SafeLoader):
    """The safe loader in pure Python, for when PyYAML was built without libyaml."""

    def __init__(self, text: str) -> None:
        yaml.SafeLoader.__init__(self, text)
        _BoundedComposer.__init__(self)


if yaml.__with_libyaml__:
    from yaml._yaml import CParser

    class _LibYamlLoader(_BoundedComposer, CParser, SafeConstructor, Resolver):
        """The safe loader over libyaml's events: the text is scanned and parsed in C (pure
        Python takes seconds a megabyte), composed and built in Python within the bounds."""

        counts_bytes = True

        def __init__(self, text: str) -> None:
            CParser.__init__(self, text)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            _BoundedComposer.__init__(self)

    _Loader: type[_PythonLoader] | type[_LibYamlLoader] = _LibYamlLoader
else:  # pragma: no cover - PyYAML wheels ship libyaml
    _Loader = _PythonLoader


def _yaml_documents(text: str) -> list[ReadDocument]:
    loader = _Loader(text)
    documents: list[ReadDocument] = []
    try:
        while loader.check_node():
            start = loader.peek_event()  # the document's start, at its --- if it has one
            node = loader.get_node()
            if node is None:  # only at the end of the stream, which check_node() ruled out
                break
            _check_size(node)
            document = loader.construct_document(node)
            if document is not None:
                start_mark = (start.start_mark if start is not None else None) or node.start_mark
                start_line = start_mark.line + 1
                position = _position(node.start_mark)
                documents.append(ReadDocument(document, position, start_line, node))
    finally:
        loader.dispose()
    return documents


def _check_size(root: Node) -> None:
    """Refuse a document that contains itself, or that passes a limit once its aliases are
    expanded: deeper than ``MAX_NESTING_DEPTH``, more than ``MAX_DOCUMENT_VALUES`` values or
    ``MAX_EXPANDED_CHARACTERS`` characters."""
    sizes: dict[int, tuple[int, int, int]] = {}  # values, characters, depth of each node seen

    def expanded(node: Node, ancestors: frozenset[int]) -> tuple[int, int, int]:
        if id(node) in ancestors:
            raise yaml.MarkedYAMLError(
                problem="an alias refers to a value that contains it", problem_mark=node.start_mark
            )
        if id(node) not in sizes:
            if len(ancestors) > MAX_NESTING_DEPTH:
                raise _too_deep(_position(node.start_mark))
            inside = ancestors | {id(node)}
            values, characters, depth = 1, _text_length(node), 0
            for child in _children(node):
                child_values, child_characters, child_depth = expanded(child, inside)
                values += child_values
                characters += child_characters
                depth = max(depth, child_depth)
            nests = isinstance(node, MappingNode | SequenceNode)
            sizes[id(node)] = (values, characters, depth + nests)
        values, characters, depth = sizes[id(node)]
        if values > MAX_DOCUMENT_VALUES:
            _refuse(node, f"holds more than {MAX_DOCUMENT_VALUES} values")
        if characters > MAX_EXPANDED_CHARACTERS:
            _refuse(node, f"holds more than {MAX_EXPANDED_CHARACTERS} characters")
        if len(ancestors) + depth > MAX_NESTING_DEPTH:
            raise _too_deep(_position(node.start_mark))
        return sizes[id(node)]

    expanded(root, frozenset())


def _refuse(node: Node, what: str) -> None:
    message = f"the document {what} once its aliases are expanded (the limit)"
    raise _LimitError(FieldError(_position(node.start_mark), message))


def _text_length(node: Node) -> int:
    return len(node.value) if isinstance(node, ScalarNode) else 0


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


def _character_offset(text: str, offset: int) -> int:
    """The offset in characters of ``offset``, which libyaml counts in bytes of UTF-8."""
    if text.isascii():
        return offset
    return len(text.encode("utf-8", "surrogatepass")[:offset].decode("utf-8", "ignore"))


def _text_position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    return f"line {line}, column {column}"
