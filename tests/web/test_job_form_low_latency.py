"""The job form's Low latency checkbox (issue 25): it sets spec.pipeline.streaming.lowLatency,
Configure shows it ticked (and the pipeline editor without the field), unticking turns it off,
the Details tab shows it, and its errors go next to it."""

from __future__ import annotations

from typing import Any

import yaml

from tests.factories import RATE_PIPELINE_YAML, connection_manifest
from tests.web.access_helpers import admin_of
from tests.web.conftest import Browser
from tests.web.html import parse
from tests.web.test_job_details_tab import details, facts, section
from tests.web.test_job_form import assert_error_next_to, form_of, new_job_fields


def kafka_pipeline(topic: str) -> str:
    """Ticks into a Kafka topic: the pipeline lowLatency changes something for."""
    return f"""\
inputs:
  - name: ticks
    format: rate
outputs:
  - name: ticks
    format: kafka
    dataset: kafka-main:{topic}
"""


def quick_fields(browser: Browser, name: str, **changes: Any) -> dict[str, Any]:
    """The new form's fields for a job writing Kafka, Low latency ticked; the connection made."""
    stage = browser.stage
    if not stage.services.connections.exists("kafka-main"):
        stage.services.connections.create(connection_manifest("kafka-main"), actor=admin_of(stage))
    fields = {"pipeline": kafka_pipeline(name), "low_latency": "true", **changes}
    return new_job_fields(browser, name=name, **fields)


def streaming_of(browser: Browser, name: str) -> dict[str, Any]:
    job = browser.stage.api.get(f"/api/v1/jobs/{name}").json()
    streaming: dict[str, Any] = job["spec"]["pipeline"]["streaming"]
    return streaming


def test_the_checkbox_is_shown_for_pipelines_unticked(browser: Browser) -> None:
    page = parse(browser.page("/jobs/new"))
    assert page.text('label[for="low_latency"]') == "Low latency"
    box = page.one("#low_latency")
    assert (box.attr("type"), box.attr("name"), box.attr("value")) == (
        "checkbox",
        "low_latency",
        "true",
    )
    assert box.attr("checked") is None
    assert "low_latency" not in form_of(browser.page("/jobs/new"))


def test_a_low_latency_job_is_saved_shown_and_turned_off(browser: Browser) -> None:
    created = browser.submit("/jobs/new", quick_fields(browser, "quick-web"))
    assert created.status_code == 303, created.text
    assert streaming_of(browser, "quick-web")["lowLatency"] is True
    shown_details = facts(section(details(browser, "quick-web"), "pipeline-title"))
    assert shown_details["Low latency"] == "yes"

    shown = form_of(browser.page("/jobs/quick-web/configure"))
    assert shown["low_latency"] == ["true"]
    assert "lowLatency" not in shown["pipeline"][0]

    unticked = {key: value for key, value in shown.items() if key != "low_latency"}
    saved = browser.submit("/jobs/quick-web/configure", unticked)
    assert saved.status_code == 303, saved.text
    assert streaming_of(browser, "quick-web")["lowLatency"] is False
    assert "low_latency" not in form_of(browser.page("/jobs/quick-web/configure"))


def test_edit_as_yaml_carries_the_checkbox(browser: Browser) -> None:
    fields = quick_fields(browser, "quick-yaml")
    as_yaml = browser.submit("/jobs/new/yaml", {**fields, "edit_as": "yaml"})
    assert as_yaml.status_code == 200
    manifest = yaml.safe_load(form_of(as_yaml)["manifest"][0])
    assert manifest["spec"]["pipeline"]["streaming"]["lowLatency"] is True


def test_the_checkbox_errors_are_shown_next_to_it(browser: Browser) -> None:
    once = "streaming:\n  triggerMode: Once\n" + kafka_pipeline("quick-once")
    refused = browser.submit("/jobs/new", quick_fields(browser, "quick-once", pipeline=once))
    assert refused.status_code == 422
    assert_error_next_to(refused.text, "low_latency", "no latency to lower")
    assert form_of(refused)["low_latency"] == ["true"]

    files = new_job_fields(browser, name="quick-files", low_latency="true")
    assert files["pipeline"] == RATE_PIPELINE_YAML
    refused = browser.submit("/jobs/new", files)
    assert refused.status_code == 422
    assert_error_next_to(refused.text, "low_latency", "this pipeline has none")

    odd = quick_fields(browser, "quick-odd", low_latency="yes")
    refused = browser.submit("/jobs/new", odd)
    assert refused.status_code == 422
    assert_error_next_to(refused.text, "low_latency", "boolean")
    for name in ("quick-once", "quick-files", "quick-odd"):
        assert browser.stage.api.get(f"/api/v1/jobs/{name}").status_code == 404
