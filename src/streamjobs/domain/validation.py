"""Validating a document against a manifest model, with every problem at its document path.

pydantic reports where a value broke a rule as a ``loc`` tuple in its own terms (union member tags,
``[key]`` markers) and in its own words ("Input should be ..."). Every kind of manifest
(StreamingJob, Connection) turns those into ``FieldError``s the same way, here: at the path the
user wrote (``spec.pipeline.outputs[0].format``, ``spec.options["kafka.security.protocol"]``) and
in the words the rest of streamjobs uses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from streamjobs.domain.documents import not_a_mapping
from streamjobs.domain.errors import FieldError, InvalidInput

Model = TypeVar("Model", bound=BaseModel)

_MESSAGES_BY_TYPE = {
    "missing": "is required",
    "extra_forbidden": "is not a field here (check its spelling; keys are camelCase)",
    "model_type": "must be a mapping of keys to values",
    "model_attributes_type": "must be a mapping of keys to values",
    "dict_type": "must be a mapping of keys to values",
}
_PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_ABSENT = object()


def validated(model: type[Model], document: object, *, source: str | None = None) -> Model:
    """``document`` as a ``model``, or ``InvalidInput`` listing every field that breaks a rule.

    ``source`` (a file name, say) prefixes the error. Only the models' own field rules are
    checked; rules across fields are the caller's.
    """
    if not isinstance(document, Mapping):
        raise InvalidInput([FieldError("", f"a manifest {not_a_mapping(document)}")], source=source)
    try:
        return model.model_validate(dict(document))
    except ValidationError as error:
        raise InvalidInput(field_errors(error, document), source=source) from None


def field_errors(error: ValidationError, document: Mapping[str, Any]) -> list[FieldError]:
    """pydantic's errors as FieldErrors at document paths, duplicates dropped."""
    errors = [
        FieldError(_path(detail["loc"], document), _message(detail)) for detail in error.errors()
    ]
    return list(dict.fromkeys(errors))


def format_path(parts: Sequence[int | str]) -> str:
    """``spec.pipeline.inputs[0].options["kafka.bootstrap.servers"]``: dots between plain keys,
    brackets around list indexes and around keys that are not plain."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part)}]"
    return text


def _message(detail: ErrorDetails) -> str:
    message = _MESSAGES_BY_TYPE.get(detail["type"], detail["msg"])
    for prefix in _PYDANTIC_PREFIXES:
        message = message.removeprefix(prefix)
    return re.sub(r"^Input should\b", "must", message)


def _path(loc: Sequence[int | str], document: object) -> str:
    """The document path of pydantic's ``loc``, found by walking ``document`` along it.

    Parts that do not address a key or item of the document are pydantic's own (union member
    tags, ``[key]`` markers) and are dropped; a last key that is absent is kept, since that is
    where a missing field belongs.
    """
    parts: list[int | str] = []
    node = document
    for index, part in enumerate(loc):
        child = _child(node, part)
        is_missing_field = index == len(loc) - 1 and isinstance(node, Mapping) and part != "[key]"
        if child is not _ABSENT:
            parts.append(part)
            node = child
        elif is_missing_field:
            parts.append(part)
    return format_path(parts)


def _child(node: object, part: int | str) -> object:
    """``node[part]`` if the document has it there, else ``_ABSENT``."""
    if isinstance(node, Mapping):
        return node.get(part, _ABSENT)
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return _ABSENT
