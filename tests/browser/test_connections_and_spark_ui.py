"""The Connections page and the Spark UI link in a real browser.

Connections: reached from the navigation, created as YAML (a wrong field first, shown at its
line), its Delete refused while a job uses it, then deleted through its confirmation.
Spark UI: a real spark-submit driver's UI, reached from the application page through the
server's proxy: Spark's own pages and its script-driven Executors tab work under the prefix,
and nothing is fetched from the driver's port directly (the request guard would fail the test);
a notice its pages plant as a cookie is not shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import yaml
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import Server
from tests.browser.helpers import (
    SPARK_WAIT_MS,
    application_state,
    badge,
    manifest,
    wait_for,
)

pytestmark = pytest.mark.browser

CONNECTION = "browser-kafka"
USER_JOB = "browser-kafka-reader"
SPARK_JOB = "browser-spark-ui"
SANDBOX_PROBE = """async (prefix) => {
  const status = async (url) => {
    try { return (await fetch(url)).status; } catch (refused) { return "blocked"; }
  };
  return {
    prefix: await status(prefix + "/api/v1/applications"),
    api: await status("/api/v1/jobs"),
    page: await status("/settings/tokens"),
    popup: window.open("/jobs") === null ? "blocked" : "opened",
  };
}"""
PLANT_NOTICE = """() => {
  const notices = encodeURIComponent(JSON.stringify(["Sign in again at https://evil.example/"]));
  document.cookie = "streamjobs-notices=" + notices + "; path=/";
}"""


def connection_yaml(bootstrap_servers: str) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "streamjobs.io/v1",
            "kind": "Connection",
            "metadata": {"name": CONNECTION, "description": "made by the browser tests"},
            "spec": {"type": "kafka", "bootstrapServers": bootstrap_servers},
        },
        sort_keys=False,
    )


def reader_job(work: Path) -> dict[str, object]:
    """A job whose input is a topic of the connection (created, never run)."""
    job = manifest(USER_JOB, work)
    pipeline = job["spec"]["pipeline"]
    pipeline["inputs"] = [
        {
            "name": "ticks",
            "dataset": f"{CONNECTION}:orders",
            "format": "kafkajson",
            "schema": "timestamp TIMESTAMP, value BIGINT",
        }
    ]
    return job


def test_connections_create_refuse_delete(
    page: Page, server: Server, server_api: httpx.Client, screenshot: Callable[[Page, str], Path]
) -> None:
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Connections").click()
    expect(page).to_have_url(f"{server.url}/connections")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Connections")

    # Create as YAML: a wrong address is refused at its line, what was typed kept.
    page.get_by_role("link", name="New connection").click()
    expect(page).to_have_url(f"{server.url}/connections/new")
    editor = page.get_by_label("Manifest (YAML)")
    expect(editor).to_have_value(re.compile("kind: Connection"))
    screenshot(page, "connection-new")
    editor.fill(connection_yaml("not an address"))
    page.get_by_role("button", name="Create").click()
    errors = page.locator("#manifest-error")
    expect(errors).to_contain_text("spec.bootstrapServers")
    line = connection_yaml("x").splitlines().index("  bootstrapServers: x") + 1
    expect(errors.get_by_role("link", name=f"Line {line}")).to_be_visible()
    expect(page.get_by_label("Manifest (YAML)")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Manifest (YAML)")).to_have_value(re.compile("not an address"))
    screenshot(page, "connection-new-error")
    assert server_api.get(f"/api/v1/connections/{CONNECTION}").status_code == 404

    page.get_by_label("Manifest (YAML)").fill(connection_yaml("127.0.0.1:9092"))
    page.get_by_role("button", name="Create").click()
    expect(page).to_have_url(re.compile(rf"/connections/{CONNECTION}\?done=created$"))
    expect(page.get_by_role("status")).to_contain_text(f"Connection “{CONNECTION}” created.")
    expect(page.locator("[data-fact=where]")).to_have_text("127.0.0.1:9092")

    # A job uses it: the list names the job, and Delete is refused, saying why.
    created = server_api.post("/api/v1/jobs", json=reader_job(server.work / USER_JOB))
    assert created.status_code == 201, created.text
    page.goto("/connections")
    row = page.locator(f"tr[data-connection='{CONNECTION}']")
    expect(row.get_by_role("link", name=USER_JOB)).to_be_visible()
    screenshot(page, "connections")
    row.get_by_role("link", name=CONNECTION, exact=True).click()
    delete = page.locator("#delete-connection-refused")
    expect(delete).to_be_disabled()
    expect(delete).to_have_attribute("title", re.compile(rf"1 job: '{USER_JOB}'"))
    screenshot(page, "connection-delete-refused")

    # Once the job is gone, Delete asks first, then deletes.
    assert server_api.delete(f"/api/v1/jobs/{USER_JOB}").status_code in {202, 204}
    page.reload()
    page.get_by_role("button", name=f"Delete {CONNECTION}").click()
    confirm = page.get_by_role("button", name="Yes, delete it")
    expect(confirm).to_be_visible()
    confirm.click()
    expect(page).to_have_url(re.compile(r"/connections\?done=deleted"))
    expect(page.get_by_role("status")).to_contain_text(f"Connection “{CONNECTION}” deleted.")
    assert server_api.get(f"/api/v1/connections/{CONNECTION}").status_code == 404


@pytest.mark.spark
@pytest.mark.timeout(600)
def test_the_spark_ui_through_the_server(
    page: Page,
    context: BrowserContext,
    server: Server,
    server_api: httpx.Client,
    screenshot: Callable[[Page, str], Path],
) -> None:
    created = server_api.post("/api/v1/jobs", json=manifest(SPARK_JOB, server.work / SPARK_JOB))
    assert created.status_code == 201, created.text
    run = server_api.post(f"/api/v1/jobs/{SPARK_JOB}/run")
    assert run.status_code == 201, run.text
    application_id = run.json()["id"]
    prefix = f"/applications/{application_id}/spark-ui"
    try:
        wait_for(
            "the application to run",
            lambda: application_state(server_api, application_id) == "RUNNING",
        )
        # The driver's UI answers once its Spark session is up.
        page.goto(f"/applications/{application_id}")
        expect(badge(page, "Running")).to_be_visible(timeout=SPARK_WAIT_MS)
        link = page.get_by_role("link", name="Spark UI")
        expect(link).to_have_attribute("href", f"{prefix}/")
        expect(link).to_have_attribute("rel", re.compile("noopener"))
        with context.expect_page() as opened:
            link.click()
        spark = opened.value
        spark.wait_for_load_state()
        expect(spark).to_have_url(re.compile(rf"{re.escape(server.url + prefix)}/jobs/?$"))
        navigation = spark.locator("nav, .navbar").first
        expect(navigation.get_by_role("link", name="Executors")).to_have_attribute(
            "href", re.compile(rf"^{re.escape(prefix)}/executors/?$")
        )
        screenshot(spark, "spark-ui-jobs")

        # Executors is drawn by Spark's script from its REST API, fetched through the proxy.
        navigation.get_by_role("link", name="Executors").click()
        expect(spark).to_have_url(re.compile(rf"{re.escape(prefix)}/executors/?$"))
        expect(spark.locator("#active-executors-table")).to_contain_text(
            "driver", timeout=SPARK_WAIT_MS
        )
        expect(spark.get_by_text("Loading Executors Page...")).to_be_hidden()
        screenshot(spark, "spark-ui-executors")
        navigation.get_by_role("link", name="Structured Streaming").click()
        expect(spark).to_have_url(re.compile(rf"{re.escape(prefix)}/StreamingQuery/?$"))
        expect(spark.get_by_role("heading", name="Streaming Query")).to_be_visible()

        # The driver's pages are sandboxed: their scripts reach the driver's UI, nothing else
        # of the server, and open no window.
        reached = spark.evaluate(SANDBOX_PROBE, prefix)
        assert reached == {"prefix": 200, "api": "blocked", "page": "blocked", "popup": "blocked"}
        # They can write this origin's cookies (the sandbox keeps its origin, or the session
        # would not reach the proxy), but a notice they plant is not shown as the server's.
        spark.evaluate(PLANT_NOTICE)
        assert "streamjobs-notices" in {cookie["name"] for cookie in context.cookies()}
        spark.close()

        # The job page's applications table links it too.
        page.goto(f"/jobs/{SPARK_JOB}")
        expect(page.get_by_text("evil.example")).to_have_count(0)
        table_link = page.locator(f"#app-row-{application_id}").get_by_role("link", name="Spark UI")
        expect(table_link).to_have_attribute("href", f"{prefix}/")

        # Signed out, the proxy sends to Sign in and never reaches the driver.
        with httpx.Client(base_url=server.url) as anonymous:
            signed_out = anonymous.get(f"{prefix}/jobs/")
            assert signed_out.status_code == 303
            assert signed_out.headers["location"].startswith("/signin")
    finally:
        server_api.post(f"/api/v1/applications/{application_id}/abort")
        wait_for("the abort", lambda: application_state(server_api, application_id) == "ABORTED")

    # Ended, the application has no Spark UI any more.
    assert page.request.get(f"{prefix}/jobs/", max_redirects=0).status == 404
    page.goto(f"/applications/{application_id}")
    expect(page.get_by_role("link", name="Spark UI")).to_have_count(0)
