"""The job form in a real browser shows only fields that do something here: the processing
guarantee for pipelines alone, no Kubernetes fields, and a note on the standard deployment while
the server has no standalone master."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def test_the_guarantee_follows_the_application_type(
    page: Page, screenshot: Callable[[Page, str], Path]
) -> None:
    page.goto("/jobs/new")
    guarantee = page.get_by_label("Processing guarantee", exact=True)
    program_note = page.get_by_text("manages its own delivery guarantee")
    expect(guarantee).to_be_visible()
    expect(program_note).to_be_hidden()
    for label in ("Image", "Volume size", "Volume mount path"):
        expect(page.get_by_label(label, exact=True), label).to_have_count(0)
    expect(page.get_by_role("tab", name="Config maps")).to_have_count(0)
    expect(page.locator("#deployment-hint")).to_contain_text("STREAMJOBS_SPARK_MASTER")

    page.get_by_label("Application type", exact=True).select_option("python")
    expect(guarantee).to_be_hidden()
    expect(program_note).to_be_visible()
    screenshot(page, "job-form-python-guarantee")

    page.get_by_label("Application type", exact=True).select_option("pipeline")
    expect(guarantee).to_be_visible()
