"""A job's page: its Details (the whole spec), its Applications (filters, Abort app), its
Snapshots (``web.routes.snapshots``), Run (from the checkpoint or a snapshot), Stop, Suspend,
Resume and Upgrade (``web.routes.upgrades``), the header actions (Configure, Duplicate, Delete,
Template JSON, API operations), and the part of the page htmx refreshes while an application is
active.

Every action is a form post answered with a redirect back to the page, so the page works without
script and the server renders everything it shows. A button the person lacks the permission for
is disabled and says which permission (``web.job_refusals``); one that cannot act on the
application's state says why (``web.job_view``); a refusal the services still raise (someone
else acted first) comes back as the page with the reason in an alert, status 409."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Conflict, InvalidInput, NotFound, StreamjobsError
from streamjobs.services.checkpoint_state import kept_checkpoint_notice
from streamjobs.services.jobs import job_document
from streamjobs.services.rule_states import rule_states
from streamjobs.web.job_api_operations import api_operations
from streamjobs.web.job_notifications import (
    NotificationsTab,
    placed_errors,
    rule_standings,
    subscriptions_from_fields,
    subscriptions_of,
    with_subscriptions,
)
from streamjobs.web.job_refusals import job_refusals
from streamjobs.web.job_spec_view import spec_details
from streamjobs.web.job_view import (
    ApplicationFilters,
    filter_options,
    job_applications,
    state_choices,
)
from streamjobs.web.notices import redirect_with_notices
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.snapshot_view import ReplayOffer, replay_offer, snapshots_tab
from streamjobs.web.upgrade_view import CheckView, job_upgrades

router = APIRouter()

TABS = ("applications", "details", "snapshots", "notifications", "state")
REFRESH_SECONDS = 5
"""How often the page asks for its applications again while one of them is active."""


def application_filters(
    status: str = "",
    triggered_by: Annotated[str, Query(alias="triggeredBy")] = "",
    tag: str = "",
    search: str = "",
    run_as: Annotated[str, Query(alias="runAs")] = "",
) -> ApplicationFilters:
    """The Applications tab's filters from the query (the page's, or the refresh's)."""
    return ApplicationFilters(
        status=status.upper(), triggered_by=triggered_by, tag=tag, search=search, run_as=run_as
    )


@router.get("/jobs/{name}")
def job_detail_page(
    request: Request,
    name: str,
    tab: str = "applications",
    filters: ApplicationFilters = Depends(application_filters),
    actor: Actor = Depends(page_actor),
) -> Response:
    return detail_page(request, name, actor, filters=filters, tab=tab)


@router.get("/jobs/{name}/live")
def job_live_part(
    request: Request,
    name: str,
    filters: ApplicationFilters = Depends(application_filters),
    actor: Actor = Depends(page_actor),
) -> Response:
    """What the page refreshes (the job's status, Run/Stop/Resume, the applications' rows), for
    htmx to swap in place; it asks again only while an application is active."""
    services = services_of(request)
    record = services.jobs.get(name, actor=actor)
    refusals = job_refusals(services, name, record.bundle, actor)
    applications = job_applications(services, name, actor, refusals, filters)
    job = job_document(record, applications.newest[0] if applications.newest else None)
    return render(
        request,
        "job_live.html",
        job=job,
        job_path=job_path(name),
        filters=filters,
        refusals=refusals,
        applications=applications,
        snapshots=snapshots_tab(services, record, actor, applications, refusals),
        upgrades=job_upgrades(services, record, actor, applications),
        refresh_seconds=REFRESH_SECONDS,
    )


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
    from_snapshot: Annotated[str, Form()] = "",
    allow_replay: Annotated[bool, Form()] = False,
    actor: Actor = Depends(page_actor),
) -> Response:
    """Start an application, from the job's checkpoint as it is or from a copy of the snapshot
    ``from_snapshot``, and come back to the job's page. A start from a snapshot its outputs went
    past is refused with the outputs named, and offered again allowing replay."""
    services = services_of(request)
    try:
        started = services.applications.run(
            name, actor=actor, from_snapshot=from_snapshot or None, allow_replay=allow_replay
        )
    except (Conflict, NotFound) as error:
        if isinstance(error, NotFound) and not from_snapshot:
            raise
        return detail_page(
            request,
            name,
            actor,
            error=error.detail,
            replay=replay_offer(error, from_snapshot, allow_replay),
            status_code=409 if isinstance(error, Conflict) else 404,
        )
    if not from_snapshot:
        return RedirectResponse(job_path(name), status_code=303)
    notice = (
        f"{started.name} starts from snapshot {from_snapshot}. What the job's checkpoint held "
        "before, if anything, is kept as a snapshot of kind replaced."
    )
    return redirect_with_notices(request, job_path(name), [notice])


@router.post("/jobs/{name}/stop")
def stop_job(
    request: Request,
    name: str,
    next: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Stop the job's live application after its micro-batch in flight (after the page's
    confirmation); back to ``next`` (a local path) or the job's page."""
    applications = services_of(request).applications
    return _then_back(request, name, actor, next, lambda: applications.stop(name, actor=actor))


@router.post("/jobs/{name}/resume")
def resume_job(
    request: Request,
    name: str,
    next: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Resume the job's suspended application from its checkpoint (after the page's
    confirmation); back to ``next`` (a local path) or the job's page."""
    applications = services_of(request).applications
    return _then_back(request, name, actor, next, lambda: applications.resume(name, actor=actor))


def _then_back(
    request: Request, name: str, actor: Actor, next: str, action: Callable[[], object]
) -> Response:
    """Do ``action``, then go back to ``next`` (a local path) or the job's page; a refusal
    (someone acted first) is the job's page with its reason, 409."""
    try:
        action()
    except Conflict as error:
        return detail_page(request, name, actor, error=error.detail, status_code=409)
    return RedirectResponse(local_path(next, job_path(name)), status_code=303)


@router.post("/jobs/{name}/delete")
async def delete_job(
    request: Request,
    name: str,
    abort: Annotated[bool, Form()] = False,
    delete_checkpoint: Annotated[bool, Form()] = False,
    actor: Actor = Depends(page_actor),
) -> Response:
    """Delete the job (after the page's confirmation); refused while it has a live application,
    unless the confirmation asked to abort that first (waiting on the event loop, as the API).
    The jobs page then says where its checkpoint stays, unless that was deleted too."""
    jobs = services_of(request).jobs
    try:
        if abort:
            deleted = await jobs.delete_aborting(
                name, actor=actor, delete_checkpoint=delete_checkpoint
            )
        else:
            deleted = await run_in_threadpool(
                jobs.delete, name, actor=actor, delete_checkpoint=delete_checkpoint
            )
    except Conflict as error:
        return await run_in_threadpool(
            detail_page, request, name, actor, error=error.detail, status_code=409
        )
    kept = deleted.kept_checkpoint
    notices = [kept_checkpoint_notice(name, kept)] if kept is not None else []
    return redirect_with_notices(request, "/jobs", notices)


@router.post("/applications/{application_id}/abort")
def abort_application(
    request: Request,
    application_id: str,
    next: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Abort app (after the page's confirmation); back to ``next`` (a local path) or the job's
    page."""
    services = services_of(request)
    job_name = services.applications.get(application_id, actor=actor).application.job_name
    try:
        services.applications.abort(application_id, actor=actor)
    except Conflict as error:
        return detail_page(request, job_name, actor, error=error.detail, status_code=409)
    return RedirectResponse(local_path(next, job_path(job_name)), status_code=303)


@router.post("/jobs/{name}/notifications")
async def save_notifications(
    request: Request, name: str, actor: Actor = Depends(page_actor)
) -> Response:
    """Replace the job's subscriptions with the tab's rows: a new version of the job, through
    the job service as the form saves it; refused, the tab again with what was typed and each
    error at its field."""
    submitted = await request.form()
    fields = {key: [v for v in submitted.getlist(key) if isinstance(v, str)] for key in submitted}
    return await run_in_threadpool(_save_notifications, request, name, actor, fields)


def _save_notifications(
    request: Request, name: str, actor: Actor, fields: dict[str, list[str]]
) -> Response:
    jobs = services_of(request).jobs
    record = jobs.get(name, actor=actor)
    rows = subscriptions_from_fields(fields)
    version = (fields.get("resource_version") or [""])[0]
    try:
        jobs.apply(name, with_subscriptions(record.manifest, rows, version), actor=actor)
    except InvalidInput as invalid:
        errors, summary = placed_errors(invalid.errors, rows)
        typed = NotificationsTab(
            rows=rows, destinations=(), rules=(), errors=errors, summary=summary, version=version
        )
        return detail_page(request, name, actor, tab="notifications", typed=typed, status_code=422)
    except Conflict as conflict:
        notice = f"{conflict.detail}. Nothing was saved; what you chose is still below."
        typed = NotificationsTab(rows=rows, destinations=(), rules=(), notice=notice)
        return detail_page(request, name, actor, tab="notifications", typed=typed, status_code=409)
    return RedirectResponse(f"{job_path(name)}?tab=notifications", status_code=303)


def _notifications_tab(
    request: Request,
    record_manifest: dict[str, Any],
    version: int,
    live_application_id: str | None,
    typed: NotificationsTab | None,
) -> NotificationsTab:
    """The tab as stored, or (``typed``) as the person left it when a save was refused."""
    services = services_of(request)
    states = rule_states(services.store, live_application_id) if live_application_id else None
    rules = rule_standings(record_manifest, states)
    destinations = tuple(services.destinations.names())
    stored = subscriptions_of(record_manifest)
    if typed is None:
        return NotificationsTab(
            rows=stored,
            destinations=destinations,
            rules=rules,
            stored=stored,
            version=str(version),
        )
    return replace(
        typed,
        destinations=destinations,
        rules=rules,
        stored=stored,
        version=typed.version or str(version),
    )


def detail_page(
    request: Request,
    name: str,
    actor: Actor,
    *,
    filters: ApplicationFilters | None = None,
    tab: str = "applications",
    error: str | None = None,
    typed: NotificationsTab | None = None,
    snapshot_name: str = "",
    snapshot_name_error: str | None = None,
    replay: ReplayOffer | None = None,
    upgrade_check: CheckView | None = None,
    status_code: int = 200,
) -> Response:
    """The job's page on ``tab``; ``error`` is a refusal shown above the tabs, ``typed`` the
    Notifications tab and ``snapshot_name`` the Take snapshot form as the person left them;
    ``upgrade_check`` the Upgrade dialog's answer without script (``web.routes.upgrades``)."""
    services = services_of(request)
    filters = filters or ApplicationFilters()
    record = services.jobs.get(name, actor=actor)
    refusals = job_refusals(services, name, record.bundle, actor)
    applications = job_applications(services, name, actor, refusals, filters)
    job = job_document(record, applications.newest[0] if applications.newest else None)
    resolved = _resolved_template(request, name, actor)
    details = spec_details(
        resolved.get("spec", job["spec"]), resolved.get("resolved", {}).get("nodeTypes", {})
    )
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
        applications=applications,
        refusals=refusals,
        options=filter_options(applications.newest, filters),
        states=state_choices(),
        details=details,
        notifications=_notifications_tab(
            request,
            record.manifest,
            record.version,
            applications.live.application.id if applications.live.application else None,
            typed,
        ),
        snapshots=snapshots_tab(
            services, record, actor, applications, refusals, snapshot_name, snapshot_name_error
        ),
        replay=replay if applications.live.application is None else None,
        upgrades=job_upgrades(services, record, actor, applications),
        upgrade_check=upgrade_check,
        operations=api_operations(services.settings.resolved_public_url, name),
        refresh_seconds=REFRESH_SECONDS,
    )


def job_path(name: str) -> str:
    return f"/jobs/{quote(name, safe='')}"


def _resolved_template(request: Request, name: str, actor: Actor) -> dict[str, Any]:
    """The job as it runs (defaults, derived checkpoint, node type sizes); empty if the stored
    manifest no longer passes today's rules, when the page shows the manifest as stored."""
    try:
        template: dict[str, Any] = services_of(request).jobs.template(name, actor=actor)
    except StreamjobsError:
        return {}
    return template


def local_path(target: str, default: str) -> str:
    """``target`` if it is a path on this server, else ``default`` (no open redirects)."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target
