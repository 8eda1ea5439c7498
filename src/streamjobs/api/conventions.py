"""What every resource router does the same way: manifest request bodies, where a new resource
is (``Location``), which version a client holds (``ETag``) and which one it expects (``If-Match``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from streamjobs.domain.errors import FieldError, InvalidInput


def manifest_body(kind: str, schema_url: str) -> dict[str, Any]:
    """OpenAPI request body of a route that takes a ``kind`` manifest as JSON or YAML."""
    schema = {"$ref": schema_url}
    return {
        "requestBody": {
            "required": True,
            "description": f"A {kind} manifest, as JSON or YAML.",
            "content": {
                "application/json": {"schema": schema},
                "application/yaml": {"schema": schema},
            },
        }
    }


def etag(version: int) -> str:
    """The ``ETag`` of a resource at ``version``: its resourceVersion, quoted."""
    return f'"{version}"'


def location(collection: str, name: str) -> str:
    """The URL path of the resource ``name`` in ``collection`` (e.g. ``/api/v1/jobs``)."""
    return f"{collection}/{quote(name, safe='')}"


def expected_version(if_match: str | None) -> int | None:
    """The resourceVersion an ``If-Match`` header names (``"3"``, ``W/"3"``), or None."""
    if if_match is None:
        return None
    try:
        return int(if_match.strip().removeprefix("W/").strip('"'))
    except ValueError:
        message = 'must be a resourceVersion as the ETag gave it, e.g. "3"'
        raise InvalidInput([FieldError("header.If-Match", message)]) from None
