"""The web UI about checkpoints: the delete confirmation offers to delete the job's checkpoint,
the jobs page then says where a kept one stays, and a job created where a checkpoint holds
state says, once, on its page, that its first run resumes from there."""

from __future__ import annotations

from pathlib import Path

import yaml

from streamjobs.domain.locations import local_path
from tests.checkpoint_server import with_state
from tests.factories import pipeline_manifest
from tests.staged_server import Stage
from tests.web.conftest import Browser
from tests.web.html import parse


def checkpoint_of(stage: Stage, name: str) -> Path:
    root = local_path(stage.services.settings.resolved_checkpoint_root)
    assert root is not None
    return Path(root) / "default" / name


def test_the_delete_confirmation_offers_to_delete_the_checkpoint(browser: Browser) -> None:
    page = parse(browser.page("/jobs/ticks"))

    checkbox = page.one('#delete-dialog input[type="checkbox"][name="delete_checkpoint"]')

    assert checkbox.attr("value") == "true"
    assert not checkbox.has_attr("checked")
    assert "Delete its checkpoint too" in page.text("#delete-dialog")


def test_a_kept_checkpoint_is_named_once_on_the_jobs_page(browser: Browser) -> None:
    checkpoint = with_state(checkpoint_of(browser.stage, "ticks"))

    deleted = browser.submit("/jobs/ticks/delete", {})

    assert deleted.status_code == 303
    assert deleted.headers["location"] == "/jobs"
    notices = parse(browser.page("/jobs")).texts('.notice[role="status"]')
    assert len(notices) == 1
    assert checkpoint.as_uri() in notices[0]
    assert checkpoint.is_dir()
    assert not parse(browser.page("/jobs")).has('.notice[role="status"]')


def test_a_deleted_checkpoint_is_gone_and_nothing_is_said(browser: Browser) -> None:
    checkpoint = with_state(checkpoint_of(browser.stage, "ticks"))

    deleted = browser.submit("/jobs/ticks/delete", {"delete_checkpoint": "true"})

    assert deleted.status_code == 303
    assert not checkpoint.exists()
    assert not parse(browser.page("/jobs")).has('.notice[role="status"]')


def test_creating_where_a_checkpoint_holds_state_says_so_on_the_job_page(
    browser: Browser,
) -> None:
    checkpoint = with_state(checkpoint_of(browser.stage, "reborn"))
    manifest = yaml.safe_dump(pipeline_manifest("reborn"))

    created = browser.submit("/jobs/new/yaml", {"manifest": manifest})

    assert created.status_code == 303, created.text
    assert created.headers["location"] == "/jobs/reborn"
    [notice] = parse(browser.page("/jobs/reborn")).texts('.notice[role="status"]')
    assert checkpoint.as_uri() in notice
    assert "resumes from there" in notice
    assert not parse(browser.page("/jobs/reborn")).has('.notice[role="status"]')


def test_creating_afresh_says_nothing(browser: Browser) -> None:
    manifest = yaml.safe_dump(pipeline_manifest("fresh"))

    created = browser.submit("/jobs/new/yaml", {"manifest": manifest})

    assert created.status_code == 303, created.text
    assert not parse(browser.page("/jobs/fresh")).has('.notice[role="status"]')


def test_a_forged_notice_cookie_that_is_no_list_shows_nothing(browser: Browser) -> None:
    browser.client.cookies.set("streamjobs-notices", "%7B%22not%22%3A1%7D")

    assert not parse(browser.page("/jobs")).has('.notice[role="status"]')
