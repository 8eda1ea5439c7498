"""``/api/v1/jobs``: create, list, read, apply, update, duplicate and delete streaming jobs."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from streamjobs.api.auth import require_actor, services_of
from streamjobs.api.bodies import read_document
from streamjobs.api.conventions import (
    JSON_DOCUMENT,
    add_warnings,
    etag,
    expected_version,
    json_response,
    location,
    manifest_body,
)
from streamjobs.domain.access import Actor
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.services.checkpoint_state import kept_checkpoint_notice
from streamjobs.services.jobs import ApplyOutcome, JobQuery, job_document
from streamjobs.services.resources import LARGEST_INTEGER

JOBS = "/api/v1/jobs"
router = APIRouter(prefix=JOBS, tags=["jobs"])

MANIFEST_BODY = manifest_body("StreamingJob")
MERGE_PATCH_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": "A JSON merge patch (RFC 7396) of the manifest; the name cannot change.",
        "content": {"application/merge-patch+json": {"schema": {"type": "object"}}},
    }
}


@router.get("", summary="List jobs", response_model=JSON_DOCUMENT)
async def list_jobs(
    request: Request,
    status: str | None = Query(None, description="Only jobs with this status."),
    tag: str | None = Query(None, description="Only jobs with this tag: key or key=value."),
    bundle: str | None = Query(None, description="Only jobs in this resource bundle."),
    search: str | None = Query(None, description="Only jobs whose name contains this text."),
    limit: int = Query(50, description="Page size, 1 to 500."),
    offset: int = Query(0, ge=0, le=LARGEST_INTEGER, description="How many matching jobs to skip."),
    actor: Actor = Depends(require_actor),
) -> Response:
    query = JobQuery(
        status=status, tag=tag, bundle=bundle, search=search, limit=limit, offset=offset
    )
    page, latest = services_of(request).jobs.list_with_latest(query, actor=actor)
    return json_response(
        {
            "items": [job_document(record, latest.get(record.name)) for record in page.items],
            "total": page.total,
            "limit": page.limit,
            "offset": page.offset,
        }
    )


@router.post("", status_code=201, summary="Create a job", openapi_extra=MANIFEST_BODY)
def create_job(
    request: Request,
    response: Response,
    document: Any = Depends(read_document),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    jobs = services_of(request).jobs
    record = jobs.create(document, actor=actor)
    response.headers["Location"] = location(JOBS, record.name)
    response.headers["ETag"] = etag(record.version)
    add_warnings(response, jobs.resumed_state_warnings(record))
    return job_document(record)


@router.get("/{name}", summary="Get a job", response_model=JSON_DOCUMENT)
async def get_job(name: str, request: Request, actor: Actor = Depends(require_actor)) -> Response:
    record, latest = services_of(request).jobs.show(name, actor=actor)
    return json_response(job_document(record, latest), headers={"ETag": etag(record.version)})


@router.put(
    "/{name}",
    summary="Apply a job: create it or bring it to the manifest",
    openapi_extra=MANIFEST_BODY,
    responses={201: {"description": "Created"}, 200: {"description": "Configured or unchanged"}},
    response_model=JSON_DOCUMENT,
)
async def apply_job(
    name: str,
    request: Request,
    document: Any = Depends(read_document),
    actor: Actor = Depends(require_actor),
) -> Response:
    # answered on the loop when it only reads (see conventions.py); a write goes to a thread
    jobs = services_of(request).jobs
    unchanged = jobs.unchanged_by(name, document, actor=actor)
    if unchanged is not None:
        record, outcome = unchanged, ApplyOutcome.UNCHANGED
    else:
        record, outcome = await run_in_threadpool(jobs.apply, name, document, actor=actor)
    headers = {"ETag": etag(record.version)}
    if outcome == "created":
        headers["Location"] = location(JOBS, record.name)
    answer = json_response(
        {"result": str(outcome), "job": job_document(record)},
        status_code=201 if outcome == "created" else 200,
        headers=headers,
    )
    if outcome == "created":
        add_warnings(answer, await run_in_threadpool(jobs.resumed_state_warnings, record))
    return answer


@router.patch("/{name}", summary="Update a job with a merge patch", openapi_extra=MERGE_PATCH_BODY)
def update_job(
    name: str,
    request: Request,
    response: Response,
    document: Any = Depends(read_document),
    if_match: str | None = Header(None, description="Only if the job is at this version."),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    record = services_of(request).jobs.update(
        name, document, actor=actor, expected_version=expected_version(if_match)
    )
    response.headers["ETag"] = etag(record.version)
    return job_document(record)


@router.post(
    "/{name}/duplicate",
    status_code=201,
    summary="Duplicate a job under a new name",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"name": {"type": "string"}},
                    }
                }
            },
        }
    },
)
def duplicate_job(
    name: str,
    request: Request,
    response: Response,
    document: Any = Depends(read_document),
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    if not isinstance(document, dict) or not isinstance(document.get("name"), str):
        raise InvalidInput([FieldError("body.name", "give the new job's name as a string")])
    jobs = services_of(request).jobs
    record = jobs.duplicate(name, new_name=document["name"], actor=actor)
    response.headers["Location"] = location(JOBS, record.name)
    add_warnings(response, jobs.resumed_state_warnings(record))
    return job_document(record)


@router.delete(
    "/{name}",
    status_code=204,
    summary="Delete a job",
    description="Refused (409, naming it) while the job has a live application, unless "
    "`abort=true`: then that application is aborted and the job deleted once it has ended "
    "(409 while another such delete of the job waits). A pipeline's checkpoint stays (a "
    "`Warning` header says where: a job created under the name again resumes from it) unless "
    "`deleteCheckpoint=true`; then it is deleted with the job, or the delete refused (409) when "
    "it is not a local directory inside the checkpoint root or the bundle's data roots.",
)
async def delete_job(
    name: str,
    request: Request,
    if_match: str | None = Header(None, description="Only if the job is at this version."),
    abort: bool = Query(False, description="Abort the job's live application first."),
    delete_checkpoint: bool = Query(
        False, alias="deleteCheckpoint", description="Delete the job's checkpoint with it."
    ),
    actor: Actor = Depends(require_actor),
) -> Response:
    jobs, version = services_of(request).jobs, expected_version(if_match)
    if abort:  # waits for the supervisor on the event loop, holding no worker thread
        deleted = await jobs.delete_aborting(
            name, actor=actor, expected_version=version, delete_checkpoint=delete_checkpoint
        )
    else:
        deleted = await run_in_threadpool(
            jobs.delete,
            name,
            actor=actor,
            expected_version=version,
            delete_checkpoint=delete_checkpoint,
        )
    answer = Response(status_code=204)
    if deleted.kept_checkpoint is not None:
        add_warnings(answer, [kept_checkpoint_notice(name, deleted.kept_checkpoint)])
    return answer


@router.get("/{name}/template", summary="The job's full resolved template")
def job_template(
    name: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    return services_of(request).jobs.template(name, actor=actor)
