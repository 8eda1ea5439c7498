"""A job that cannot run has its Run button disabled, saying what it lacks (issue 21, item 3);
a Run posted anyway (the page was drawn before the secret went) is refused on the page, 409."""

from __future__ import annotations

from tests.factories import changed, python_manifest
from tests.web.conftest import Browser
from tests.web.html import parse

MISSING = "secret 'api-key' does not exist in resource bundle 'default'"


def put_job_needing_a_secret(browser: Browser) -> None:
    job = changed(python_manifest("clicks"), ("spec.configuration.envSecrets", {"KEY": "api-key"}))
    browser.stage.api.put("/api/v1/jobs/clicks", json=job).raise_for_status()


def test_run_is_disabled_naming_the_missing_secret(browser: Browser) -> None:
    put_job_needing_a_secret(browser)
    page = parse(browser.page("/jobs/clicks"))
    button = page.one("#run-refused")
    assert button.has_attr("disabled")
    reason = button.attr("title") or ""
    assert reason.startswith("job 'clicks' cannot run: spec.configuration.envSecrets.KEY: ")
    assert MISSING in reason
    assert page.text("#run-refused-why") == " ".join(reason.split())
    assert not page.has("#run-button")


def test_run_is_enabled_once_the_secret_exists(browser: Browser) -> None:
    put_job_needing_a_secret(browser)
    created = browser.stage.api.put(
        "/api/v1/bundles/default/secrets/api-key", json={"value": "s3cret"}
    )
    assert created.status_code == 201, created.text
    page = parse(browser.page("/jobs/clicks"))
    assert page.has("#run-button")
    assert not page.has("#run-refused")


def test_a_run_posted_anyway_is_refused_on_the_page(browser: Browser) -> None:
    put_job_needing_a_secret(browser)
    browser.stage.api.put(
        "/api/v1/bundles/default/secrets/api-key", json={"value": "s3cret"}
    ).raise_for_status()
    browser.page("/jobs/clicks")  # drawn with Run enabled, then the secret goes
    browser.stage.api.delete("/api/v1/bundles/default/secrets/api-key").raise_for_status()
    answer = browser.submit("/jobs/clicks/run", {})
    assert answer.status_code == 409
    alert = parse(answer).text("[role=alert]")
    assert alert.startswith("job 'clicks' cannot run: ")
    assert MISSING in alert
