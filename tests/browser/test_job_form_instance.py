"""The job form's standard-only controls in a real browser: the deploy mode and dynamic allocation
appear with the standard deployment, the minimum and initial executors with dynamic allocation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def test_the_standard_controls_follow_the_deployment_and_dynamic_allocation(
    page: Page, screenshot: Callable[[Page, str], Path]
) -> None:
    page.goto("/jobs/new")
    deploy_mode = page.get_by_label("Deploy mode", exact=True)
    dynamic = page.get_by_label("Dynamic allocation", exact=True)
    fewest = page.get_by_label("Minimum executors", exact=True)
    initial = page.get_by_label("Initial executors", exact=True)
    for control in (deploy_mode, dynamic, fewest, initial):
        expect(control).to_be_hidden()

    page.get_by_label("Deployment", exact=True).select_option("standard")
    expect(deploy_mode).to_be_visible()
    expect(dynamic).to_be_visible()
    expect(fewest).to_be_hidden()
    expect(initial).to_be_hidden()

    dynamic.select_option("true")
    expect(fewest).to_be_visible()
    expect(initial).to_be_visible()
    screenshot(page, "job-form-dynamic-allocation")

    page.get_by_label("Deployment", exact=True).select_option("singleNode")
    for control in (deploy_mode, dynamic, fewest, initial):
        expect(control).to_be_hidden()
