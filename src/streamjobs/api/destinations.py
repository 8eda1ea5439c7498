"""``/api/v1/notification-destinations``: create, list, read, apply, delete and test the places
job notifications go to (email, webhook, Slack), and read each one's recent deliveries.

A destination's secret fields are names of secrets of its bundle, never values, so everything
here can be shown to whoever may read it. Changing and testing take "Manage bundles"; reading
the deliveries too (they name jobs of every bundle).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request

from streamjobs.api.auth import require_actor, services_of
from streamjobs.api.manifest_routes import ManifestResource, add_manifest_routes
from streamjobs.domain.access import Actor
from streamjobs.services.destinations import (
    MAX_DELIVERIES,
    delivery_document,
    destination_document,
)

DESTINATIONS = "/api/v1/notification-destinations"
router = APIRouter(prefix=DESTINATIONS, tags=["notification destinations"])

TEST_FAILED: dict[int | str, dict[str, Any]] = {
    409: {
        "description": "The test notification was not delivered: the problem's detail and "
        "errors[0] (at the manifest field it points at, e.g. spec.host) give the reason",
        "content": {"application/problem+json": {}},
    }
}


@router.get("", summary="List notification destinations")
def list_destinations(
    request: Request,
    kind: str | None = Query(
        None, alias="type", description="Only destinations of this type: email, webhook or slack."
    ),
    bundle: str | None = Query(None, description="Only destinations of this bundle."),
) -> dict[str, Any]:
    records = services_of(request).destinations.list(bundle=bundle, kind=kind)
    return {"items": [destination_document(record) for record in records], "total": len(records)}


add_manifest_routes(
    router,
    ManifestResource(
        collection=DESTINATIONS,
        kind="NotificationDestination",
        noun="destination",
        title="notification destination",
        service=lambda services: services.destinations,
        document=destination_document,
        delete_refused_when="while a job's spec.notifications names it",
    ),
)


@router.post(
    "/{name}/test",
    summary="Send a test notification now (409 with the reason when it is not delivered)",
    responses=TEST_FAILED,
)
def send_test_notification(
    name: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    delivery = services_of(request).destinations.send_test(name, actor=actor)
    return {"result": "delivered", "delivery": delivery_document(delivery)}


@router.get("/{name}/deliveries", summary="The destination's recent deliveries, newest first")
def destination_deliveries(
    name: str,
    request: Request,
    limit: int = Query(50, description=f"How many, 1 to {MAX_DELIVERIES}."),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    rows = services_of(request).destinations.deliveries(name, limit, actor=actor)
    return {"items": [delivery_document(row) for row in rows]}
