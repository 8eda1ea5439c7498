"""Which server answers and which runs the supervisor: ``GET /healthz`` (no sign-in needed) and
the footer of every page say it, for a server that leads, one that stands by and one that runs
no supervisor at all."""

from __future__ import annotations

import socket

import httpx
from fastapi.testclient import TestClient

from streamjobs.composition import server_over
from streamjobs.store.leases import SUPERVISOR_LEASE
from tests.staged_server import Stage
from tests.web.conftest import Browser
from tests.web.html import parse

SERVER = f"{socket.gethostname()}:8040"
"""The stage's server name: its host's name and the port its settings give."""
STAGE_URL = "http://127.0.0.1:1"
"""The stage's public URL."""


def test_healthz_says_this_server_leads_once_it_holds_the_lease(
    stage: Stage, anonymous_web: httpx.Client
) -> None:
    before = anonymous_web.get("/healthz").json()
    assert (before["status"], before["role"], before["server"], before["leader"]) == (
        "ok",
        "standby",
        SERVER,
        None,
    )
    assert before["version"]

    stage.tick()
    after = anonymous_web.get("/healthz").json()
    assert (after["role"], after["leader"]) == ("leader", {"name": SERVER, "url": STAGE_URL})


def test_the_footer_says_this_server_runs_the_supervisor(stage: Stage, browser: Browser) -> None:
    stage.tick()
    footer = parse(browser.page("/jobs")).one("footer")
    assert footer.text(".server-here") == f"server {SERVER}"
    assert footer.text(".server-leader") == "this server runs the supervisor"


def test_a_standby_says_who_leads(stage: Stage, browser: Browser) -> None:
    stage.tick()
    with stage.services.store.transaction() as repos:  # another server takes the lease over
        repos.leases.seize(SUPERVISOR_LEASE, "beta", "http://beta.example:8040", 60)
    assert stage.supervisor.run_once() == []

    health = browser.client.get("/healthz").json()
    assert (health["role"], health["leader"]) == (
        "standby",
        {"name": "beta", "url": "http://beta.example:8040"},
    )
    footer = parse(browser.page("/jobs")).one("footer")
    assert footer.text(".server-leader") == "the supervisor runs on beta (this server stands by)"


def test_a_server_without_a_supervisor_tells_who_runs_it(stage: Stage) -> None:
    stage.tick()
    without = server_over(stage.services, supervise=False)
    with TestClient(without.app) as client:
        health = client.get("/healthz").json()
        signin = client.get("/signin")
    assert (health["role"], health["server"], health["leader"]) == (
        "none",
        SERVER,
        {"name": SERVER, "url": STAGE_URL},
    )
    footer = parse(signin).one("footer")
    assert footer.text(".server-leader") == f"the supervisor runs on {SERVER}"


def test_with_no_leader_the_footer_says_so(anonymous_web: httpx.Client) -> None:
    footer = parse(anonymous_web.get("/signin")).one("footer")
    assert footer.text(".server-here") == f"server {SERVER}"
    assert (
        footer.text(".server-leader") == "no server runs the supervisor now (this server stands by)"
    )


def test_an_error_page_shows_the_server_without_asking_the_store(browser: Browser) -> None:
    page = browser.page("/jobs/no-such-job")
    assert page.status_code == 404
    footer = parse(page).one("footer")
    assert footer.text(".server-here") == f"server {SERVER}"
    assert not footer.has(".server-leader")
