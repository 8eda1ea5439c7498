"""The pipeline editor's live check over HTTP: each error with its field path and the line of the
YAML typed, the guarantee taken into account, and the CSRF header required."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from streamjobs.web.routes.pipeline_check import MAX_LISTED_ERRORS
from tests.factories import RATE_PIPELINE_YAML
from tests.web.conftest import Browser
from tests.web.yaml_readings import CountedReadings, with_bad_inputs


def test_the_pipeline_check_returns_paths_and_lines(browser: Browser) -> None:
    def check(body: dict[str, Any]) -> httpx.Response:
        return browser.client.post(
            "/jobs/validate-pipeline", json=body, headers={"X-CSRF-Token": browser.csrf}
        )

    assert check({"yaml": RATE_PIPELINE_YAML}).json() == {"errors": []}

    broken = RATE_PIPELINE_YAML.replace("FROM ticks", "FROM tickz").replace("rate", "ratez")
    errors = check({"yaml": broken}).json()["errors"]
    lines = broken.splitlines()
    assert {(e["path"], e["line"]) for e in errors} == {
        ("spec.pipeline.inputs[0].format", lines.index("    format: ratez") + 1),
    }

    unknown_view = RATE_PIPELINE_YAML.replace("FROM ticks", "FROM tickz")
    [error] = check({"yaml": unknown_view}).json()["errors"]
    assert error["path"] == "spec.pipeline.steps[0].sequence[0].sql"
    sql_line = unknown_view.splitlines().index(
        "        sql: SELECT * FROM tickz WHERE value % 2 = 0"
    )
    assert error["line"] == sql_line + 1
    assert "tickz" in error["message"]

    console = RATE_PIPELINE_YAML.replace("format: parquet", "format: console").replace(
        "    path: /tmp/streamjobs-web/evens\n", ""
    )
    assert check({"yaml": console}).json() == {"errors": []}
    [error] = check({"yaml": console, "guarantee": "EXACTLY_ONCE"}).json()["errors"]
    assert error["path"] == "spec.pipeline.outputs[0].format"

    [error] = check({"yaml": "inputs: [\n"}).json()["errors"]
    assert (error["path"], error["line"]) == ("spec.pipeline", 2)

    assert check({"nothing": 1}).status_code == 422


def test_the_pipeline_check_needs_the_csrf_header(browser: Browser) -> None:
    refused = browser.client.post("/jobs/validate-pipeline", json={"yaml": RATE_PIPELINE_YAML})
    assert refused.status_code == 403


def test_the_pipeline_is_read_once_however_many_errors_it_has(
    browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = with_bad_inputs(120)
    readings = CountedReadings(monkeypatch)
    response = browser.client.post(
        "/jobs/validate-pipeline", json={"yaml": text}, headers={"X-CSRF-Token": browser.csrf}
    )
    errors = response.json()["errors"]
    assert readings.count <= 2  # its own, the form's default pipeline; not one per error
    assert len(errors) == MAX_LISTED_ERRORS + 1
    first = errors[0]
    assert first["path"] == "spec.pipeline.inputs[1].format"
    assert first["line"] == text.splitlines().index("    format: ratez") + 1
    assert errors[-1]["path"] == ""
    assert re.fullmatch(r"and \d+ more problems, not listed", errors[-1]["message"])
