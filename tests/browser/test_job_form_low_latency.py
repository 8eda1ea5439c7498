"""The job form's Low latency checkbox in a real browser: shown for pipelines only, and a job it
cannot speed up (no Kafka output) refused next to it, ticked still."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import field_error

pytestmark = pytest.mark.browser


def test_the_checkbox_follows_the_application_type_and_shows_its_error(
    page: Page, screenshot: Callable[[Page, str], Path]
) -> None:
    page.goto("/jobs/new")
    low_latency = page.get_by_label("Low latency", exact=True)
    expect(low_latency).to_be_visible()
    expect(low_latency).not_to_be_checked()

    page.get_by_label("Application type", exact=True).select_option("python")
    expect(low_latency).to_be_hidden()
    page.get_by_label("Application type", exact=True).select_option("pipeline")
    expect(low_latency).to_be_visible()

    page.get_by_label("Name", exact=True).fill("low-latency-browser")
    low_latency.check()
    page.get_by_role("button", name="Create").click()

    low_latency = page.get_by_label("Low latency", exact=True)
    expect(low_latency).to_be_checked()
    expect(low_latency).to_have_attribute("aria-invalid", "true")
    expect(field_error(low_latency)).to_contain_text("Kafka outputs")
    screenshot(page, "job-form-low-latency-error")
