"""The job page's Upgrade dialog: Check compatibility (a dry run: nothing is stopped) and Upgrade
(the check again, then a graceful stop and the new spec started by the supervisor).

The check replays the checkpoint's last batch in a short Spark session, about half a minute, so
the dialog posts with htmx and shows that it is working; the answer is the report swapped into
the dialog, and a successful Upgrade sends the page to itself with a notice (``HX-Redirect``).
Without script both are plain form posts: the job's page comes back with the report above its
tabs (a refusal with status 409), or a redirect with the notice.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import Response

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Conflict, InvalidInput
from streamjobs.store.upgrades import UpgradeRecord
from streamjobs.web.notices import redirect_with_notices
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.routes.job_detail import detail_page, job_path
from streamjobs.web.upgrade_view import (
    CheckView,
    parsed_mode,
    refusal_view,
    report_view,
    rollback_seconds,
    unknown_mode,
)

router = APIRouter()

NO_UPGRADES = "this server does not upgrade running applications"


@router.post("/jobs/{name}/upgrade/check")
def check_upgrade(
    request: Request,
    name: str,
    mode: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """What an upgrade in ``mode`` would find, stopping nothing: the report."""
    chosen = parsed_mode(mode)
    upgrades = services_of(request).upgrades
    if chosen is None:
        view = unknown_mode(mode)
    elif upgrades is None:
        view = CheckView(mode=chosen.value, refusal=NO_UPGRADES)
    else:
        try:
            view = report_view(upgrades.check(name, mode=chosen, actor=actor), chosen.value)
        except (Conflict, InvalidInput) as refused:
            view = refusal_view(refused, chosen.value)
    return _answer(request, name, actor, view, status_code=409 if view.refusal else 200)


@router.post("/jobs/{name}/upgrade")
def upgrade_job(
    request: Request,
    name: str,
    mode: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Upgrade the job's running application in ``mode``: back to the job's page with a notice
    saying what happens now; a refusal (the new spec does not fit, nothing to upgrade) is the
    report, and nothing was stopped."""
    chosen = parsed_mode(mode)
    services = services_of(request)
    upgrades = services.upgrades
    if chosen is None:
        return _answer(request, name, actor, unknown_mode(mode, upgrading=True), status_code=422)
    if upgrades is None:
        view = CheckView(mode=chosen.value, refusal=NO_UPGRADES, upgrading=True)
        return _answer(request, name, actor, view, status_code=409)
    try:
        record = upgrades.upgrade(name, mode=chosen, actor=actor)
    except (Conflict, InvalidInput) as refused:
        view = refusal_view(refused, chosen.value, upgrading=True)
        return _answer(request, name, actor, view, status_code=409)
    window = rollback_seconds(services.jobs.get(name, actor=actor).manifest)
    return _redirect(request, job_path(name), [upgrade_notice(record, window)])


def upgrade_notice(record: UpgradeRecord, window: int) -> str:
    """What happens now that the upgrade was asked for, in words."""
    snapshot = f", taking snapshot {record.snapshot_name}" if record.snapshot_name else ""
    put_back = (
        "the previous spec and the snapshot taken at the stop are"
        if record.snapshot_name
        else "the previous spec is"
    )
    watch = f" It is watched for {window} s: if it fails, {put_back} put back." if window else ""
    return (
        f"Upgrade {record.id} to job version {record.to_job_version} ({record.mode}) asked for: "
        f"the running application stops after its micro-batch in flight{snapshot}, then the new "
        f"spec starts.{watch} The upgrade is listed under Upgrades below."
    )


def is_htmx(request: Request) -> bool:
    return request.headers.get("HX-Request") == "true"


def _answer(
    request: Request, name: str, actor: Actor, view: CheckView, *, status_code: int
) -> Response:
    """The report: swapped into the dialog (htmx swaps only answers of status 200), or the
    job's page with it above the tabs."""
    if is_htmx(request):
        return render(request, "upgrade_check.html", check=view)
    return detail_page(request, name, actor, upgrade_check=view, status_code=status_code)


def _redirect(request: Request, url: str, notices: list[str]) -> Response:
    """A redirect to ``url`` showing ``notices`` there: for htmx, which would follow a 303 in
    place, its ``HX-Redirect`` with the notices' cookie."""
    redirect = redirect_with_notices(request, url, notices)
    if not is_htmx(request):
        return redirect
    answer = Response(status_code=204, headers={"HX-Redirect": url})
    answer.raw_headers.extend(
        (key, value) for key, value in redirect.raw_headers if key == b"set-cookie"
    )
    return answer
