"""The job page's State tab: the stateful operators of the job's newest application (whose state
its checkpoint holds), with their figures, watermark and the batches their state covers, and a
preview of one operator's first keys and values.

The tab loads its content when it is first shown (htmx asks ``/jobs/{name}/state``), since
reading the checkpoint runs a short Spark job; a preview form swaps the content again with the
preview. Without script the same route answers a page of its own. When the checkpoint cannot be
read the tab still shows what the progress reports say, with the reason; a preview the
checkpoint cannot give says why beside the operators.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Conflict, InvalidInput
from streamjobs.domain.state_figures import QueryFigures, stateful
from streamjobs.domain.state_inspection import (
    DEFAULT_PREVIEW_ROWS,
    MAX_PREVIEW_ROWS,
    PreviewRequest,
    preview_request,
)
from streamjobs.services.state_view import StateOverview, StateUnreadable, StateView
from streamjobs.store import ApplicationRecord
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.routes.job_detail import job_path

router = APIRouter()


@dataclass(frozen=True)
class StateTab:
    """What the State tab shows."""

    job_name: str
    job_path: str
    application: ApplicationRecord | None
    overview: StateOverview | None = None
    problem: str | None = None
    """Why the checkpoint was not read (the figures then come from the reports alone)."""
    asked: PreviewRequest | None = None
    preview_problem: str | None = None
    default_limit: int = DEFAULT_PREVIEW_ROWS
    max_limit: int = MAX_PREVIEW_ROWS

    @property
    def queries(self) -> list[QueryFigures]:
        return stateful(self.overview.queries) if self.overview else []


@router.get("/jobs/{name}/state")
def job_state(
    request: Request,
    name: str,
    operator: str = "",
    query: str = "",
    store: str = "",
    limit: str = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """The State tab's content for htmx, or a page of its own without script."""
    services = services_of(request)
    tab = state_tab(
        services.state_view,
        name,
        actor,
        operator=operator,
        query=query,
        store=store,
        limit=limit,
    )
    if request.headers.get("HX-Request") == "true":
        return render(request, "job_state.html", state=tab)
    return render(request, "job_state_page.html", nav="jobs", state=tab)


def state_tab(
    view: StateView | None,
    name: str,
    actor: Actor,
    *,
    operator: str = "",
    query: str = "",
    store: str = "",
    limit: str = "",
) -> StateTab:
    """The tab for ``name``'s newest application, with the preview the form asked for."""
    path = job_path(name)
    if view is None:
        return StateTab(name, path, None, problem="this server cannot read jobs' state")
    application = view.shown_application(name, actor=actor)
    if application is None:
        return StateTab(name, path, None)
    try:
        asked = preview_request(
            operator=operator or None,
            query=query or None,
            store_name=store or None,
            limit=limit or None,
        )
    except InvalidInput as invalid:
        overview, problem = _overview(view, application, actor, None)
        return StateTab(name, path, application, overview, problem, preview_problem=invalid.detail)
    overview, problem = _overview(view, application, actor, asked)
    if problem is None or asked is None:
        return StateTab(name, path, application, overview, problem, asked)
    overview, problem_without = _overview(view, application, actor, None)
    return StateTab(name, path, application, overview, problem_without, asked, problem)


def _overview(
    view: StateView, application: ApplicationRecord, actor: Actor, asked: PreviewRequest | None
) -> tuple[StateOverview | None, str | None]:
    """The overview read from the checkpoint, or the reports' figures and why it was not."""
    try:
        return view.describe(application.id, actor=actor, preview=asked), None
    except StateUnreadable as unreadable:
        return view.figures(application.id, actor=actor), unreadable.detail
    except Conflict as refused:
        return None, refused.detail
