"""The job form's Instance section for standard jobs (issue 24): the deploy mode, dynamic allocation
and its minimum and initial executors, shown only where they apply, saved into the manifest,
shown again by Configure, kept through Edit as YAML, and their errors next to their controls."""

from __future__ import annotations

from typing import Any

import yaml

from tests.web.conftest import Browser
from tests.web.html import parse
from tests.web.test_job_form import assert_error_next_to, form_of, new_job_fields

STANDARD_CONTROLS = {
    "deploy_mode": "Deploy mode",
    "dynamic": "Dynamic allocation",
    "min_executors": "Minimum executors",
    "initial_executors": "Initial executors",
}


def dynamic_fields(browser: Browser, name: str, **changes: Any) -> dict[str, Any]:
    standard = {
        "deployment": "standard",
        "deploy_mode": "cluster",
        "dynamic": "true",
        "executors": "3",
        "min_executors": "1",
        "initial_executors": "2",
    }
    return new_job_fields(browser, name=name, **{**standard, **changes})


def instance_of(browser: Browser, name: str) -> dict[str, Any]:
    instance: dict[str, Any] = browser.stage.api.get(f"/api/v1/jobs/{name}").json()["spec"][
        "instance"
    ]
    return instance


def test_the_standard_controls_are_shown_for_standard_jobs_only(browser: Browser) -> None:
    page = parse(browser.page("/jobs/new"))
    for control, label in STANDARD_CONTROLS.items():
        assert page.text(f'label[for="{control}"]') == label
    [standard] = [
        block
        for block in page.all("div.fields[data-show-when]")
        if block.attr("data-show-when") == "deployment=standard"
    ]
    for control in STANDARD_CONTROLS:
        assert standard.has(f"#{control}"), control
    for control in ("min_executors", "initial_executors"):
        [field] = [f for f in standard.all("div.field[data-show-when]") if f.has(f"#{control}")]
        assert field.attr("data-show-when") == "dynamic=true"
    assert [o.attr("value") for o in page.all("#deploy_mode option")] == ["client", "cluster"]
    assert [o.attr("value") for o in page.all("#dynamic option")] == ["false", "true"]
    new = form_of(browser.page("/jobs/new"))
    assert (new["deploy_mode"], new["dynamic"]) == (["client"], ["false"])


def test_a_dynamic_cluster_mode_job_is_saved_and_shown_again(browser: Browser) -> None:
    created = browser.submit("/jobs/new", dynamic_fields(browser, "dynamic-web"))
    assert created.status_code == 303, created.text
    instance = instance_of(browser, "dynamic-web")
    assert instance["deployment"] == "standard"
    assert instance["deployMode"] == "cluster"
    assert instance["dynamic"] is True
    assert (instance["minExecutors"], instance["initialExecutors"], instance["executors"]) == (
        1,
        2,
        3,
    )

    shown = form_of(browser.page("/jobs/dynamic-web/configure"))
    assert shown["deploy_mode"] == ["cluster"]
    assert shown["dynamic"] == ["true"]
    assert (shown["min_executors"], shown["initial_executors"]) == (["1"], ["2"])

    saved = browser.submit("/jobs/dynamic-web/configure", {**shown, "initial_executors": ["3"]})
    assert saved.status_code == 303, saved.text
    instance = instance_of(browser, "dynamic-web")
    assert (instance["deployMode"], instance["minExecutors"], instance["initialExecutors"]) == (
        "cluster",
        1,
        3,
    )


def test_edit_as_yaml_keeps_the_standard_fields(browser: Browser) -> None:
    fields = dynamic_fields(browser, "dynamic-yaml")
    as_yaml = browser.submit("/jobs/new/yaml", {**fields, "edit_as": "yaml"})
    assert as_yaml.status_code == 200
    text = form_of(as_yaml)["manifest"][0]
    instance = yaml.safe_load(text)["spec"]["instance"]
    assert instance == {
        "deployment": "standard",
        "driver": "small",
        "executor": "medium",
        "executors": 3,
        "deployMode": "cluster",
        "dynamic": True,
        "minExecutors": 1,
        "initialExecutors": 2,
    }
    created = browser.submit("/jobs/new/yaml", {"manifest": text})
    assert created.status_code == 303, created.text

    page = browser.page("/jobs/dynamic-yaml/configure")
    back = browser.submit("/jobs/dynamic-yaml/yaml", {**form_of(page), "edit_as": ["yaml"]})
    assert back.status_code == 200
    again = yaml.safe_load(form_of(back)["manifest"][0])["spec"]["instance"]
    assert {key: again[key] for key in instance} == instance


def test_fields_that_do_not_apply_are_left_out(browser: Browser) -> None:
    fixed = dynamic_fields(browser, "fixed-web", dynamic="false")
    assert browser.submit("/jobs/new", fixed).status_code == 303
    instance = instance_of(browser, "fixed-web")
    assert instance["dynamic"] is False
    assert instance["minExecutors"] is None
    assert instance["initialExecutors"] is None
    assert instance["deployMode"] == "cluster"

    single = dynamic_fields(
        browser,
        "single-web",
        deployment="singleNode",
        app_type="python",  # a second pipeline would write the first one's output
        main_file="local:///app/job.py",
    )
    assert browser.submit("/jobs/new", single).status_code == 303
    instance = instance_of(browser, "single-web")
    assert instance["deployment"] == "singleNode"
    for key in ("deployMode", "dynamic", "minExecutors", "initialExecutors", "executors"):
        assert instance[key] is None, key


def test_bad_standard_fields_are_shown_next_to_their_controls(browser: Browser) -> None:
    fields = dynamic_fields(
        browser, "bad-dynamic-web", executors="2", min_executors="3", initial_executors="5"
    )
    refused = browser.submit("/jobs/new", fields)
    assert refused.status_code == 422
    assert_error_next_to(refused.text, "min_executors", "3 is more than spec.instance.executors")
    assert_error_next_to(refused.text, "initial_executors", "5 is not between minExecutors (3)")
    assert form_of(refused)["min_executors"] == ["3"]

    odd = dynamic_fields(browser, "odd-web", deploy_mode="server", dynamic="sometimes")
    refused = browser.submit("/jobs/new", odd)
    assert refused.status_code == 422
    assert_error_next_to(refused.text, "deploy_mode", "client")
    assert_error_next_to(refused.text, "dynamic", "boolean")

    not_a_number = dynamic_fields(browser, "nan-web", min_executors="a few")
    refused = browser.submit("/jobs/new", not_a_number)
    assert refused.status_code == 422
    assert_error_next_to(refused.text, "min_executors", "integer")
    for name in ("bad-dynamic-web", "odd-web", "nan-web"):
        assert browser.stage.api.get(f"/api/v1/jobs/{name}").status_code == 404
