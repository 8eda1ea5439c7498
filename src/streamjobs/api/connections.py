"""``/api/v1/connections``: create, list, read, apply and delete named connections.

A connection's secret options are names of secrets, never values, so everything here can be shown
to whoever may read the connection.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from streamjobs.api.auth import services_of
from streamjobs.api.manifest_routes import ManifestResource, add_manifest_routes
from streamjobs.services.connections import ConnectionQuery, connection_document
from streamjobs.services.resources import LARGEST_INTEGER

CONNECTIONS = "/api/v1/connections"
router = APIRouter(prefix=CONNECTIONS, tags=["connections"])


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


add_manifest_routes(
    router,
    ManifestResource(
        collection=CONNECTIONS,
        kind="Connection",
        noun="connection",
        title="connection",
        service=lambda services: services.connections,
        document=connection_document,
        delete_refused_when="while a job's dataset uses it",
    ),
)
