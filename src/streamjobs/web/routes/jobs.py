"""The streaming jobs list: status, rates of the live application, filters, New streaming job."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response

from streamjobs.domain.access import Actor
from streamjobs.domain.states import AppState
from streamjobs.services.jobs import JobQuery, job_document
from streamjobs.web.job_refusals import create_job_refusal
from streamjobs.web.pages import page_actor, render, services_of

router = APIRouter()
PAGE_SIZE = 500


@router.get("/")
def home() -> Response:
    return RedirectResponse("/jobs", status_code=303)


@router.get("/jobs")
def jobs_page(
    request: Request,
    search: str = "",
    status: str = "",
    tag: str = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    services = services_of(request)
    page, latest = services.jobs.list_with_latest(
        JobQuery(search=search or None, status=status or None, tag=tag or None, limit=PAGE_SIZE),
        actor=actor,
    )
    jobs = [job_document(record, latest.get(record.name)) for record in page.items]
    tags = sorted({f"{k}={v}" for job in jobs for k, v in job["metadata"]["tags"].items()})
    return render(
        request,
        "jobs.html",
        jobs=jobs,
        total=page.total,
        search=search,
        status=status,
        tag=tag,
        tags=tags,
        statuses=["Idle", *(state.value for state in AppState)],
        actor=actor,
        create_refusal=create_job_refusal(actor),
    )
