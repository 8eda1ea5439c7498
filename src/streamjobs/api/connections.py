"""``/api/v1/connections``: create, list, read, apply and delete named connections.

A connection's secret options are names of secrets, never values, so everything here can be shown
to whoever may read the connection.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response

from streamjobs.api.auth import require_actor, services_of
from streamjobs.api.bodies import read_document
from streamjobs.api.conventions import (
    etag,
    expected_version,
    location,
    manifest_body,
)
from streamjobs.domain.access import Actor
from streamjobs.services.connections import ConnectionQuery, connection_document
from streamjobs.services.resources import LARGEST_INTEGER

CONNECTIONS = "/api/v1/connections"
router = APIRouter(prefix=CONNECTIONS, tags=["connections"])

MANIFEST_BODY = manifest_body("Connection")


@router.get("", summary="List connections")
def list_connections(
    request: Request,
    connection_type: str | None = Query(
        None,
        alias="type",
        description="Only connections of this type: kafka, lakehouse, files or jdbc.",
    ),
    search: str | None = Query(None, description="Only connections whose name contains this."),
    limit: int = Query(50, description="Page size, 1 to 500."),
    offset: int = Query(
        0, ge=0, le=LARGEST_INTEGER, description="How many matching connections to skip."
    ),
) -> dict[str, Any]:
    query = ConnectionQuery(type=connection_type, search=search, limit=limit, offset=offset)
    page = services_of(request).connections.list(query)
    return {
        "items": [connection_document(record) for record in page.items],
        "total": page.total,
        "limit": page.limit,
        "offset": page.offset,
    }


@router.post("", status_code=201, summary="Create a connection", openapi_extra=MANIFEST_BODY)
def create_connection(
    request: Request,
    response: Response,
    document: Any = Depends(read_document),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    record = services_of(request).connections.create(document, actor=actor)
    response.headers["Location"] = location(CONNECTIONS, record.name)
    response.headers["ETag"] = etag(record.version)
    return connection_document(record)


@router.get("/{name}", summary="Get a connection")
def get_connection(name: str, request: Request, response: Response) -> dict[str, Any]:
    record = services_of(request).connections.get(name)
    response.headers["ETag"] = etag(record.version)
    return connection_document(record)


@router.put(
    "/{name}",
    summary="Apply a connection: create it or bring it to the manifest",
    openapi_extra=MANIFEST_BODY,
    responses={201: {"description": "Created"}, 200: {"description": "Configured or unchanged"}},
)
def apply_connection(
    name: str,
    request: Request,
    response: Response,
    document: Any = Depends(read_document),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    record, outcome = services_of(request).connections.apply(name, document, actor=actor)
    if outcome == "created":
        response.status_code = 201
        response.headers["Location"] = location(CONNECTIONS, record.name)
    response.headers["ETag"] = etag(record.version)
    return {"result": str(outcome), "connection": connection_document(record)}


@router.delete(
    "/{name}",
    status_code=204,
    summary="Delete a connection (409 while a job's dataset uses it)",
)
def delete_connection(
    name: str,
    request: Request,
    if_match: str | None = Header(None, description="Only if the connection is at this version."),
    actor: Actor = Depends(require_actor),
) -> Response:
    services_of(request).connections.delete(
        name, actor=actor, expected_version=expected_version(if_match)
    )
    return Response(status_code=204)
