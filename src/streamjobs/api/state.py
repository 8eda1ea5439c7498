"""``GET /api/v1/applications/{id}/state``: a look inside a pipeline application's state.

Each query's stateful operators with their id, name, state stores, partitions, state rows and
memory (from the latest progress report), the query's watermark and the batches the operator's
state covers (from Spark's ``state-metadata``), and with ``?operator=`` a read-only preview of the
first ``limit`` keys and values of that operator's state. Reading the checkpoint runs a short
Spark job (``services.state_view``): the answer takes seconds the first time, and is kept briefly.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query, Request

from streamjobs.api.auth import require_actor, services_of
from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Conflict
from streamjobs.domain.state_figures import OperatorState, QueryFigures
from streamjobs.domain.state_inspection import (
    DEFAULT_PREVIEW_ROWS,
    MAX_OPERATOR_ID,
    MAX_PREVIEW_ROWS,
    preview_request,
)
from streamjobs.services.container import Services
from streamjobs.services.resources import iso_time
from streamjobs.services.state_view import StateOverview, StateView

router = APIRouter(prefix="/api/v1/applications", tags=["applications"])


@router.get(
    "/{application_id}/state",
    summary="The application's stateful operators, and a preview of one operator's state",
)
def application_state(
    application_id: str,
    request: Request,
    operator: int | None = Query(
        None, ge=0, le=MAX_OPERATOR_ID, description="Preview this stateful operator's state."
    ),
    query: str | None = Query(
        None, description="The query (its checkpoint directory) of the operator to preview."
    ),
    store_name: str | None = Query(
        None, alias="storeName", description="The operator's state store to preview."
    ),
    limit: int = Query(
        DEFAULT_PREVIEW_ROWS, ge=1, le=MAX_PREVIEW_ROWS, description="How many rows to preview."
    ),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    preview = preview_request(
        operator=None if operator is None else str(operator),
        query=query,
        store_name=store_name,
        limit=str(limit) if operator is not None else None,
    )
    overview = state_view_of(services_of(request)).describe(
        application_id, actor=actor, preview=preview
    )
    return state_document(overview)


def state_view_of(services: Services) -> StateView:
    """The server's state view; ``Conflict`` on a server built without one."""
    view = services.state_view
    if view is None:
        raise Conflict("this server cannot read jobs' state (it runs no Spark tools)")
    return view


def state_document(overview: StateOverview) -> dict[str, Any]:
    application = overview.application
    return {
        "application": application.id,
        "name": application.name,
        "job": application.job_name,
        "state": str(application.state),
        "checkpoint": overview.checkpoint,
        "readAt": iso_time(overview.read_at) if overview.read_at else None,
        "queries": [_query_document(query) for query in overview.queries],
        "preview": overview.preview.to_wire() if overview.preview else None,
    }


def _query_document(query: QueryFigures) -> dict[str, Any]:
    return {
        "query": query.key,
        "name": query.name,
        "batchId": query.batch_id,
        "reportedAt": iso_time(query.reported_at) if query.reported_at else None,
        "watermark": query.watermark,
        "operators": [_operator_document(operator) for operator in query.operators],
        "error": query.error,
    }


def _operator_document(operator: OperatorState) -> dict[str, Any]:
    return {
        "id": operator.id,
        "name": operator.name,
        "stores": list(operator.stores),
        "partitions": operator.partitions,
        "rows": operator.rows,
        "rowsUpdated": operator.rows_updated,
        "rowsRemoved": operator.rows_removed,
        "rowsDroppedByWatermark": operator.rows_dropped_by_watermark,
        "memoryBytes": operator.memory_bytes,
        "batches": {"min": operator.min_batch, "max": operator.max_batch},
    }
