"""The server's HTTP application: the REST API and the web UI in one ASGI app.

Put together here, above both, so that neither ``api`` nor ``web`` imports the other (an
import-linter contract holds it); what they share is in ``streamjobs.http``.
"""

from __future__ import annotations

from fastapi import FastAPI

from streamjobs.api.app import create_api
from streamjobs.api.metrics import ServerMetrics
from streamjobs.services.container import Services
from streamjobs.web.app import install_web


def create_app(*, services: Services, server_metrics: ServerMetrics | None = None) -> FastAPI:
    """The streamjobs server's ASGI application over the given services, its metrics going to
    ``server_metrics`` (default: a registry of its own)."""
    app = create_api(services=services, server_metrics=server_metrics)
    install_web(app)
    return app
