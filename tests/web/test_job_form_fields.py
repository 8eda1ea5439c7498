"""The job form offers no field that would do nothing here (issue 21): no Kubernetes fields, the
processing guarantee only for pipelines, and a note beside the deployment choice when the server
has no standalone master. The live pipeline check refuses a batch job's stream-only settings.
Pages are read through ``tests.web.html``."""

from __future__ import annotations

from typing import Any

from streamjobs.domain.manifest import Deployment
from tests.factories import RATE_PIPELINE_YAML
from tests.web.conftest import Browser
from tests.web.html import parse
from tests.web.test_job_form import form_of

KUBERNETES_CONTROLS = ("image", "volume_size", "volume_mount", "config_maps", "config_maps_0")


def test_the_form_shows_no_kubernetes_field(browser: Browser) -> None:
    page = parse(browser.page("/jobs/new"))
    for control in KUBERNETES_CONTROLS:
        assert not page.has(f"#{control}"), control
        assert not page.has(f'[name="{control}"]'), control
    assert not page.has("#tab-config_maps")
    assert "Kubernetes" not in page.text("form[data-job-form]")
    assert "inside the image" not in page.text("form[data-job-form]")


def test_the_guarantee_is_shown_for_pipelines_only(browser: Browser) -> None:
    page = parse(browser.page("/jobs/new"))
    guarantee = page.one("#guarantee")
    field = page.all("div.field[data-show-when]")
    [shown_when] = [f.attr("data-show-when") for f in field if f.has("#guarantee")]
    assert shown_when == "app_type=pipeline"
    assert guarantee.attr("name") == "guarantee"
    [program_note] = [
        note
        for note in page.all("p.hint[data-show-when]")
        if note.attr("data-show-when") == "app_type=python,jvm"
    ]
    assert "manages its own delivery guarantee" in program_note.text()


def test_a_program_saved_from_the_form_has_no_guarantee(browser: Browser) -> None:
    fields = form_of(browser.page("/jobs/new"))
    fields.update(
        name="program-web",
        app_type="python",
        main_file="local:///app/job.py",
        guarantee="EXACTLY_ONCE",  # hidden for programs, as the browser still submits it
    )
    created = browser.submit("/jobs/new", fields)
    assert created.status_code == 303, created.text
    job = browser.stage.api.get("/api/v1/jobs/program-web").json()
    assert job["spec"]["processing"]["guarantee"] is None


def test_the_deployment_choice_explains_the_missing_standalone_master(browser: Browser) -> None:
    page = parse(browser.page("/jobs/new"))
    assert page.attr("aria-describedby", "#deployment") == "deployment-hint"
    note = page.text("#deployment-hint")
    assert "no standalone master configured" in note
    assert "STREAMJOBS_SPARK_MASTER=spark://host:port" in note
    assert [option.attr("value") for option in page.all("#deployment option")] == [
        "singleNode",
        "standard",
    ]


def test_with_a_standalone_master_the_note_is_gone(browser: Browser) -> None:
    launchers: Any = browser.stage.services.launchers
    launchers[Deployment.STANDARD] = browser.stage.launcher
    try:
        page = parse(browser.page("/jobs/new"))
    finally:
        del launchers[Deployment.STANDARD]
    assert not page.has("#deployment-hint")
    assert page.attr("aria-describedby", "#deployment") is None


def test_the_live_check_refuses_a_batch_jobs_stream_only_settings(browser: Browser) -> None:
    batch = RATE_PIPELINE_YAML.replace("inputs:", "batchMode: true\ninputs:").replace(
        "    format: rate\n", "    format: parquet\n    path: /tmp/streamjobs-web/in\n"
    )
    answer = browser.client.post(
        "/jobs/validate-pipeline", json={"yaml": batch}, headers={"X-CSRF-Token": browser.csrf}
    )
    assert answer.json() == {"errors": []}
    triggered = "streaming:\n  triggerMode: Once\n" + batch
    answer = browser.client.post(
        "/jobs/validate-pipeline", json={"yaml": triggered}, headers={"X-CSRF-Token": browser.csrf}
    )
    [error] = answer.json()["errors"]
    assert error["path"] == "spec.pipeline.streaming.triggerMode"
    assert error["line"] == 2
    assert "batchMode reads every input once" in error["message"]
