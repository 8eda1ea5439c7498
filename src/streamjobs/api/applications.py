"""Applications over HTTP: Run (from the checkpoint as it is, or from a snapshot), Stop,
Suspend, Resume and Abort, and an application's attempts, figures, events, progress reports, logs
and template; plus the route drivers report to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import FileResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from streamjobs.api.application_models import ApplicationDetailsAnswer
from streamjobs.api.auth import require_actor, services_of
from streamjobs.api.bodies import read_document
from streamjobs.api.conventions import JSON_DOCUMENT, json_response
from streamjobs.domain.access import Actor
from streamjobs.domain.errors import FieldError, InvalidInput, Unauthenticated
from streamjobs.domain.formats import SnapshotName
from streamjobs.http.documents import application_document, details_document, event_document
from streamjobs.services.applications import ApplicationQuery
from streamjobs.services.resources import LARGEST_INTEGER

APPLICATIONS = "/api/v1/applications"
jobs_router = APIRouter(prefix="/api/v1/jobs", tags=["applications"])
router = APIRouter(prefix=APPLICATIONS, tags=["applications"])
reports_router = APIRouter(prefix=APPLICATIONS, tags=["drivers"])


class RunOptions(BaseModel):
    """The optional body of a Run: where the new application starts from."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    from_snapshot: SnapshotName | None = Field(
        None,
        description="Start from a copy of this snapshot of the job (a pipeline) instead of the "
        "checkpoint as it is; the checkpoint it replaces is kept as a snapshot of kind replaced.",
    )
    allow_replay: bool = Field(
        False,
        description="Start from the snapshot even when an output has gone on past its position "
        "(without it that is refused, 409, naming each such output).",
    )


@jobs_router.post(
    "/{name}/run",
    status_code=201,
    summary="Run a job: start a new application",
    description="Without a body, the application starts from the job's checkpoint as it is. "
    "`fromSnapshot` names a snapshot to start from (404 when the job has none of that name, "
    "409 when it is not READY or, unless `allowReplay`, older than an output's position).",
)
def run_job(
    name: str,
    request: Request,
    response: Response,
    options: RunOptions | None = None,
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    options = options or RunOptions()
    application = services_of(request).applications.run(
        name, actor=actor, from_snapshot=options.from_snapshot, allow_replay=options.allow_replay
    )
    response.headers["Location"] = f"{APPLICATIONS}/{application.id}"
    return application_document(application)


@jobs_router.post(
    "/{name}/stop",
    status_code=202,
    summary="Stop the job's live application after the micro-batch in flight",
)
def stop_job(name: str, request: Request, actor: Actor = Depends(require_actor)) -> dict[str, Any]:
    return application_document(services_of(request).applications.stop(name, actor=actor))


@jobs_router.post(
    "/{name}/suspend",
    status_code=202,
    summary="Suspend the job's live application until Resume",
    description="A graceful stop after the micro-batch in flight; a pipeline takes an aligned "
    "snapshot (kind suspend) on the way. The application stays SUSPENDED, not counted against "
    "the bundle's quotas, until Resume starts it again with the job as edited since.",
)
def suspend_job(
    name: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    return application_document(services_of(request).applications.suspend(name, actor=actor))


@jobs_router.post(
    "/{name}/resume", status_code=202, summary="Resume the job's suspended application"
)
def resume_job(
    name: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    return application_document(services_of(request).applications.resume(name, actor=actor))


@jobs_router.get(
    "/{name}/applications",
    summary="List the job's applications, newest first",
    response_model=JSON_DOCUMENT,
)
async def list_job_applications(
    name: str,
    request: Request,
    status: str | None = Query(None, description="Only applications in this state."),
    triggered_by: str | None = Query(None, alias="triggeredBy", description="Started by."),
    tag: str | None = Query(None, description="Only with this tag: key or key=value."),
    search: str | None = Query(None, description="Part of the application's name or id."),
    limit: int = Query(50, description="Page size, 1 to 500."),
    offset: int = Query(0, ge=0, le=LARGEST_INTEGER, description="How many to skip."),
    actor: Actor = Depends(require_actor),
) -> Response:
    query = ApplicationQuery(
        job_name=name,
        status=status,
        triggered_by=triggered_by,
        tag=tag,
        search=search,
        limit=limit,
        offset=offset,
    )
    return _page(request, query, actor)


@router.get(
    "", summary="List applications of every job, newest first", response_model=JSON_DOCUMENT
)
async def list_applications(
    request: Request,
    job: str | None = Query(None, description="Only this job's."),
    status: str | None = Query(None, description="Only applications in this state."),
    triggered_by: str | None = Query(None, alias="triggeredBy", description="Started by."),
    tag: str | None = Query(None, description="Only with this tag: key or key=value."),
    search: str | None = Query(None, description="Part of the application's name or id."),
    limit: int = Query(50, description="Page size, 1 to 500."),
    offset: int = Query(0, ge=0, le=LARGEST_INTEGER, description="How many to skip."),
    actor: Actor = Depends(require_actor),
) -> Response:
    query = ApplicationQuery(
        job_name=job,
        status=status,
        triggered_by=triggered_by,
        tag=tag,
        search=search,
        limit=limit,
        offset=offset,
    )
    return _page(request, query, actor)


@router.get(
    "/{application_id}",
    summary="An application with its attempts, latest figures and standby driver",
    response_model=ApplicationDetailsAnswer,
)
async def get_application(
    application_id: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    return details_document(services_of(request).applications.get(application_id, actor=actor))


@router.post("/{application_id}/abort", status_code=202, summary="Abort an application")
def abort_application(
    application_id: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    return application_document(
        services_of(request).applications.abort(application_id, actor=actor)
    )


@router.get("/{application_id}/events", summary="What happened to the application, in order")
async def application_events(
    application_id: str,
    request: Request,
    after: int | None = Query(
        None, ge=0, le=LARGEST_INTEGER, description="Only events after this event id."
    ),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    events = services_of(request).applications.events(application_id, actor=actor, after_id=after)
    return {"items": [event_document(event) for event in events]}


@router.get("/{application_id}/metrics", summary="Latest query figures and executor figures")
async def application_metrics(
    application_id: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    details = services_of(request).applications.get(application_id, actor=actor)
    return {
        "latest": details.application.latest or {},
        "executors": details.executors,
        "executorState": {
            "running": details.application.executors_running,
            "pending": details.application.executors_pending,
        },
    }


@router.get("/{application_id}/progress", summary="The latest progress reports of its queries")
async def application_progress(
    application_id: str,
    request: Request,
    limit: int = Query(100, description="How many of the latest, 1 to 500."),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    records = services_of(request).applications.progress(application_id, actor=actor, limit=limit)
    return {
        "items": [
            {"attempt": r.attempt, "sequence": r.sequence, "type": r.type, "event": r.payload}
            for r in records
        ]
    }


@router.get("/{application_id}/template", summary="The job exactly as this application runs it")
def application_template(
    application_id: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    return services_of(request).applications.template(application_id, actor=actor)


@router.get("/{application_id}/logs", summary="Part of a driver or executor log")
def application_log(
    application_id: str,
    request: Request,
    instance: str = Query("driver", description="driver, driver-stdout, executor-<id>, …"),
    attempt: int | None = Query(
        None, ge=0, le=LARGEST_INTEGER, description="Attempt number; default the latest."
    ),
    tail: int | None = Query(None, ge=1, le=LARGEST_INTEGER, description="The last N lines."),
    start: int | None = Query(None, ge=0, le=LARGEST_INTEGER, description="From this byte."),
    end: int | None = Query(
        None, ge=0, le=LARGEST_INTEGER, description="Up to this byte (not included)."
    ),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    logs = services_of(request).logs
    piece = logs.read(
        application_id,
        actor=actor,
        instance=instance,
        attempt=attempt,
        tail=tail,
        start=start,
        end=end,
    )
    return {
        "instance": piece.instance,
        "attempt": piece.attempt,
        "start": piece.start,
        "end": piece.end,
        "size": piece.size,
        "text": piece.text,
        "instances": logs.instances(application_id, actor=actor, attempt=piece.attempt),
    }


@router.get("/{application_id}/logs/download", summary="A whole log file", response_model=None)
def download_log(
    application_id: str,
    request: Request,
    instance: str = Query("driver"),
    attempt: int | None = Query(None, ge=0, le=LARGEST_INTEGER),
    actor: Actor = Depends(require_actor),
) -> Response:
    number, log = services_of(request).logs.path(
        application_id, actor=actor, instance=instance, attempt=attempt
    )
    filename = f"{application_id}-{number}-{instance}.log"
    if isinstance(log, Path):
        return FileResponse(log, media_type="text/plain", filename=filename)
    disposition = {"Content-Disposition": f'attachment; filename="{filename}"'}
    return StreamingResponse(log, media_type="text/plain", headers=disposition)


def _report_token(application_id: str, request: Request) -> str:
    """The application token a driver reports with, checked against the application before the
    body is read: without it nobody can make the server read a report."""
    scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("this route needs the application's 'Authorization: Bearer' token")
    services_of(request).reports.check_token(application_id, token.strip())
    return token.strip()


@reports_router.post(
    "/{application_id}/reports",
    summary="Where a driver posts its query events (with its application's token)",
)
def receive_reports(
    application_id: str,
    request: Request,
    token: str = Depends(_report_token),
    document: Any = Depends(read_document),
) -> dict[str, Any]:
    if not isinstance(document, dict) or not isinstance(document.get("events"), list):
        raise InvalidInput([FieldError("body.events", "give the events as a list")])
    added = services_of(request).reports.receive(application_id, token, document["events"])
    return {"accepted": added}


def _page(request: Request, query: ApplicationQuery, actor: Actor) -> Response:
    page = services_of(request).applications.list(query, actor=actor)
    return json_response(
        {
            "items": [application_document(record) for record in page.items],
            "total": page.total,
            "limit": page.limit,
            "offset": page.offset,
        }
    )
