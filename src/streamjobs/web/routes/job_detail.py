"""A job's page: its Details, its Applications (filters, Run, Abort app), the header actions
(Configure, Duplicate, Delete, Template JSON, API operations), and the form fallbacks that make
Run, Abort app and Delete work without script. A button the person lacks the permission for is
disabled and says which permission (``web.job_refusals``), and its fallback form is left out."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Conflict, StreamjobsError
from streamjobs.domain.states import ACTIVE_STATES, LIVE_STATES, TERMINAL_STATES, AppState
from streamjobs.http.documents import application_document
from streamjobs.services.applications import ApplicationQuery
from streamjobs.services.jobs import job_document
from streamjobs.store import ApplicationRecord
from streamjobs.web.job_refusals import job_refusals
from streamjobs.web.pages import page_actor, render, services_of

router = APIRouter()

APPLICATIONS_SHOWN = 500
"""The newest applications a job's page loads; filters then work over them in the browser."""
TABS = ("applications", "details")
ABORT_REFUSALS = {
    "ended": "This application has ended; only a live application can be aborted",
    "stopping": "This application is already being stopped",
}
"""Why Abort app is disabled (its title), by reason; the page's script shows the same."""


@dataclass(frozen=True)
class ApplicationFilters:
    """The Applications tab's filters, as query parameters named like the REST API's."""

    status: str = ""
    triggered_by: str = ""
    tag: str = ""
    search: str = ""
    run_as: str = ""

    @property
    def any(self) -> bool:
        return any((self.status, self.triggered_by, self.tag, self.search, self.run_as))

    def query(self, job_name: str) -> ApplicationQuery:
        """The store's query for the filters it knows (run-as is matched here, in ``matches``)."""
        return ApplicationQuery(
            job_name=job_name,
            status=self.status or None,
            triggered_by=self.triggered_by or None,
            tag=self.tag or None,
            search=self.search or None,
            limit=APPLICATIONS_SHOWN,
        )

    def matches_run_as(self, record: ApplicationRecord) -> bool:
        return not self.run_as or record.run_as == self.run_as


@dataclass(frozen=True)
class ApiOperation:
    """A ready-to-copy ``curl`` command for one REST call about the job."""

    title: str
    command: str


@router.get("/jobs/{name}")
def job_detail_page(
    request: Request,
    name: str,
    tab: str = "applications",
    status: str = "",
    triggered_by: Annotated[str, Query(alias="triggeredBy")] = "",
    tag: str = "",
    search: str = "",
    run_as: Annotated[str, Query(alias="runAs")] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    filters = ApplicationFilters(
        status=status.upper(), triggered_by=triggered_by, tag=tag, search=search, run_as=run_as
    )
    return _detail_page(request, name, actor, filters=filters, tab=tab)


@router.get("/jobs/{name}/template")
def job_template_page(request: Request, name: str, actor: Actor = Depends(page_actor)) -> Response:
    template = services_of(request).jobs.template(name, actor=actor)
    return render(
        request,
        "job_template.html",
        nav="jobs",
        name=name,
        job_path=job_path(name),
        template_json=json.dumps(template, indent=2, ensure_ascii=False),
    )


@router.post("/jobs/{name}/run")
def run_job(
    request: Request,
    name: str,
    actor: Actor = Depends(page_actor),
) -> Response:
    """Run without script: start an application and come back to the job's page."""
    try:
        services_of(request).applications.run(name, actor=actor)
    except Conflict as error:
        return _detail_page(request, name, actor, error=error.detail, status_code=409)
    return RedirectResponse(job_path(name), status_code=303)


@router.post("/jobs/{name}/delete")
async def delete_job(
    request: Request,
    name: str,
    abort: Annotated[bool, Form()] = False,
    actor: Actor = Depends(page_actor),
) -> Response:
    """Delete the job (after the page's confirmation); refused while it has a live application,
    unless the confirmation asked to abort that first (waiting on the event loop, as the API)."""
    jobs = services_of(request).jobs
    try:
        if abort:
            await jobs.delete_aborting(name, actor=actor)
        else:
            await run_in_threadpool(jobs.delete, name, actor=actor)
    except Conflict as error:
        return await run_in_threadpool(
            _detail_page, request, name, actor, error=error.detail, status_code=409
        )
    return RedirectResponse("/jobs", status_code=303)


@router.post("/applications/{application_id}/abort")
def abort_application(
    request: Request,
    application_id: str,
    next: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Abort app without script; back to ``next`` (a local path) or the job's page."""
    services = services_of(request)
    job_name = services.applications.get(application_id, actor=actor).application.job_name
    try:
        services.applications.abort(application_id, actor=actor)
    except Conflict as error:
        return _detail_page(request, job_name, actor, error=error.detail, status_code=409)
    return RedirectResponse(_local_path(next, job_path(job_name)), status_code=303)


def _detail_page(
    request: Request,
    name: str,
    actor: Actor,
    *,
    filters: ApplicationFilters | None = None,
    tab: str = "applications",
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    services = services_of(request)
    filters = filters or ApplicationFilters()
    record = services.jobs.get(name, actor=actor)
    refusals = job_refusals(services, name, record.bundle, actor)
    newest = services.applications.list(
        ApplicationQuery(job_name=name, limit=APPLICATIONS_SHOWN), actor=actor
    ).items
    matching = (
        services.applications.list(filters.query(name), actor=actor).items
        if filters.any
        else newest
    )
    matching_ids = {app.id for app in matching if filters.matches_run_as(app)}
    loaded = {app.id: app for app in [*newest, *matching]}
    applications = sorted(loaded.values(), key=lambda app: app.created_at, reverse=True)
    job = job_document(record, newest[0] if newest else None)
    now = services.clock.now()
    return render(
        request,
        "job_detail.html",
        status_code=status_code,
        nav="jobs",
        job=job,
        job_path=job_path(name),
        duplicate_href=f"/jobs/new?from={quote(name, safe='')}",
        tab=tab if tab in TABS else "applications",
        error=error,
        filters=filters,
        applications=[
            _application_row(app, app.id in matching_ids, now, refusals.abort)
            for app in applications
        ],
        refusals=refusals,
        options=_filter_options(newest, filters),
        states=[(state.value, state.value.replace("_", " ").capitalize()) for state in AppState],
        compute=_compute_facts(job, _node_types(request, name, actor)),
        operations=_api_operations(services.settings.resolved_public_url, name),
        now=now.isoformat(),
        abort_refusals=ABORT_REFUSALS,
        live_application=newest[0] if newest and newest[0].state in LIVE_STATES else None,
    )


def _application_row(
    record: ApplicationRecord, shown: bool, now: datetime, abort_forbidden: str | None
) -> dict[str, Any]:
    """The application as the API shows it, plus what its row needs to render (Abort app is
    disabled for want of a permission before anything else)."""
    document = application_document(record)
    active = record.state in ACTIVE_STATES
    ended = now if active else record.transition_time
    document["row"] = {
        "shown": shown,
        "active": active,
        "abort_refusal": abort_forbidden or _abort_refusal(record.state),
        "duration": format_duration((ended - record.created_at).total_seconds()),
        "tags": " ".join(f"{key}={value}" for key, value in record.tags.items()),
    }
    return document


def _abort_refusal(state: AppState) -> str | None:
    """Why Abort app is disabled for an application in ``state``; None when it is allowed."""
    if state in TERMINAL_STATES:
        return ABORT_REFUSALS["ended"]
    if state is AppState.TERMINATING:
        return ABORT_REFUSALS["stopping"]
    return None


def _filter_options(
    applications: list[ApplicationRecord], filters: ApplicationFilters
) -> dict[str, list[str]]:
    """The choices of each filter: the values the job's applications have, and the current one."""
    return {
        "runAs": sorted({app.run_as for app in applications} | _chosen(filters.run_as)),
        "triggeredBy": sorted(
            {app.triggered_by for app in applications} | _chosen(filters.triggered_by)
        ),
        "tag": sorted(
            {f"{k}={v}" for app in applications for k, v in app.tags.items()} | _chosen(filters.tag)
        ),
    }


def _chosen(value: str) -> set[str]:
    return {value} if value else set()


def job_path(name: str) -> str:
    return f"/jobs/{quote(name, safe='')}"


def _node_types(request: Request, name: str, actor: Actor) -> dict[str, Any]:
    """The sizes of the job's driver and executor node types; empty if one is gone."""
    try:
        resolved: dict[str, Any] = services_of(request).jobs.template(name, actor=actor)["resolved"]
    except StreamjobsError:
        return {}
    node_types: dict[str, Any] = resolved.get("nodeTypes", {})
    return node_types


def _compute_facts(job: dict[str, Any], node_types: dict[str, Any]) -> list[tuple[str, str]]:
    """The Details tab's compute facts as (label, text), sizes taken from the node types."""
    instance = job["spec"]["instance"]
    standard = instance["deployment"] == "standard"
    driver = node_types.get("driver")
    executor = node_types.get("executor")
    if standard:
        count = instance.get("executors") or 1
        executor_text = _node_text(instance.get("executor"), executor)
        prefix = "up to " if instance.get("dynamic") else ""
        total = (
            f"{prefix}{count} x {_cores(executor['cores'])} = "
            f"{_cores(count * executor['cores'])}, {format_memory(count * executor['memoryMb'])}"
            if executor
            else f"{prefix}{count} executors"
        )
    else:
        executor_text = "none: executors run inside the driver"
        total = (
            f"local[{driver['cores']}] inside the driver: {_cores(driver['cores'])}, "
            f"{format_memory(driver['memoryMb'])} shared with the driver"
            if driver
            else "inside the driver"
        )
    volume = instance.get("volume")
    return [
        ("Deployment type", "Standard" if standard else "Single node"),
        ("Driver node", _node_text(instance["driver"], driver)),
        ("Executor node", executor_text),
        ("Bundle", job["spec"]["bundle"]),
        ("Total executor resources", total),
        ("Volume", f"{volume['size']} at {volume['mountPath']}" if volume else "none"),
    ]


def _node_text(name: str | None, size: dict[str, Any] | None) -> str:
    if name is None:
        return "none"
    if size is None:
        return name
    return f"{name} · {_cores(size['cores'])}, {format_memory(size['memoryMb'])}"


def _cores(count: int) -> str:
    return "1 core" if count == 1 else f"{count} cores"


def _api_operations(server_url: str, name: str) -> list[ApiOperation]:
    job_url = f"{server_url.rstrip('/')}/api/v1/jobs/{quote(name, safe='')}"
    auth = '-H "Authorization: Bearer $STREAMJOBS_TOKEN"'
    return [
        ApiOperation("Get the job", f"curl {auth} '{job_url}'"),
        ApiOperation("Run the job", f"curl -X POST {auth} '{job_url}/run'"),
        ApiOperation("List its applications", f"curl {auth} '{job_url}/applications'"),
        ApiOperation("Delete the job", f"curl -X DELETE {auth} '{job_url}'"),
    ]


def format_duration(seconds: float) -> str:
    """``45s``, ``3m 05s``, ``2h 03m 05s`` or ``1d 02h 03m`` (as the page's script does)."""
    total = max(0, int(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h {minutes:02d}m"
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def format_memory(megabytes: int) -> str:
    if megabytes % 1024 == 0:
        return f"{megabytes // 1024} GB"
    return f"{megabytes} MB"


def _local_path(target: str, default: str) -> str:
    """``target`` if it is a path on this server, else ``default`` (no open redirects)."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target
