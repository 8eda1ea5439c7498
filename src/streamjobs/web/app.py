"""Puts the web UI into the server's application: its pages, its static files, its sessions."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from streamjobs.services.container import Services
from streamjobs.web.pages import render_error
from streamjobs.web.routes import (
    applications,
    audit,
    auth,
    bundles,
    job_detail,
    job_form,
    jobs,
    node_types,
    people,
    pipeline_check,
    secrets,
    tokens,
)
from streamjobs.web.sessions import SessionCodec, load_or_create_key

STATIC = Path(__file__).parent / "static"


def install_web(app: FastAPI, services: Services) -> None:
    """Serve the web UI at ``/`` beside the API."""
    app.state.sessions = SessionCodec(load_or_create_key(services.settings.session_key_file))
    app.state.page_renderer = render_error
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for module in (
        auth,
        jobs,
        pipeline_check,
        job_form,
        job_detail,
        applications,
        tokens,
        secrets,
        people,
        bundles,
        node_types,
        audit,
    ):
        app.include_router(module.router, include_in_schema=False)
