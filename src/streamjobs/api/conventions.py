"""What every resource router does the same way: manifest request bodies, where a new resource
is (``Location``), which version a client holds (``ETag``) and which one it expects (``If-Match``),
and JSON answers rendered in one step (``json_response``).

Which routes run where: a route that only reads the store is ``async def``, so FastAPI runs it on
the event loop; every other route (writes, log files, calls to a driver) is ``def`` and runs in
the thread pool. A read's queries take a fraction of a millisecond (SQLite's readers never wait
for its writer, PostgreSQL's never wait for locks), less than the hop to a worker thread; and
under load the hops made the loop and the workers take turns at the GIL, which is what capped
the server's rate (bench figure 4: 100 → 150-190 requests/s on SQLite). A write may wait for
SQLite's write lock, which must not stall every other request. Applying a job is both: it finds
out on the loop whether the manifest changes anything, and only a change goes to a worker thread.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote

import orjson
from fastapi import Response

from streamjobs.domain.versions import resource_version

JSON_DOCUMENT: Any = dict[str, Any]
"""The ``response_model`` of a route that answers with ``json_response``: the OpenAPI document
describes its answer as a JSON object, as it would for a route returning ``dict[str, Any]``."""


def manifest_body(kind: str) -> dict[str, Any]:
    """OpenAPI request body of a route that takes a ``kind`` manifest as JSON or YAML; its
    schema is the document's component ``kind`` (see ``with_manifest_schemas``)."""
    schema = {"$ref": component_ref(kind)}
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


def json_response(
    document: Any, *, status_code: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    """``document`` as an ``application/json`` answer, rendered by orjson in one step.

    Returning a ``Response`` makes FastAPI skip its own round trip (validating the document
    against the response model, then serialising it with pydantic), most of a list's time. The
    JSON is the same: compact, UTF-8, non-finite numbers as ``null``.
    """
    body = orjson.dumps(document, option=orjson.OPT_NON_STR_KEYS)
    return Response(body, status_code=status_code, headers=headers, media_type="application/json")


def add_warnings(response: Response, warnings: Iterable[str]) -> None:
    """Each of ``warnings`` as a ``Warning: 299 - "text"`` header, the form Kubernetes answers
    its warnings in: something the client should tell its user although the request succeeded.
    The text is a JSON string, so it stays ASCII and a client reads it back with a JSON parser."""
    for text in warnings:
        response.headers.append("Warning", f"299 - {json.dumps(text)}")


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
    return resource_version(if_match.strip().removeprefix("W/").strip('"'), path="header.If-Match")


def component_ref(name: str) -> str:
    return f"#/components/schemas/{name}"


def with_manifest_schemas(
    document: dict[str, Any], manifests: dict[str, Callable[[str], dict[str, Any]]]
) -> dict[str, Any]:
    """The OpenAPI document with each manifest's JSON Schema among its components, so clients
    and tools resolve request bodies without fetching anything else. ``manifests`` maps a kind
    to the function giving its schema for a ``$ref`` template; a kind's own definitions are
    named ``<kind>.<definition>``, so two kinds never clash."""
    components = document.setdefault("components", {}).setdefault("schemas", {})
    for kind, schema_of in manifests.items():
        schema = schema_of(component_ref(kind + ".{model}"))
        schema.pop("$schema", None)
        for name, definition in schema.pop("$defs", {}).items():
            components[f"{kind}.{name}"] = definition
        components[kind] = schema
    return document
