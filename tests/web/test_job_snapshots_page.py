"""The Snapshots tab of a job's page, Suspend beside Stop and Run from a snapshot, over HTTP
against a real server (fake drivers, the supervisor ticked by the test): the tab lists what the
store holds, newest first; each button is there or refused by permission and state; Take,
Delete, Suspend and Run from post through the page's forms and come back with a notice; a
refusal is the page again with its reason, a start its outputs went past offered again
allowing replay."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

from streamjobs.domain.access import Permission
from streamjobs.domain.snapshots import SnapshotKind, automatic_name
from streamjobs.web.snapshot_view import SUSPEND_REFUSALS, TAKE_REFUSALS, TAKING_DELETE_REFUSAL
from tests.factories import python_manifest
from tests.staged_server import Stage
from tests.staged_snapshots import (
    OUTPUT,
    job,
    output_directory,
    run_until_running,
    stage_snapshot,
)
from tests.web.access_helpers import add_user, signed_in
from tests.web.conftest import Browser
from tests.web.html import Node, parse
from tests.web.test_job_live_parts import swapped

__all__ = ["job"]

pytestmark = pytest.mark.snapshots


def tab_of(browser: Browser, job: str) -> Node:
    page = browser.page(f"/jobs/{job}?tab=snapshots")
    assert page.status_code == 200, page.text
    return parse(page)


def row(document: Node, name: str) -> Node:
    return document.one(f'#snapshot-rows tr[data-snapshot="{name}"]')


def refused(document: Node, selector: str) -> str:
    """The reason a disabled button gives, checked to be its accessible text too."""
    button = document.one(selector)
    assert button.has_attr("disabled")
    reason = button.attr("title") or ""
    assert document.text(f"#{button.attr('aria-describedby')}") == reason
    return reason


def take(browser: Browser, job: str, name: str) -> None:
    """Take snapshot through the tab's form; back to the tab, saying it was asked for."""
    answer = browser.submit(f"/jobs/{job}/snapshots", {"name": name})
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"/jobs/{job}?tab=snapshots"


def ready(browser: Browser, job: str, name: str, *, batch: int = 1) -> None:
    """A snapshot asked for on the page, staged as the runner would and collected READY."""
    take(browser, job, name)
    browser.stage.tick()
    stage_snapshot(browser.stage, name, batch=batch)
    browser.stage.tick()
    assert row(tab_of(browser, job), name).attr("data-status") == "READY"


def stopped(browser: Browser, job: str) -> None:
    assert browser.stage.api.post(f"/api/v1/jobs/{job}/stop").status_code == 202
    browser.stage.tick()
    browser.stage.tick()


def state_of(browser: Browser, application_id: str) -> str:
    state: str = browser.stage.api.get(f"/api/v1/applications/{application_id}").json()["state"]
    return state


def test_the_tab_lists_each_snapshot_newest_first(browser: Browser, job: str) -> None:
    page = parse(browser.page(f"/jobs/{job}"))
    assert page.attr("href", "#tab-snapshots") == f"/jobs/{job}?tab=snapshots"
    assert page.one("#panel-snapshots").has_attr("hidden")
    empty = tab_of(browser, job)
    assert not empty.one("#panel-snapshots").has_attr("hidden")
    assert empty.attr("aria-selected", "#tab-snapshots") == "true"
    assert empty.text("#snapshot-rows tr.empty") == "No snapshots yet."
    application_id = run_until_running(browser.stage, job)

    take(browser, job, "before-deploy")
    taking = tab_of(browser, job)
    assert taking.text(".notice[role=status]").startswith("Snapshot before-deploy asked for")
    assert taking.text('[data-cell="status"] .badge') == "Taking"
    assert refused(taking, "#delete-snapshot-refused-1") == TAKING_DELETE_REFUSAL
    assert not taking.has("[data-start-from]")
    browser.stage.tick()
    stage_snapshot(browser.stage, "before-deploy", batch=3)
    browser.stage.tick()
    browser.stage.services.clock.advance(60)
    take(browser, job, "doomed")
    browser.stage.tick()
    stage_snapshot(browser.stage, "doomed", error="the checkpoint could not be copied: disk full")
    browser.stage.tick()

    listed = tab_of(browser, job)
    names = [node.attr("data-snapshot") for node in listed.all("#snapshot-rows tr[data-snapshot]")]
    assert names == ["doomed", "before-deploy"]
    kept = row(listed, "before-deploy")
    assert kept.text('[data-cell="kind"]') == "manual"
    assert kept.text('[data-cell="status"] .badge') == "Ready"
    assert kept.attr("href", '[data-cell="application"] a') == f"/applications/{application_id}"
    assert kept.text('[data-cell="application"]') == f"{job}-1"
    assert kept.text('[data-cell="batches"]') == "batch 3"
    assert kept.text('[data-cell="positions"]') == f"{OUTPUT}: parquet sink log batch 3"
    assert kept.text('[data-cell="size"]').endswith("B")
    assert (kept.attr("datetime", '[data-cell="taken-at"] time') or "").startswith("2026-01-01")
    assert kept.text('[data-cell="name"]') == "before-deploy by admin"
    failed = row(listed, "doomed")
    assert failed.text('[data-cell="status"] .badge') == "Failed"
    assert "disk full" in failed.text('[data-cell="error"]')
    assert failed.text('[data-cell="batches"]') == ""

    live = swapped(browser.page(f"/jobs/{job}/live"))
    for selector in ("#snapshot-rows", "#snapshot-actions"):
        assert live.attr("hx-swap-oob", selector) == "true", selector
    assert live.has('#snapshot-rows tr[data-snapshot="doomed"]')


def test_take_snapshot_asks_for_an_optional_name_and_says_why_it_is_refused(
    browser: Browser, job: str
) -> None:
    idle = tab_of(browser, job)
    assert refused(idle, "#take-snapshot-refused") == TAKE_REFUSALS["not-running"]
    assert not idle.has("#take-snapshot-dialog")
    anyway = browser.submit(f"/jobs/{job}/snapshots", {"name": "now"})
    assert anyway.status_code == 409
    assert "running" in parse(anyway).text(".notice-error[role=alert]")
    assert parse(anyway).attr("aria-selected", "#tab-snapshots") == "true"

    run_until_running(browser.stage, job)
    running = tab_of(browser, job)
    assert running.attr("data-open-dialog", "#take-snapshot-button") == "take-snapshot-dialog"
    dialog = running.one("#take-snapshot-dialog")
    assert dialog.attr("action", "form") == f"/jobs/{job}/snapshots"
    assert dialog.attr("value", 'input[name="csrf"]') == browser.csrf
    assert dialog.attr("maxlength", 'input[name="name"]') == "128"
    assert running.has(f'noscript form[action="/jobs/{job}/snapshots"]')
    assert browser.client.post(f"/jobs/{job}/snapshots", data={"csrf": "forged"}).status_code == 403

    bad = browser.submit(f"/jobs/{job}/snapshots", {"name": "no spaces"})
    assert bad.status_code == 422
    again = parse(bad)
    assert again.attr("value", "#take-again-name") == "no spaces"
    assert again.attr("aria-invalid", "#take-again-name") == "true"
    assert again.text("#take-again-name-error")
    assert not again.has("#snapshot-rows tr[data-snapshot]")

    take(browser, job, "once")
    twice = browser.submit(f"/jobs/{job}/snapshots", {"name": "once"})
    assert twice.status_code == 409
    assert "once" in parse(twice).text(".notice-error[role=alert]")

    take(browser, job, "")
    unnamed = automatic_name(SnapshotKind.MANUAL, browser.stage.services.clock.now())
    assert row(tab_of(browser, job), unnamed).text('[data-cell="kind"]') == "manual"


def test_a_program_job_has_no_snapshots(browser: Browser) -> None:
    browser.stage.api.put("/api/v1/jobs/prog", json=python_manifest("prog")).raise_for_status()
    page = tab_of(browser, "prog")
    assert "pipeline jobs only" in page.text("#snapshots-pipelines-only")
    assert refused(page, "#take-snapshot-refused") == TAKE_REFUSALS["not-pipeline"]


def test_delete_asks_first_and_comes_back_with_a_notice(browser: Browser, job: str) -> None:
    run_until_running(browser.stage, job)
    ready(browser, job, "old")
    page = tab_of(browser, job)
    delete = row(page, "old").one('button[aria-label="Delete snapshot old"]')
    assert delete.attr("data-open-dialog") == "delete-snapshot-1"
    dialog = page.one("#delete-snapshot-1")
    assert dialog.text("h2") == "Delete snapshot old?"
    assert dialog.attr("action", "form") == f"/jobs/{job}/snapshots/old/delete"
    assert dialog.text('button[type="submit"]') == "Yes, delete it"
    assert page.has(f'noscript form[action="/jobs/{job}/snapshots/old/delete"]')
    forged = browser.client.post(f"/jobs/{job}/snapshots/old/delete", data={"csrf": "forged"})
    assert forged.status_code == 403

    deleted = browser.submit(f"/jobs/{job}/snapshots/old/delete", {})
    assert deleted.status_code == 303
    assert deleted.headers["location"] == f"/jobs/{job}?tab=snapshots"
    after = tab_of(browser, job)
    assert after.text(".notice[role=status]") == "Snapshot old deleted."
    assert not after.has("#snapshot-rows tr[data-snapshot]")

    gone = browser.submit(f"/jobs/{job}/snapshots/old/delete", {})
    assert gone.status_code == 404
    assert "old" in parse(gone).text(".notice-error[role=alert]")


def test_each_button_follows_the_permissions(stage: Stage, browser: Browser, job: str) -> None:
    run_until_running(stage, job)
    ready(browser, job, "kept")
    add_user(stage, "viewer", bundle="default", permissions=[Permission.VIEW])
    add_user(stage, "runner", bundle="default", permissions=[Permission.RUN])
    add_user(stage, "editor", bundle="default", permissions=[Permission.UPDATE])
    needs_run = "Needs the RUN permission on resource bundle 'default'"
    needs_update = "Needs the UPDATE permission on resource bundle 'default'"

    viewer = signed_in(stage, "viewer")
    with closing(viewer.client):
        page = tab_of(viewer, job)
        assert refused(page, "#take-snapshot-refused") == needs_run
        assert refused(page, "#suspend-refused") == needs_run
        assert refused(page, "#start-refused-1") == needs_run
        assert refused(page, "#delete-snapshot-refused-1") == needs_update
        assert not page.has("#run-from-dialog, #suspend-dialog, #delete-snapshot-1")
        assert viewer.submit(f"/jobs/{job}/snapshots", {"name": "mine"}).status_code == 403
        assert viewer.submit(f"/jobs/{job}/suspend", {}).status_code == 403

    runner = signed_in(stage, "runner")
    with closing(runner.client):
        page = tab_of(runner, job)
        for enabled in ("#take-snapshot-button", "#suspend-button", "#run-from-dialog"):
            assert page.has(enabled), enabled
        assert row(page, "kept").attr("data-start-from", "[data-start-from]") == "kept"
        assert refused(page, "#delete-snapshot-refused-1") == needs_update
        assert runner.submit(f"/jobs/{job}/snapshots/kept/delete", {}).status_code == 403

    editor = signed_in(stage, "editor")
    with closing(editor.client):
        page = tab_of(editor, job)
        assert refused(page, "#take-snapshot-refused") == needs_run
        assert page.has("#delete-snapshot-1")


def test_suspend_asks_first_then_the_application_waits_suspended(
    browser: Browser, job: str
) -> None:
    assert refused(tab_of(browser, job), "#suspend-refused") == SUSPEND_REFUSALS["none"]
    application_id = run_until_running(browser.stage, job)
    page = parse(browser.page(f"/jobs/{job}"))
    assert page.attr("data-open-dialog", "#suspend-button") == "suspend-dialog"
    dialog = page.one("#suspend-dialog")
    assert dialog.text("h2") == f"Suspend {job}-1?"
    assert dialog.attr("action", "form") == f"/jobs/{job}/suspend"
    assert "snapshot of its checkpoint" in dialog.text("#suspend-text")
    assert dialog.text('button[type="submit"]') == "Yes, suspend it"
    assert page.has(f'noscript form[action="/jobs/{job}/suspend"]')

    suspending = browser.submit(f"/jobs/{job}/suspend", {"next": f"/jobs/{job}"})
    assert suspending.status_code == 303
    assert suspending.headers["location"] == f"/jobs/{job}"
    assert state_of(browser, application_id) == "TERMINATING"
    assert refused(tab_of(browser, job), "#suspend-refused") == SUSPEND_REFUSALS["stopping"]
    browser.stage.tick()
    aligned = browser.stage.launcher.drivers[-1].stop_snapshot
    assert aligned is not None
    stage_snapshot(browser.stage, aligned.name, kind=SnapshotKind.SUSPEND)
    browser.stage.tick()
    assert state_of(browser, application_id) == "SUSPENDED"

    waiting = tab_of(browser, job)
    assert refused(waiting, "#suspend-refused") == SUSPEND_REFUSALS["suspended"]
    assert waiting.has("#resume-button")
    assert row(waiting, aligned.name).text('[data-cell="kind"]') == "suspend"
    again = browser.submit(f"/jobs/{job}/suspend", {})
    assert again.status_code == 409
    assert parse(again).text(".notice-error[role=alert]")


def test_run_offers_where_to_start_from(browser: Browser, job: str) -> None:
    assert not tab_of(browser, job).has("#run-from-button")
    run_until_running(browser.stage, job)
    ready(browser, job, "good", batch=2)
    stopped(browser, job)
    page = tab_of(browser, job)
    assert page.text("#run-button") == "Run"
    assert page.attr("data-open-dialog", "#run-from-button") == "run-from-dialog"
    dialog = page.one("#run-from-dialog")
    assert dialog.attr("action", "form") == f"/jobs/{job}/run"
    choices = dialog.all('select[name="from_snapshot"] option')
    assert [choice.attr("value") for choice in choices][:2] == ["", "good"]
    assert choices[0].text() == "the checkpoint as it is"
    assert choices[1].text().startswith("snapshot good (manual, 2026-01-01")
    assert dialog.attr("type", 'input[name="allow_replay"]') == "checkbox"
    ids = [node.attr("id") for node in page.all("[id]")]
    assert len(ids) == len(set(ids)), "every id once, the forms without script included"
    start = row(page, "good").one("[data-start-from]")
    assert start.attr("data-open-dialog") == "run-from-dialog"
    assert start.attr("aria-label") == "Start from it: snapshot good"

    started = browser.submit(f"/jobs/{job}/run", {"from_snapshot": "good"})
    assert started.status_code == 303, started.text
    assert started.headers["location"] == f"/jobs/{job}"
    notice = parse(browser.page(f"/jobs/{job}")).text(".notice[role=status]")
    assert notice.startswith(f"{job}-2 starts from snapshot good.")
    application_id = browser.stage.api.get(f"/api/v1/jobs/{job}/applications").json()["items"][0]
    events = browser.stage.api.get(f"/api/v1/applications/{application_id['id']}/events").json()
    assert "started-from-snapshot" in [event["kind"] for event in events["items"]]


def test_a_start_its_outputs_went_past_is_offered_again_allowing_replay(
    browser: Browser, job: str
) -> None:
    run_until_running(browser.stage, job)
    ready(browser, job, "old", batch=1)
    stopped(browser, job)
    _output_at_batch(output_directory(job), 7)

    refused_start = browser.submit(f"/jobs/{job}/run", {"from_snapshot": "old"})

    assert refused_start.status_code == 409
    page = parse(refused_start)
    alert = page.text(".notice-error[role=alert]")
    assert OUTPUT in alert
    assert "batch 7" in alert
    offer = page.one("form.replay-offer")
    assert offer.attr("action") == f"/jobs/{job}/run"
    assert offer.attr("value", 'input[name="from_snapshot"]') == "old"
    assert offer.one('input[name="allow_replay"]').has_attr("required")
    assert offer.text('button[type="submit"]') == "Run from old, allowing replay"

    missing = browser.submit(f"/jobs/{job}/run", {"from_snapshot": "nope"})
    assert missing.status_code == 404
    assert "nope" in parse(missing).text(".notice-error[role=alert]")
    assert not parse(missing).has("form.replay-offer")

    replayed = browser.submit(f"/jobs/{job}/run", {"from_snapshot": "old", "allow_replay": "true"})
    assert replayed.status_code == 303, replayed.text
    assert browser.stage.api.get(f"/api/v1/jobs/{job}/applications").json()["total"] == 2


def _output_at_batch(directory: Path, batch: int) -> None:
    """Make the parquet output's sink log say it committed batches up to ``batch``."""
    log = directory / "_spark_metadata"
    log.mkdir(parents=True, exist_ok=True)
    for number in range(batch + 1):
        (log / str(number)).write_text('v1\n{"path":"part-0.parquet"}\n')
