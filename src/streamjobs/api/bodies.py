"""Reads request bodies as JSON or YAML, with errors that say what is wrong and where.

The body's size is bounded before it gets here (``api.body_limits`` refuses one past its route's
limit while it streams in); its nesting and the size its YAML aliases expand to are bounded by the
one document reader, ``domain.documents``, so a small body cannot crash or flood the server.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from streamjobs.api.errors import UnreadableBody
from streamjobs.domain.documents import DocumentTooLarge, load_documents, load_json
from streamjobs.domain.errors import FieldError, InvalidInput

YAML_TYPES = {"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"}


async def read_document(request: Request) -> Any:
    """The request body as one JSON or YAML document (chosen by Content-Type, JSON by default).

    ``UnreadableBody`` (400) when it is empty or not JSON/YAML; ``DocumentTooLarge`` (422) when
    it nests too deeply or its aliases expand too far.
    """
    raw = await request.body()
    if not raw.strip():
        raise UnreadableBody([FieldError("body", "the request body is empty")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableBody([FieldError("body", f"not UTF-8 text: {error}")]) from error
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type in YAML_TYPES:
        return _one_yaml_document(text)
    try:
        return load_json(text, source="body")
    except DocumentTooLarge:
        raise
    except InvalidInput as error:
        raise UnreadableBody(
            [FieldError(e.path, f"not valid JSON: {e.message}") for e in error.errors]
        ) from error


def _one_yaml_document(text: str) -> Any:
    try:
        documents = load_documents(text, source="body")
    except DocumentTooLarge:
        raise
    except InvalidInput as error:
        raise UnreadableBody(error.errors) from error
    if len(documents) != 1:
        raise UnreadableBody(
            [FieldError("body", f"expected one YAML document, found {len(documents)}")]
        )
    return documents[0]
