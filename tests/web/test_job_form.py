"""The Create / Configure form, Duplicate and Edit as YAML, over HTTP against a real server: forms
are read from the page and submitted the way a browser does."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import httpx
import pytest
import yaml

from tests.factories import RATE_PIPELINE_YAML, pipeline_manifest
from tests.web.conftest import Browser
from tests.web.yaml_readings import CountedReadings, with_bad_inputs


class FormReader(HTMLParser):
    """The fields a browser would submit from a page's form: inputs (checkboxes when ticked),
    selects, textareas (not the row templates, and no button)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.fields: dict[str, list[str]] = {}
        self._in_template = 0
        self._select: str | None = None
        self._select_values: list[tuple[str, bool]] = []
        self._textarea: str | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {key: value or "" for key, value in attrs}
        if tag == "template":
            self._in_template += 1
        if self._in_template:
            return
        name = attributes.get("name")
        kind = attributes.get("type")
        if kind in ("checkbox", "radio") and "checked" not in attributes:
            return
        if tag == "input" and name and kind not in ("button", "submit"):
            self.fields.setdefault(name, []).append(attributes.get("value", ""))
        elif tag == "select" and name:
            self._select, self._select_values = name, []
        elif tag == "option" and self._select is not None:
            self._select_values.append((attributes.get("value", ""), "selected" in attributes))
        elif tag == "textarea" and name:
            self._textarea, self._text = name, ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "template":
            self._in_template -= 1
        elif tag == "select" and self._select is not None:
            chosen = [value for value, selected in self._select_values if selected]
            first = self._select_values[0][0] if self._select_values else ""
            self.fields.setdefault(self._select, []).append(chosen[0] if chosen else first)
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            text = self._text[1:] if self._text.startswith("\n") else self._text
            self.fields.setdefault(self._textarea, []).append(text)
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text += data


def form_of(page: httpx.Response) -> dict[str, Any]:
    """The fields the page's form would submit, the CSRF token left to ``Browser.submit``."""
    reader = FormReader()
    reader.feed(page.text)
    fields: dict[str, Any] = reader.fields
    fields.pop("csrf", None)
    return fields


def control_tag(html: str, control: str) -> str:
    found = re.search(rf'<(?:input|select|textarea)\b[^>]*\bid="{control}"[^>]*>', html)
    assert found, f"no control {control}"
    return found.group(0)


def assert_error_next_to(html: str, control: str, text: str) -> None:
    """The control is marked invalid and described by the error right after it."""
    tag = control_tag(html, control)
    assert 'aria-invalid="true"' in tag
    assert re.search(rf'aria-describedby="[^"]*\b{control}-error\b', tag)
    after = html[html.index(tag) + len(tag) :]
    if tag.startswith("<select"):
        after = after[after.index("</select>") + len("</select>") :]
    if tag.startswith("<textarea"):
        after = after[after.index("</textarea>") + len("</textarea>") :]
    assert after.lstrip().startswith(f'<p class="field-error" id="{control}-error">'), after[:200]
    error = after[: after.index("</p>")]
    assert text in error, error


def new_job_fields(browser: Browser, **changes: Any) -> dict[str, Any]:
    fields = form_of(browser.page("/jobs/new"))
    fields.update(
        name="orders-web",
        description="Orders from the form",
        pipeline=RATE_PIPELINE_YAML,
        restart_policy="OnFailure",
        failure_retries="3",
        env_key=["TZ"],
        env_value=["UTC"],
        tags_key=["team", "tier"],
        tags_value=["payments", "gold"],
    )
    fields.update(changes)
    return fields


def test_the_new_form_has_every_labelled_control_and_an_example_pipeline(
    browser: Browser,
) -> None:
    page = browser.page("/jobs/new")
    assert page.status_code == 200
    labels = dict(re.findall(r'<label for="([^"]+)">([^<]+)</label>', page.text))
    for control, label in {
        "name": "Name",
        "description": "Description",
        "bundle": "Resource bundle",
        "namespace": "Namespace",
        "run_as": "Run as user",
        "app_type": "Application type",
        "main_class": "Main class",
        "main_file": "Main application file",
        "pipeline": "Pipeline (YAML)",
        "deployment": "Deployment",
        "driver": "Driver node",
        "executor": "Executor node",
        "executors": "Executors",
        "restart_policy": "Restart policy",
        "submission_retries": "Submission failure retries",
        "submission_retry_interval": "Submission retry interval (s)",
        "failure_retries": "Failure retries",
        "failure_retry_interval": "Failure retry interval (s)",
        "guarantee": "Processing guarantee",
    }.items():
        assert labels.get(control) == label, control
    every_id = set(re.findall(r'<(?:input|select|textarea)\b[^>]*\bid="([^"]+)"', page.text))
    assert every_id - set(labels) == set(), "every control has a label"
    fields = form_of(page)
    assert fields["namespace"] == ["default"]  # the only one there is
    assert fields["bundle"] == ["default"]
    assert [fields[c][0] for c in ("submission_retries", "submission_retry_interval")] == ["1", "5"]
    assert [fields[c][0] for c in ("failure_retries", "failure_retry_interval")] == ["1", "5"]
    assert "format: rate" in fields["pipeline"][0]
    assert "format: parquet" in fields["pipeline"][0]
    assert '<button type="submit" class="primary">Create</button>' in page.text
    assert 'role="tablist"' in page.text
    assert 'role="tabpanel"' in page.text
    assert re.search(r'<button type="button" class="add" data-add-row>Add</button>', page.text)
    assert "Remove</button>" in page.text
    assert '<script src="/static/job_form.js" defer></script>' in page.text
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page.text)


def test_a_wrong_field_is_shown_next_to_it_and_nothing_is_saved_until_it_is_right(
    browser: Browser,
) -> None:
    refused = browser.submit("/jobs/new", new_job_fields(browser, namespace="Team_A"))
    assert refused.status_code == 422
    assert_error_next_to(refused.text, "namespace", "is not a valid DNS label")
    assert "Nothing was saved." in refused.text
    kept = form_of(refused)
    assert kept["namespace"] == ["Team_A"]
    assert kept["description"] == ["Orders from the form"]
    assert kept["tags_key"][:2] == ["team", "tier"]
    assert kept["pipeline"] == [RATE_PIPELINE_YAML]
    assert browser.stage.api.get("/api/v1/jobs/orders-web").status_code == 404

    kept["namespace"] = ["team-a"]
    created = browser.submit("/jobs/new", kept)
    assert created.status_code == 303, created.text
    assert created.headers["location"] == "/jobs/orders-web"
    job = browser.stage.api.get("/api/v1/jobs/orders-web").json()
    assert job["metadata"]["namespace"] == "team-a"
    assert job["metadata"]["description"] == "Orders from the form"
    assert job["metadata"]["tags"] == {"team": "payments", "tier": "gold"}
    assert job["spec"]["configuration"]["env"] == {"TZ": "UTC"}
    assert job["spec"]["restartPolicy"]["type"] == "OnFailure"
    assert job["spec"]["restartPolicy"]["onFailureRetries"] == 3
    assert job["spec"]["pipeline"]["outputs"][0]["path"] == "/tmp/streamjobs-web/evens"
    assert job["spec"]["application"] == {
        "type": "pipeline",
        "mainClass": None,
        "mainApplicationFile": None,
        "image": None,
        "arguments": [],
    }


def test_errors_go_to_rows_and_to_pipeline_lines(browser: Browser) -> None:
    pipeline = RATE_PIPELINE_YAML.replace("format: parquet", "format: parquett")
    fields = new_job_fields(
        browser, pipeline=pipeline, tags_key=["ok", "bad key"], tags_value=["1", "2"]
    )
    refused = browser.submit("/jobs/new", fields)
    assert refused.status_code == 422
    assert_error_next_to(refused.text, "tags_key_1", "is not a valid tag key")
    line = pipeline.splitlines().index("    format: parquett") + 1
    assert_error_next_to(
        refused.text, "pipeline", f'data-goto-line="{line}" data-target="pipeline">Line {line}</a>'
    )
    assert "<code>spec.pipeline.outputs[0].format</code>" in refused.text


def test_the_server_ignores_fields_of_other_application_types(browser: Browser) -> None:
    fields = new_job_fields(
        browser,
        name="jvm-web",
        app_type="jvm",
        main_class="com.example.Job",
        main_file="file:///opt/jobs/app.jar",
        pipeline="this is: [not yaml",
        deployment="singleNode",
        executors="not a number",
        restart_policy="Never",
        failure_retries="-5",
    )
    created = browser.submit("/jobs/new", fields)
    assert created.status_code == 303, created.text
    spec = browser.stage.api.get("/api/v1/jobs/jvm-web").json()["spec"]
    assert spec["pipeline"] is None
    assert spec["application"]["mainClass"] == "com.example.Job"
    assert spec["instance"]["executors"] is None
    assert spec["restartPolicy"]["onFailureRetries"] == 1


def test_configure_changes_a_field_and_refuses_a_stale_version(browser: Browser) -> None:
    page = browser.page("/jobs/ticks/configure")
    assert page.status_code == 200
    assert "readonly" in control_tag(page.text, "name")
    assert '<button type="submit" class="primary">Save</button>' in page.text
    opened = form_of(page)
    version = opened["resource_version"][0]
    assert version

    first = {**opened, "description": ["Changed in the form"], "name": ["renamed"]}
    saved = browser.submit("/jobs/ticks/configure", first)
    assert saved.status_code == 303, saved.text
    assert saved.headers["location"] == "/jobs/ticks"
    job = browser.stage.api.get("/api/v1/jobs/ticks").json()
    assert job["metadata"]["description"] == "Changed in the form"
    assert job["metadata"]["resourceVersion"] != version

    stale = {**opened, "guarantee": ["EXACTLY_ONCE"]}
    refused = browser.submit("/jobs/ticks/configure", stale)
    assert refused.status_code == 409
    assert "was changed by someone else" in refused.text
    assert "Nothing was saved" in refused.text
    assert form_of(refused)["guarantee"] == ["EXACTLY_ONCE"]
    job = browser.stage.api.get("/api/v1/jobs/ticks").json()
    assert job["spec"]["processing"]["guarantee"] == "AT_LEAST_ONCE"


def test_configure_of_a_missing_job_is_not_found(browser: Browser) -> None:
    assert browser.page("/jobs/nope/configure").status_code == 404


def test_duplicate_prefills_the_form_and_the_copy_needs_its_own_output(browser: Browser) -> None:
    page = browser.page("/jobs/new?from=ticks")
    assert page.status_code == 200
    fields = form_of(page)
    assert fields["name"] == ["ticks-copy"]
    assert fields["duplicate_of"] == ["ticks"]
    assert fields["resource_version"] == [""]
    assert "name: evens" in fields["pipeline"][0]
    as_it_is = browser.submit("/jobs/new", fields)
    assert as_it_is.status_code == 409
    assert_error_next_to(as_it_is.text, "pipeline", "is an output of job &#39;ticks&#39;")
    fields["pipeline"] = [fields["pipeline"][0].replace("/tmp/out/ticks/", "/tmp/out/ticks-copy/")]
    created = browser.submit("/jobs/new", fields)
    assert created.status_code == 303, created.text
    copy = browser.stage.api.get("/api/v1/jobs/ticks-copy").json()
    original = browser.stage.api.get("/api/v1/jobs/ticks").json()
    original["spec"]["pipeline"]["outputs"][0]["path"] = "/tmp/out/ticks-copy/evens"
    assert copy["spec"] == original["spec"]


def test_edit_as_yaml_shows_errors_by_line_and_saves_a_good_manifest(browser: Browser) -> None:
    page = browser.page("/jobs/ticks/yaml")
    assert page.status_code == 200
    assert '<label for="manifest">Manifest (YAML)</label>' in page.text
    text = form_of(page)["manifest"][0]
    assert "resourceVersion:" in text

    broken = browser.submit("/jobs/ticks/yaml", {"manifest": text + "  oops: [\n"})
    assert broken.status_code == 422
    assert_error_next_to(broken.text, "manifest", "Line ")
    assert form_of(broken)["manifest"][0] == text + "  oops: [\n"

    bad_driver = text.replace("driver: small", "driver: xlarge")
    refused = browser.submit("/jobs/ticks/yaml", {"manifest": bad_driver})
    assert refused.status_code == 422
    line = bad_driver.splitlines().index("    driver: xlarge") + 1
    assert_error_next_to(refused.text, "manifest", f">Line {line}</a> <code>spec.instance.driver")

    good = text.replace("name: ticks", "name: ticks\n  description: From YAML", 1)
    saved = browser.submit("/jobs/ticks/yaml", {"manifest": good})
    assert saved.status_code == 303, saved.text
    job = browser.stage.api.get("/api/v1/jobs/ticks").json()
    assert job["metadata"]["description"] == "From YAML"

    stale = browser.submit("/jobs/ticks/yaml", {"manifest": text})
    assert stale.status_code == 409
    assert "was changed by someone else" in stale.text


def test_new_job_from_yaml_and_from_the_form_as_yaml(browser: Browser) -> None:
    fields = new_job_fields(browser, name="yaml-web")
    as_yaml = browser.submit("/jobs/new/yaml", {**fields, "edit_as": "yaml"})
    assert as_yaml.status_code == 200
    text = form_of(as_yaml)["manifest"][0]
    assert "name: yaml-web" in text
    assert browser.stage.api.get("/api/v1/jobs/yaml-web").status_code == 404

    created = browser.submit("/jobs/new/yaml", {"manifest": text})
    assert created.status_code == 303, created.text
    job = browser.stage.api.get("/api/v1/jobs/yaml-web").json()
    assert job["metadata"]["tags"] == {"team": "payments", "tier": "gold"}

    again = browser.submit("/jobs/new/yaml", {"manifest": text})
    assert again.status_code == 409
    assert_error_next_to(again.text, "manifest", "already exists")
    assert browser.page("/jobs/new/yaml").status_code == 200


@pytest.mark.parametrize(
    "path", ["/jobs/new", "/jobs/ticks/configure", "/jobs/new/yaml", "/jobs/ticks/yaml"]
)
def test_changes_without_the_csrf_token_are_refused(browser: Browser, path: str) -> None:
    fields = form_of(browser.page("/jobs/ticks/configure"))
    refused = browser.client.post(path, data={**fields, "csrf": "forged"})
    assert refused.status_code == 403
    assert browser.client.post(path, data=fields).status_code == 403
    assert browser.stage.api.get("/api/v1/jobs/ticks").json()["metadata"]["resourceVersion"] == "1"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/jobs/new"),
        ("GET", "/jobs/new?from=ticks"),
        ("GET", "/jobs/ticks/configure"),
        ("GET", "/jobs/new/yaml"),
        ("GET", "/jobs/ticks/yaml"),
        ("POST", "/jobs/new"),
        ("POST", "/jobs/validate-pipeline"),
    ],
)
def test_the_unauthenticated_are_sent_to_sign_in(
    anonymous_web: httpx.Client, method: str, path: str
) -> None:
    response = anonymous_web.request(method, path)
    assert response.status_code == 303
    assert response.headers["location"].startswith("/signin?next=")


def test_the_form_reads_its_pipeline_once_per_answer_however_many_errors(
    browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = with_bad_inputs(120)
    fields = new_job_fields(browser, name="many-errors", pipeline=pipeline)
    readings = CountedReadings(monkeypatch)
    refused = browser.submit("/jobs/new", fields)
    assert refused.status_code == 422
    assert readings.count <= 2  # read into the manifest, then for the lines of its errors
    line = pipeline.splitlines().index("    format: ratez") + 1
    assert f'data-goto-line="{line}" data-target="pipeline">Line {line}</a>' in refused.text


def test_yaml_is_read_once_per_answer_however_many_errors(
    browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = pipeline_manifest("many-errors")
    manifest["spec"]["pipeline"]["inputs"] += [
        {"name": f"extra{i}", "format": "ratez"} for i in range(120)
    ]
    text = yaml.safe_dump(manifest, sort_keys=False)
    readings = CountedReadings(monkeypatch)
    refused = browser.submit("/jobs/new/yaml", {"manifest": text})
    assert refused.status_code == 422
    assert readings.count == 1
    line = text.splitlines().index("    - name: extra0") + 2
    assert f'data-goto-line="{line}"' in refused.text
