"""Puts the web UI into the server's application: its pages and its static files. Every page
route but sign-in is guarded by the one CSRF check (``http.sessions.require_csrf``)."""

from __future__ import annotations

from pathlib import Path

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles

from streamjobs.http.sessions import require_csrf
from streamjobs.web.pages import render_error
from streamjobs.web.routes import (
    applications,
    audit,
    auth,
    bundles,
    connections,
    job_detail,
    job_form,
    jobs,
    node_types,
    notifications,
    people,
    pipeline_check,
    secrets,
    snapshots,
    spark_ui_proxy,
    state,
    tokens,
    upgrades,
    user_sessions,
)

STATIC = Path(__file__).parent / "static"


def install_web(app: FastAPI) -> None:
    """Serve the web UI at ``/`` beside the API."""
    app.state.page_renderer = render_error
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(auth.signin_router, include_in_schema=False)
    for module in (
        auth,
        jobs,
        pipeline_check,
        job_form,
        job_detail,
        snapshots,
        upgrades,
        state,
        applications,
        connections,
        spark_ui_proxy,
        tokens,
        secrets,
        people,
        user_sessions,
        bundles,
        node_types,
        notifications,
        audit,
    ):
        app.include_router(
            module.router, include_in_schema=False, dependencies=[Depends(require_csrf)]
        )
