"""Ending a Spark application at a standalone master, for a cluster-mode driver lost with its
worker (``launch.cluster``).

The master ends an application when its driver disconnects; a driver whose host vanished never
does, so its application stays registered and its executors on other workers keep their cores.
The master's REST submission server only knows drivers; its web UI ends applications (the
"kill" link of its front page, ``POST /app/kill/`` with ``id`` and ``terminate=true``, when the
master runs with ``spark.ui.killEnabled``, the default). Since Spark 4.1 that request must carry
the CSRF token the UI puts in its kill forms, so the front page is read for it first.
"""

from __future__ import annotations

import re

import httpx

TIMEOUT = httpx.Timeout(5.0, connect=3.0)
_TOKEN_FIELD = re.compile(r'<input[^>]*\bname="csrfToken"[^>]*>')
_VALUE = re.compile(r'\bvalue="([^"]*)"')


def end_application(master_web_url: str, application_id: str) -> str | None:
    """Ask the master whose web UI is at ``master_web_url`` to end ``application_id`` (and its
    executors); None once asked, else why it could not be."""
    base = master_web_url.rstrip("/")
    try:
        page = httpx.get(f"{base}/", timeout=TIMEOUT, trust_env=False)
        field = _TOKEN_FIELD.search(page.text)
        token = _VALUE.search(field.group(0)) if field else None
        form = {"id": application_id, "terminate": "true"}
        if token is not None:
            form["csrfToken"] = token.group(1)
        answer = httpx.post(f"{base}/app/kill/", data=form, timeout=TIMEOUT, trust_env=False)
    except httpx.HTTPError as error:
        return f"the master's web UI at {base} did not answer ({type(error).__name__}: {error})"
    if answer.status_code >= 400:
        return (
            f"the master's web UI at {base} refused (HTTP {answer.status_code}); it ends "
            "applications only with spark.ui.killEnabled=true"
        )
    return None
