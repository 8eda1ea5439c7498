"""The job page's snapshot actions: Take snapshot and Delete on the Snapshots tab, and Suspend
beside Stop (a graceful stop with an aligned snapshot). Run from a snapshot is Run's
(``web.routes.job_detail``).

As every action of the job's page, each is a form post answered with a redirect back to the
page, with what happened in a notice; a refusal is the page again with its reason in an alert
(a bad name: the form again, the name as typed, the reason at the field)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Conflict, InvalidInput, NotFound
from streamjobs.web.notices import redirect_with_notices
from streamjobs.web.pages import page_actor, services_of
from streamjobs.web.routes.job_detail import detail_page, job_path, local_path

router = APIRouter()

SNAPSHOTS_TAB = "snapshots"


@router.post("/jobs/{name}/snapshots")
def take_snapshot(
    request: Request,
    name: str,
    snapshot: Annotated[str, Form(alias="name")] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Ask the running application for a snapshot (named ``snapshot``, or after the time when
    empty); back to the Snapshots tab, where it shows as being taken until the driver hands it
    over."""
    typed = snapshot.strip()
    try:
        taken = services_of(request).snapshots.take(name, name=typed or None, actor=actor)
    except InvalidInput as invalid:
        reason = "; ".join(error.message for error in invalid.errors) or invalid.detail
        return detail_page(
            request,
            name,
            actor,
            tab=SNAPSHOTS_TAB,
            snapshot_name=typed,
            snapshot_name_error=reason,
            status_code=422,
        )
    except Conflict as refused:
        return detail_page(
            request,
            name,
            actor,
            tab=SNAPSHOTS_TAB,
            error=refused.detail,
            snapshot_name=typed,
            status_code=409,
        )
    notice = (
        f"Snapshot {taken.name} asked for: the running application takes it after its "
        "micro-batch in flight."
    )
    return redirect_with_notices(request, _tab_path(name), [notice])


@router.post("/jobs/{name}/snapshots/{snapshot}/delete")
def delete_snapshot(
    request: Request,
    name: str,
    snapshot: str,
    actor: Actor = Depends(page_actor),
) -> Response:
    """Delete a snapshot (after the page's confirmation); back to the Snapshots tab. One being
    taken, or one someone else deleted first, is refused on the tab."""
    try:
        services_of(request).snapshots.delete(name, snapshot, actor=actor)
    except (Conflict, NotFound) as refused:
        status = 409 if isinstance(refused, Conflict) else 404
        return detail_page(
            request, name, actor, tab=SNAPSHOTS_TAB, error=refused.detail, status_code=status
        )
    return redirect_with_notices(request, _tab_path(name), [f"Snapshot {snapshot} deleted."])


@router.post("/jobs/{name}/suspend")
def suspend_job(
    request: Request,
    name: str,
    next: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Suspend the job's live application (after the page's confirmation): it stops after its
    micro-batch in flight with an aligned snapshot and waits for Resume; back to ``next`` (a
    local path) or the job's page. A refusal (someone acted first) is the page with its
    reason, 409."""
    try:
        services_of(request).applications.suspend(name, actor=actor)
    except Conflict as refused:
        return detail_page(request, name, actor, error=refused.detail, status_code=409)
    return RedirectResponse(local_path(next, job_path(name)), status_code=303)


def _tab_path(name: str) -> str:
    return f"{job_path(name)}?tab={SNAPSHOTS_TAB}"
