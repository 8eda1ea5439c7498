"""Upgrades in a real browser, over a real server whose drivers are fake and whose dry runs are
answered by a script (``tests.staged_upgrades``; the real dry run is covered by
``tests/spark/test_dry_run.py``): a job configured while it runs shows "Changed since running";
Upgrade opens a dialog whose Check compatibility shows that it is working, then the report in
place; an Upgrade the dry run refuses shows each reason and stops nothing; an accepted one
comes back with a notice and shows in the history, whose diff opens and stays open while htmx
refreshes the upgrade's status; and the Configure form checks what is typed without saving."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from streamjobs.domain.snapshots import SnapshotKind
from tests.browser.conftest import DEFAULT_TIMEOUT_MS, GUARD, RequestGuard, sign_in
from tests.browser.helpers import badge, unlabelled_controls
from tests.factories import changed, pipeline_manifest
from tests.staged_snapshots import run_until_running, stage_snapshot
from tests.staged_upgrades import FITS, KEY_CHANGED, UpgradeStage, upgrade_stage

pytestmark = [pytest.mark.browser, pytest.mark.snapshots]

JOB = "ticks"
FILTERED = "SELECT * FROM ticks WHERE value % 2 = 0"
REFRESH_WAIT_MS = 30_000
"""Long enough for the job page's refresh (every 5 s while an application is active)."""


@pytest.fixture
def stage(tmp_path: Path) -> Iterator[UpgradeStage]:
    with upgrade_stage(tmp_path) as staged:
        yield staged


@pytest.fixture
def stage_page(
    chromium: Browser, stage: UpgradeStage, request: pytest.FixtureRequest
) -> Iterator[Page]:
    """A page signed in as admin on the staged server, its requests guarded as the other
    browser tests' are."""
    context: BrowserContext = chromium.new_context(
        base_url=stage.url, viewport={"width": 1280, "height": 900}
    )
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    guard = RequestGuard(server_host=stage.url.removeprefix("http://"))
    guard.watch(context)
    request.node.stash[GUARD] = guard
    page = context.new_page()
    sign_in(page, "admin", stage.password)
    expect(page).to_have_url(f"{stage.url}/jobs")
    yield page
    context.close()


@pytest.mark.timeout(300)
def test_check_refuse_upgrade_and_see_the_history(
    stage_page: Page, stage: UpgradeStage, screenshot: Callable[[Page, str], Path]
) -> None:
    page = stage_page
    application_id = run_until_running(stage, JOB)
    stage.with_state(JOB)
    manifest = changed(pipeline_manifest(JOB), ("spec.pipeline.steps[0].sequence[0].sql", FILTERED))
    stage.api.put(f"/api/v1/jobs/{JOB}", json=manifest).raise_for_status()

    page.goto(f"/jobs/{JOB}")
    heading = page.locator("h1")
    expect(badge(heading, "Running")).to_be_visible()
    changed_badge = badge(heading, "Changed since running")
    expect(changed_badge).to_be_visible()
    expect(changed_badge).to_have_attribute("title", re.compile("runs job version 1"))

    page.get_by_role("button", name="Upgrade", exact=True).click()
    dialog = page.get_by_role("dialog", name=f"Upgrade {JOB}-1 to job version 2?")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("Last state")).to_be_checked()
    assert unlabelled_controls(page) == []
    expect(dialog.get_by_label("Snapshot")).to_have_accessible_description(
        re.compile("aligned snapshot")
    )
    gate = threading.Event()
    stage.dry_run.gate = gate
    dialog.get_by_role("button", name="Check compatibility").click()
    working = dialog.get_by_role("status").filter(has_text="about half a minute")
    expect(working).to_be_visible()
    expect(dialog.get_by_role("button", name="Upgrade", exact=True)).to_be_disabled()
    screenshot(page, "job-upgrade-checking")
    gate.set()
    expect(dialog.locator(".check-fits")).to_contain_text("Compatible.")
    expect(working).to_be_hidden()
    expect(dialog.locator(".check-queries")).to_have_text(
        re.compile("query evens: batch 2 replayed, it fits")
    )
    screenshot(page, "job-upgrade-check-compatible")

    stage.dry_run.answer = KEY_CHANGED
    dialog.get_by_label("Snapshot").check()
    dialog.get_by_role("button", name="Upgrade", exact=True).click()
    alert = dialog.get_by_role("alert")
    expect(alert).to_contain_text("Not upgraded")
    expect(alert).to_contain_text("nothing was stopped")
    reason = dialog.locator('.check-reasons li[data-path="spec.pipeline.outputs[0]"]')
    expect(reason).to_contain_text("operator 0 (an aggregation)")
    expect(page).to_have_url(f"{stage.url}/jobs/{JOB}")
    screenshot(page, "job-upgrade-refused")
    state = stage.api.get(f"/api/v1/applications/{application_id}").json()["state"]
    assert state == "RUNNING"

    stage.dry_run.answer = dict(FITS)
    dialog.get_by_role("button", name="Upgrade", exact=True).click()
    expect(page.locator("main p.notice")).to_contain_text("to job version 2 (snapshot) asked for")
    [upgrade] = stage.api.get(f"/api/v1/jobs/{JOB}/upgrades").json()["items"]
    history = page.locator(f'#upgrades article[data-upgrade="{upgrade["id"]}"]')
    expect(badge(history, "Stopping")).to_be_visible()
    expect(history.get_by_role("heading")).to_have_text(re.compile(r"Job version 1 → 2"))
    expect(badge(heading, "Changed since running")).to_be_visible()
    diff = history.locator("pre.diff")
    expect(diff).to_be_hidden()
    history.get_by_text("Diff of the specs").click()
    expect(diff.locator(".diff-added")).to_contain_text(FILTERED)
    expect(diff.locator(".diff-removed")).to_contain_text("SELECT * FROM ticks")
    screenshot(page, "job-upgrade-history")

    stage.tick()
    stage_snapshot(stage, upgrade["snapshot"], kind=SnapshotKind.UPGRADE, batch=2)
    stage.tick()
    expect(badge(history, "Starting")).to_be_visible(timeout=REFRESH_WAIT_MS)
    expect(diff).to_be_visible()
    expect(badge(heading, "Changed since running")).to_be_hidden()


@pytest.mark.timeout(300)
def test_the_configure_form_checks_what_is_typed_without_saving(
    stage_page: Page, stage: UpgradeStage, screenshot: Callable[[Page, str], Path]
) -> None:
    page = stage_page
    run_until_running(stage, JOB)
    stage.with_state(JOB)
    stage.dry_run.answer = KEY_CHANGED

    page.goto(f"/jobs/{JOB}/configure")
    page.get_by_label("Description").fill("Counted by id")
    page.get_by_role("button", name="Check compatibility").click()

    report = page.locator("#compatibility-report")
    expect(report.get_by_role("alert")).to_contain_text("Not compatible")
    expect(report.locator('li[data-path="spec.pipeline.outputs[0]"]')).to_contain_text(
        "state-key-schema"
    )
    expect(page).to_have_url(f"{stage.url}/jobs/{JOB}/configure")
    expect(page.get_by_label("Description")).to_have_value("Counted by id")
    screenshot(page, "job-form-check-compatibility")
    assert unlabelled_controls(page) == []
    saved = stage.api.get(f"/api/v1/jobs/{JOB}").json()
    assert saved["metadata"]["resourceVersion"] == "1"
