"""``/api/v1/jobs/{name}/snapshots``: list, read, take and delete the named copies of a pipeline
job's checkpoint that a Run can start from.

Taking one answers 202 at once with the snapshot TAKING: the runner copies the checkpoint at its
next batch boundary and the supervisor records the snapshot READY (or FAILED, with why) when it
collects the copy; a client polls the snapshot's URL until then (``streamjobs snapshot`` does).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from streamjobs.api.auth import require_actor, services_of
from streamjobs.api.conventions import JSON_DOCUMENT, json_response, location
from streamjobs.domain.access import Actor
from streamjobs.domain.formats import SnapshotName
from streamjobs.domain.snapshots import OutputPosition
from streamjobs.services.resources import iso_time
from streamjobs.store.snapshots import SnapshotRecord

JOBS = "/api/v1/jobs"
router = APIRouter(prefix=JOBS, tags=["snapshots"])


class TakeSnapshot(BaseModel):
    """The body of a request for a snapshot now (all of it optional)."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    name: SnapshotName | None = Field(
        None, description="The snapshot's name; default manual-<UTC date>-<time>."
    )


def snapshots_of(job_name: str) -> str:
    """The URL path of a job's snapshots."""
    return location(JOBS, job_name) + "/snapshots"


@router.get(
    "/{name}/snapshots",
    summary="List the job's snapshots, newest first",
    response_model=JSON_DOCUMENT,
)
async def list_snapshots(
    name: str, request: Request, actor: Actor = Depends(require_actor)
) -> Response:
    records = services_of(request).snapshots.list(name, actor=actor)
    return json_response({"items": [snapshot_document(record) for record in records]})


@router.post(
    "/{name}/snapshots",
    status_code=202,
    summary="Take a snapshot of the running pipeline's checkpoint at its next batch boundary",
    description="Answers at once with the snapshot TAKING; it becomes READY (or FAILED, with "
    "`error`) once the runner has copied the checkpoint. 409 when the job is not a pipeline, "
    "keeps no checkpoint (guarantee NONE), has no running application, or already has a "
    "snapshot of that name.",
)
def take_snapshot(
    name: str,
    request: Request,
    response: Response,
    body: TakeSnapshot | None = None,
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    given = body.name if body is not None else None
    record = services_of(request).snapshots.take(name, name=given, actor=actor)
    response.headers["Location"] = location(snapshots_of(record.job_name), record.name)
    return snapshot_document(record)


@router.get(
    "/{name}/snapshots/{snapshot}",
    summary="A snapshot: what it was taken from and each output's position",
    response_model=JSON_DOCUMENT,
)
async def get_snapshot(
    name: str, snapshot: str, request: Request, actor: Actor = Depends(require_actor)
) -> Response:
    record = services_of(request).snapshots.get(name, snapshot, actor=actor)
    return json_response(snapshot_document(record))


@router.delete(
    "/{name}/snapshots/{snapshot}",
    status_code=204,
    summary="Delete a snapshot and its copy of the checkpoint",
    description="Needs UPDATE on the job's bundle; 409 while the snapshot is being taken.",
)
def delete_snapshot(
    name: str, snapshot: str, request: Request, actor: Actor = Depends(require_actor)
) -> Response:
    services_of(request).snapshots.delete(name, snapshot, actor=actor)
    return Response(status_code=204)


def snapshot_document(record: SnapshotRecord) -> dict[str, Any]:
    """A snapshot as the API shows it; each position also in words (``description``)."""
    return {
        "name": record.name,
        "job": record.job_name,
        "kind": str(record.kind),
        "status": str(record.status),
        "application": record.application_id,
        "specVersion": record.spec_version,
        "batches": dict(record.batches),
        "positions": [position_document(position) for position in record.positions],
        "requestedAt": _time(record.requested_at),
        "takenAt": _time(record.taken_at),
        "sizeBytes": record.size_bytes,
        "error": record.error,
        "requestedBy": record.requested_by,
    }


def position_document(position: OutputPosition) -> dict[str, Any]:
    document: dict[str, Any] = position.model_dump(mode="json", by_alias=True)
    document["description"] = position.describe()
    return document


def _time(moment: datetime | None) -> str | None:
    return iso_time(moment) if moment else None
