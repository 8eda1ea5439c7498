"""The job form's Health rules: rows that make ``spec.health.rules``, their errors at the field
they name, and the rules shown again when the job is configured."""

from __future__ import annotations

from typing import Any

import yaml

from tests.web.conftest import Browser
from tests.web.html import parse
from tests.web.test_job_form import assert_error_next_to, form_of, new_job_fields


def with_rules(fields: dict[str, Any], *rules: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with its rule rows (the page's blank one too) replaced by ``rules``."""
    kept = {key: value for key, value in fields.items() if not key.startswith("rule_")}
    for index, rule in enumerate(rules):
        for field, value in rule.items():
            kept[f"rule_{index}_{field}"] = value
    return kept


LAG_RULE = {
    "name": "lagging",
    "metric": "recordsBehind",
    "comparison": ">",
    "threshold": "5000",
    "duration": "120",
    "batches": "1",
    "window": "",
    "actions": ["notify", "restart"],
}


def test_the_form_offers_a_blank_rule_row_with_every_metric(browser: Browser) -> None:
    page = parse(browser.page("/jobs/new"))
    section = page
    assert section.text("fieldset#health-rules > legend") == "Health rules"
    metrics = [option.attr("value") for option in section.all("select#rule_0_metric option")]
    assert {"recordsBehind", "stalledSeconds", "restarts"} <= set(metrics)
    assert section.attr("value", "input#rule_0_name") == ""
    assert section.has("input#rule_0_actions-notify[checked]")
    assert not section.has("input#rule_0_actions-restart[checked]")
    assert section.has("template[data-row-template]")


def test_a_rule_is_saved_and_shown_again_when_the_job_is_configured(browser: Browser) -> None:
    fields = with_rules(new_job_fields(browser), LAG_RULE)
    created = browser.submit("/jobs/new", fields)
    assert created.status_code == 303, created.text
    job = browser.stage.api.get("/api/v1/jobs/orders-web").json()
    assert job["spec"]["health"]["rules"] == [
        {
            "name": "lagging",
            "metric": "recordsBehind",
            "comparison": ">",
            "threshold": 5000.0,
            "durationSeconds": 120,
            "batches": 1,
            "windowSeconds": None,
            "actions": ["notify", "restart"],
        }
    ]
    page = browser.page("/jobs/orders-web/configure")
    shown = parse(page)
    assert shown.attr("value", "input#rule_0_name") == "lagging"
    assert shown.attr("value", "select#rule_0_metric option[selected]") == "recordsBehind"
    assert shown.attr("value", "input#rule_0_threshold") == "5000"
    assert shown.has("input#rule_0_actions-restart[checked]")
    assert shown.attr("value", "input#rule_1_name") == ""

    removed = browser.submit("/jobs/orders-web/configure", with_rules(form_of(page)))
    assert removed.status_code == 303, removed.text
    job = browser.stage.api.get("/api/v1/jobs/orders-web").json()
    assert job["spec"]["health"]["rules"] == []


def test_an_unknown_metric_and_a_negative_duration_are_shown_at_their_fields(
    browser: Browser,
) -> None:
    fields = with_rules(
        new_job_fields(browser),
        {**LAG_RULE, "metric": "coffeeLevel"},
        {**LAG_RULE, "name": "stalled", "metric": "stalledSeconds", "duration": "-5"},
    )
    refused = browser.submit("/jobs/new", fields)
    assert refused.status_code == 422
    assert_error_next_to(refused.text, "rule_0_metric", "must be")
    assert_error_next_to(refused.text, "rule_1_duration", "greater than or equal to 0")
    assert browser.stage.api.get("/api/v1/jobs/orders-web").status_code == 404
    kept = parse(refused)
    assert kept.attr("value", "select#rule_0_metric option[selected]") == "coffeeLevel"
    assert kept.attr("value", "input#rule_1_duration") == "-5"


def test_cross_field_rules_and_missing_actions_are_at_their_fields_too(browser: Browser) -> None:
    fields = with_rules(
        new_job_fields(browser),
        {**LAG_RULE, "metric": "restarts", "window": "", "actions": ["restart"]},
    )
    refused = browser.submit("/jobs/new", fields)
    assert refused.status_code == 422
    assert_error_next_to(refused.text, "rule_0_window", "required for the restarts metric")
    page = parse(refused)
    assert page.attr("aria-invalid", "fieldset#rule_0_actions") == "true"
    assert "each restart would feed it" in page.text("#rule_0_actions-error")

    no_action = with_rules(new_job_fields(browser), {**LAG_RULE, "actions": []})
    refused = browser.submit("/jobs/new", no_action)
    assert refused.status_code == 422
    assert parse(refused).text("#rule_0_actions-error")


def test_edit_as_yaml_and_duplicate_carry_the_rules(browser: Browser) -> None:
    fields = with_rules(new_job_fields(browser), LAG_RULE)
    as_yaml = browser.submit("/jobs/new/yaml", {**fields, "edit_as": "yaml"})
    assert as_yaml.status_code == 200, as_yaml.text
    text = parse(as_yaml).one("textarea#manifest").tag.get_text()
    assert yaml.safe_load(text)["spec"]["health"]["rules"] == [
        {
            "name": "lagging",
            "metric": "recordsBehind",
            "comparison": ">",
            "threshold": 5000,
            "durationSeconds": 120,
            "batches": 1,
            "actions": ["notify", "restart"],
        }
    ]
    assert browser.submit("/jobs/new", fields).status_code == 303
    copy = parse(browser.page("/jobs/new?from=orders-web"))
    assert copy.attr("value", "input#rule_0_name") == "lagging"
    assert copy.has("input#rule_0_actions-restart[checked]")
