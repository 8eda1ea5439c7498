"""Upgrades on a job's page, over HTTP against a real server (fake drivers, the supervisor ticked
by the test, the dry run answered by a script): the "changed since running" badge, Upgrade there
or refused by permission and state, Check compatibility and Upgrade through htmx and without
script, refusals shown with each reason and nothing stopped, an upgrade back on the page with a
notice and in the history with the diff of its two specs, and Check compatibility on the
Configure form, which saves nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamjobs.domain.access import Permission
from streamjobs.domain.snapshots import SnapshotKind
from streamjobs.web.upgrade_view import UPGRADE_REFUSALS
from tests.factories import changed, pipeline_manifest
from tests.staged_snapshots import run_until_running, stage_snapshot
from tests.staged_upgrades import KEY_CHANGED, UpgradeStage, upgrade_stage
from tests.web.access_helpers import add_user, signed_in
from tests.web.conftest import Browser
from tests.web.html import Node, parse
from tests.web.test_job_form import form_of
from tests.web.test_job_live_parts import swapped

pytestmark = pytest.mark.snapshots

JOB = "ticks"
SQL = "spec.pipeline.steps[0].sequence[0].sql"
FILTERED = "SELECT * FROM ticks WHERE value % 2 = 0"
HTMX = {"HX-Request": "true"}


@pytest.fixture
def stage(tmp_path: Path) -> Iterator[UpgradeStage]:
    """The web tests' server, its dry runs answered by a script (``tests.staged_upgrades``)."""
    with upgrade_stage(tmp_path) as staged:
        yield staged


def staged(browser: Browser) -> UpgradeStage:
    assert isinstance(browser.stage, UpgradeStage)
    return browser.stage


def configure(browser: Browser, *changes: tuple[str, Any]) -> None:
    manifest = changed(pipeline_manifest(JOB), *changes)
    answer = browser.stage.api.put(f"/api/v1/jobs/{JOB}", json=manifest)
    assert answer.status_code == 200, answer.text


def changed_while_running(browser: Browser, *changes: tuple[str, Any]) -> str:
    """``ticks`` RUNNING on version 1, then configured (by default: a filter added); the id of
    its application."""
    application_id = run_until_running(browser.stage, JOB)
    configure(browser, *(changes or [(SQL, FILTERED)]))
    return application_id


def job_page(browser: Browser) -> Node:
    page = browser.page(f"/jobs/{JOB}")
    assert page.status_code == 200, page.text
    return parse(page)


def refused(document: Node, selector: str) -> str:
    """The reason a disabled button gives, checked to be its accessible text too."""
    button = document.one(selector)
    assert button.has_attr("disabled")
    reason = button.attr("title") or ""
    assert document.text(f"#{button.attr('aria-describedby')}") == reason
    return reason


def check(browser: Browser, mode: str = "last-state", **headers: str) -> httpx.Response:
    return browser.client.post(
        f"/jobs/{JOB}/upgrade/check",
        data={"mode": mode, "csrf": browser.csrf},
        headers={"X-CSRF-Token": browser.csrf, **headers},
    )


def upgrade(browser: Browser, mode: str = "last-state", **headers: str) -> httpx.Response:
    return browser.client.post(
        f"/jobs/{JOB}/upgrade",
        data={"mode": mode, "csrf": browser.csrf},
        headers={"X-CSRF-Token": browser.csrf, **headers},
    )


def state_of(browser: Browser, application_id: str) -> str:
    state: str = browser.stage.api.get(f"/api/v1/applications/{application_id}").json()["state"]
    return state


def upgrades_of(browser: Browser) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = browser.stage.api.get(f"/api/v1/jobs/{JOB}/upgrades").json()[
        "items"
    ]
    return items


def test_the_badge_and_upgrade_follow_the_version_the_application_runs(browser: Browser) -> None:
    document = job_page(browser)
    assert not document.has("#job-changed")
    assert refused(document, "#upgrade-refused") == UPGRADE_REFUSALS["none"]

    run_until_running(browser.stage, JOB)
    document = job_page(browser)
    assert not document.has("#job-changed")
    assert refused(document, "#upgrade-refused") == UPGRADE_REFUSALS["current"].format(
        name=f"{JOB}-1"
    )

    configure(browser, (SQL, FILTERED))
    document = job_page(browser)
    badge = document.one("h1 #job-status #job-changed")
    assert badge.text() == "Changed since running"
    assert "runs job version 1; the job is at version 2" in (badge.attr("title") or "")
    assert not document.has("#upgrade-refused")
    assert document.attr("data-open-dialog", "#upgrade-button") == "upgrade-dialog"
    dialog = document.one("#upgrade-dialog")
    assert dialog.text("h2") == f"Upgrade {JOB}-1 to job version 2?"
    assert "fails within 300 s" in dialog.text("#upgrade-text")
    modes = dialog.all('input[name="mode"]')
    assert [mode.attr("value") for mode in modes] == ["last-state", "snapshot", "stateless"]
    assert modes[0].has_attr("checked")
    for mode in modes:
        assert document.text(f"#{mode.attr('aria-describedby')}")
    form = dialog.one("form")
    assert (form.attr("action"), form.attr("hx-post")) == (f"/jobs/{JOB}/upgrade",) * 2
    assert dialog.attr("hx-post", "#upgrade-check") == f"/jobs/{JOB}/upgrade/check"
    assert dialog.attr("formaction", "#upgrade-check") == f"/jobs/{JOB}/upgrade/check"
    assert dialog.has('input[name="csrf"]')

    live = swapped(browser.page(f"/jobs/{JOB}/live"))
    assert live.attr("hx-swap-oob", "#job-status") == "true"
    assert live.text("#job-status #job-changed") == "Changed since running"
    assert live.has("#job-live-actions #upgrade-button")


def test_upgrade_and_the_forms_check_need_the_run_permission(browser: Browser) -> None:
    changed_while_running(browser)
    permissions = [Permission.VIEW, Permission.UPDATE]
    add_user(browser.stage, "editor", bundle="default", permissions=permissions)
    with closing(signed_in(browser.stage, "editor").client) as client:
        editor = Browser(client=client, csrf="", stage=browser.stage)
        document = job_page(editor)
        needs = "Needs the RUN permission on resource bundle 'default'"
        assert refused(document, "#upgrade-refused") == needs
        assert not document.has("#upgrade-dialog")
        assert document.has("#job-changed")
        assert check(editor).status_code == 403
        assert upgrade(editor).status_code == 403
        form = parse(editor.page(f"/jobs/{JOB}/configure"))
        assert refused(form, "#check-compatibility-refused") == needs
        assert not form.has("#check-compatibility")
    assert upgrades_of(browser) == []
    assert parse(browser.page(f"/jobs/{JOB}/configure")).has("#check-compatibility")
    assert not parse(browser.page("/jobs/new")).has("#compatibility-check")


def test_a_fitting_check_shows_the_report_and_stops_nothing(browser: Browser) -> None:
    application_id = changed_while_running(browser)
    staged(browser).with_state(JOB)

    answer = check(browser, **HTMX)

    assert answer.status_code == 200, answer.text
    report = parse(answer)
    assert report.attr("data-compatible", ".check-report") == "true"
    assert "Compatible." in report.text(".check-fits")
    assert report.texts(".check-queries li") == ["query evens: batch 2 replayed, it fits"]
    assert len(staged(browser).tools.runs) == 1
    browser.stage.tick()
    assert state_of(browser, application_id) == "RUNNING"
    assert upgrades_of(browser) == []

    stateless = parse(check(browser, "stateless", **HTMX))
    assert "Nothing to check" in stateless.text(".check-fits")
    assert "fresh checkpoint" in stateless.text(".check-warnings")
    assert len(staged(browser).tools.runs) == 1


def test_the_dry_runs_refusal_names_the_output_and_the_change(browser: Browser) -> None:
    application_id = changed_while_running(browser)
    staged(browser).with_state(JOB)
    staged(browser).dry_run.answer = KEY_CHANGED

    report = parse(check(browser, "snapshot", **HTMX))

    assert report.attr("data-compatible", ".check-report") == "false"
    assert "Not compatible" in report.text('p[role="alert"]')
    [reason] = report.all(".check-reasons li")
    assert reason.attr("data-path") == "spec.pipeline.outputs[0]"
    assert "(state-key-schema)" in reason.text()
    assert "operator 0 (an aggregation)" in reason.text()
    assert report.texts(".check-queries li") == ["query evens: batch 2 replayed, it failed"]

    refused_upgrade = upgrade(browser, "snapshot", **HTMX)
    assert refused_upgrade.status_code == 200
    refusal = parse(refused_upgrade)
    assert "Not upgraded" in refusal.text('p[role="alert"]')
    assert "nothing was stopped" in refusal.text('p[role="alert"]')
    assert refusal.one(".check-reasons li").attr("data-path") == "spec.pipeline.outputs[0]"
    browser.stage.tick()
    assert state_of(browser, application_id) == "RUNNING"
    assert upgrades_of(browser) == []


def test_without_script_the_page_comes_back_with_the_report(browser: Browser) -> None:
    application_id = changed_while_running(
        browser, ("spec.pipeline.outputs[0].path", f"/tmp/out/{JOB}/elsewhere")
    )

    checked = check(browser, "snapshot")
    assert checked.status_code == 200, checked.text
    card = parse(checked).one("#upgrade-answer")
    assert card.text("h2") == "Compatibility check (snapshot)"
    assert card.one(".check-reasons li").attr("data-path") == "spec.pipeline.outputs[0].path"
    assert card.one("#upgrade-again-mode-snapshot").has_attr("checked")
    assert card.attr("action", "form") == f"/jobs/{JOB}/upgrade"
    assert not card.has("form[hx-post]")

    refused_upgrade = upgrade(browser, "last-state")
    assert refused_upgrade.status_code == 409
    card = parse(refused_upgrade).one("#upgrade-answer")
    assert card.text("h2") == "Upgrade (last-state)"
    assert "Not upgraded" in card.text('p[role="alert"]')
    assert card.one(".check-reasons li").attr("data-path") == "spec.pipeline.outputs[0].path"
    assert state_of(browser, application_id) == "RUNNING"

    bad_mode = upgrade(browser, "savepoint")
    assert bad_mode.status_code == 422
    assert "'savepoint' is no upgrade mode" in parse(bad_mode).text("#upgrade-answer")


def test_nothing_to_upgrade_is_refused_with_its_reason(browser: Browser) -> None:
    run_until_running(browser.stage, JOB)

    refused_upgrade = upgrade(browser)

    assert refused_upgrade.status_code == 409
    alert = parse(refused_upgrade).text('#upgrade-answer p[role="alert"]')
    assert alert.startswith("Not upgraded: nothing to upgrade")
    fragment = parse(check(browser, **HTMX))
    assert "Not checked: nothing to upgrade" in fragment.text('p[role="alert"]')


def test_an_upgrade_comes_back_with_a_notice_and_shows_in_the_history(browser: Browser) -> None:
    old = changed_while_running(browser)

    asked = upgrade(browser, "snapshot", **HTMX)

    assert asked.status_code == 204, asked.text
    assert asked.headers["HX-Redirect"] == f"/jobs/{JOB}"
    [record] = upgrades_of(browser)
    assert (record["status"], record["mode"]) == ("STOPPING", "snapshot")
    document = job_page(browser)
    notice = document.text("main p.notice")
    assert notice.startswith(f"Upgrade {record['id']} to job version 2 (snapshot) asked for")
    assert f"taking snapshot {record['snapshot']}" in notice
    article = document.one(f'#upgrades article[data-upgrade="{record["id"]}"]')
    facts = article.one(".upgrade-facts")
    assert facts.attr("data-status") == "STOPPING"
    assert facts.text("h3") == "Job version 1 → 2 (snapshot) Stopping"
    assert facts.attr("href", '[data-cell="applications"] a') == f"/applications/{old}"
    assert facts.text('[data-cell="snapshot"]') == record["snapshot"]
    assert facts.text('[data-cell="requested"]').endswith("by admin")
    diff = article.one("details.upgrade-diff")
    assert not diff.has_attr("open")
    assert diff.text("summary") == "Diff of the specs, job version 1 → 2"
    assert diff.texts(".diff-file") == ["--- job version 1", "+++ job version 2"]
    removed = [line.tag.get_text() for line in diff.all(".diff-removed")]
    added = [line.tag.get_text() for line in diff.all(".diff-added")]
    assert "-        sql: SELECT * FROM ticks" in removed
    assert f"+        sql: {FILTERED}" in added
    assert document.one("#panel-applications").has("#upgrades")

    browser.stage.tick()
    stage_snapshot(browser.stage, record["snapshot"], kind=SnapshotKind.UPGRADE, batch=2)
    browser.stage.tick()
    live = swapped(browser.page(f"/jobs/{JOB}/live"))
    refreshed = live.one(f"#upgrade-facts-{record['id']}")
    assert refreshed.attr("hx-swap-oob") == "true"
    assert refreshed.attr("data-status") == "STARTING"
    new = upgrades_of(browser)[0]["toApplication"]
    assert refreshed.has(f'[data-cell="applications"] a[href="/applications/{new}"]')
    assert not live.has("#job-changed")


def test_without_script_an_upgrade_redirects_with_the_notice(browser: Browser) -> None:
    changed_while_running(browser)

    asked = upgrade(browser, "last-state")

    assert asked.status_code == 303, asked.text
    assert asked.headers["location"] == f"/jobs/{JOB}"
    assert "asked for" in job_page(browser).text("main p.notice")
    document = job_page(browser)
    assert refused(document, "#upgrade-refused").startswith("Only a running application")


def test_the_form_checks_compatibility_without_saving(browser: Browser) -> None:
    run_until_running(browser.stage, JOB)
    staged(browser).with_state(JOB)
    page = browser.page(f"/jobs/{JOB}/configure")
    document = parse(page)
    button = document.one("#check-compatibility")
    assert button.attr("formaction") == f"/jobs/{JOB}/configure/check"
    assert button.attr("hx-target") == "#compatibility-report"
    fields = form_of(page)
    staged(browser).dry_run.answer = KEY_CHANGED
    typed = {**fields, "description": ["Grouped by id"]}

    fragment = browser.client.post(
        f"/jobs/{JOB}/configure/check",
        data={**typed, "csrf": browser.csrf},
        headers={"X-CSRF-Token": browser.csrf, **HTMX},
    )

    assert fragment.status_code == 200, fragment.text
    report = parse(fragment)
    assert report.attr("data-compatible", ".check-report") == "false"
    assert report.one(".check-reasons li").attr("data-path") == "spec.pipeline.outputs[0]"
    [run] = staged(browser).tools.runs
    assert run.job.metadata.description == "Grouped by id"

    whole = browser.submit(f"/jobs/{JOB}/configure/check", typed)
    assert whole.status_code == 200
    document = parse(whole)
    assert document.attr("data-compatible", "#compatibility-report .check-report") == "false"
    assert form_of(whole)["description"] == ["Grouped by id"]
    job = browser.stage.api.get(f"/api/v1/jobs/{JOB}").json()
    assert job["metadata"]["resourceVersion"] == "1"
    assert job["metadata"]["description"] is None

    unreadable = {**typed, "pipeline": ["inputs: [unclosed"]}
    broken = browser.submit(f"/jobs/{JOB}/configure/check", unreadable)
    assert broken.status_code == 422
    assert "Nothing was saved" in parse(broken).text("#form-problems")
    wrong_view = {**typed, "pipeline": [typed["pipeline"][0].replace("FROM ticks", "FROM nowhere")]}
    problems = browser.client.post(
        f"/jobs/{JOB}/configure/check",
        data={**wrong_view, "csrf": browser.csrf},
        headers={"X-CSRF-Token": browser.csrf, **HTMX},
    )
    assert "Nothing was checked" in parse(problems).text('p[role="alert"]')
    assert "nowhere" in parse(problems).text(".check-reasons")
    assert len(staged(browser).tools.runs) == 2
