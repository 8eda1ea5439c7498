"""The streaming jobs list: status, rates of the live application, filters, New streaming job.

While the page is open htmx asks for its rows again (``?fragment=rows``) and swaps each one where
it stands, so a sort or a filter the person chose survives the refresh. A job's rates are shown
only while its latest application's driver processes rows; an ended job's are blank, not its
last figures.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response

from streamjobs.domain.access import Actor
from streamjobs.domain.states import AppState
from streamjobs.services.jobs import JobQuery, job_document
from streamjobs.web.job_refusals import create_job_refusal
from streamjobs.web.job_view import RATE_STATES
from streamjobs.web.pages import page_actor, render, services_of

router = APIRouter()
PAGE_SIZE = 500
REFRESH_SECONDS = 5
ROWS_FRAGMENT = "rows"
"""``?fragment=rows``: only the table's rows, each to swap in place (job_rows.html); any other
fragment is refused (422)."""


@router.get("/")
def home() -> Response:
    return RedirectResponse("/jobs", status_code=303)


@router.get("/jobs")
def jobs_page(
    request: Request,
    search: str = "",
    status: str = "",
    tag: str = "",
    fragment: Literal["", "rows"] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    services = services_of(request)
    if fragment == ROWS_FRAGMENT:
        # Every row, those the filters leave out marked hidden (as the page's filter does), so
        # a row that stops matching is hidden rather than left showing what it was.
        page, latest = services.jobs.list_with_latest(JobQuery(limit=PAGE_SIZE), actor=actor)
        rows = [_with_row(job_document(record, latest.get(record.name))) for record in page.items]
        for job in rows:
            job["row"]["hidden"] = not _matches(job, search, status, tag)
        return render(request, "job_rows.html", jobs=rows)
    page, latest = services.jobs.list_with_latest(
        JobQuery(search=search or None, status=status or None, tag=tag or None, limit=PAGE_SIZE),
        actor=actor,
    )
    jobs = [_with_row(job_document(record, latest.get(record.name))) for record in page.items]
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
        refresh_seconds=REFRESH_SECONDS,
    )


def _with_row(job: dict[str, Any]) -> dict[str, Any]:
    """The job's document plus its row's rates: its latest application's while that one's
    driver processes rows, else None (shown blank)."""
    application = job["status"].get("application") or {}
    reporting = application.get("state") in RATE_STATES
    job["row"] = {
        "input_rate": application.get("inputRowsPerSecond") if reporting else None,
        "processed_rate": application.get("processedRowsPerSecond") if reporting else None,
    }
    return job


def _matches(job: dict[str, Any], search: str, status: str, tag: str) -> bool:
    """Whether the jobs list's filters keep ``job``: its name holds ``search`` (any case), its
    status is ``status``, it has the tag ``key=value``; an empty filter keeps every job."""
    tags = {f"{key}={value}" for key, value in job["metadata"]["tags"].items()}
    return (
        search.casefold() in job["metadata"]["name"].casefold()
        and (not status or job["status"]["phase"] == status)
        and (not tag or tag in tags)
    )
