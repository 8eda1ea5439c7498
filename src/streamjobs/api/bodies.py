"""Reads request bodies as JSON or YAML, with errors that say what is wrong and where."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from streamjobs.api.errors import UnreadableBody
from streamjobs.domain.documents import load_documents
from streamjobs.domain.errors import FieldError, InvalidInput

MAX_BODY_BYTES = 1024 * 1024
YAML_TYPES = {"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"}


async def read_document(request: Request) -> Any:
    """The request body as one JSON or YAML document (chosen by Content-Type, JSON by default)."""
    raw = await request.body()
    if not raw.strip():
        raise UnreadableBody([FieldError("body", "the request body is empty")])
    if len(raw) > MAX_BODY_BYTES:
        raise UnreadableBody([FieldError("body", f"larger than {MAX_BODY_BYTES} bytes")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableBody([FieldError("body", f"not UTF-8 text: {error}")]) from error
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type in YAML_TYPES:
        return _one_yaml_document(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise UnreadableBody([FieldError(where, f"not valid JSON: {error.msg}")]) from error


def _one_yaml_document(text: str) -> Any:
    try:
        documents = load_documents(text, source="body")
    except InvalidInput as error:
        raise UnreadableBody(error.errors) from error
    if len(documents) != 1:
        raise UnreadableBody(
            [FieldError("body", f"expected one YAML document, found {len(documents)}")]
        )
    return documents[0]
