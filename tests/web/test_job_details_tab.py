"""A job's Details tab shows its whole spec: the pipeline with each step's SQL highlighted by the
server, the restart policy, processing, Spark settings and environment with secrets by name only
(and values whose names look secret masked), and the dependencies; a python job its program."""

from __future__ import annotations

from typing import Any

from tests.factories import pipeline_manifest, python_manifest
from tests.web.conftest import Browser
from tests.web.html import Node, parse

SECRET_VALUE = "hunter2-do-not-show"


def details(browser: Browser, job: str) -> Node:
    page = browser.page(f"/jobs/{job}?tab=details")
    assert page.status_code == 200, page.text
    assert SECRET_VALUE not in page.text
    return parse(page).one("#panel-details")


def facts(section: Node) -> dict[str, str]:
    """A section's definition list as {label: text}."""
    labels = section.texts("dl.facts > dt")
    values = section.texts("dl.facts > dd")
    return dict(zip(labels, values, strict=True))


def section(panel: Node, title_id: str) -> Node:
    (found,) = [node for node in panel.all("section") if node.attr("aria-labelledby") == title_id]
    return found


def settings(table: Node) -> dict[str, str]:
    return {row.text("th"): row.text("td") for row in table.all("tbody tr")}


def full_manifest() -> dict[str, Any]:
    manifest = pipeline_manifest(
        "full",
        restartPolicy={
            "type": "OnFailure",
            "onSubmissionFailureRetries": 2,
            "onSubmissionFailureRetryInterval": 10,
            "onFailureRetries": 3,
            "onFailureRetryInterval": 75,
            "backoff": "exponential",
        },
        processing={"suspendOnFailure": True, "snapshotIntervalMillis": 30000},
        configuration={
            "sparkConf": {
                "spark.sql.shuffle.partitions": "8",
                "spark.hadoop.fs.s3a.secret.key": SECRET_VALUE,
            },
            "sparkConfSecrets": {"spark.hadoop.fs.s3a.access.key": "s3-access"},
            "env": {"TZ": "UTC"},
            "envSecrets": {"API_KEY": "payments-api-key"},
            "javaOptions": "-XX:+UseG1GC",
        },
        dependencies={
            "packages": ["org.example:lib_2.13:1.0.0"],
            "pyFiles": ["file:///tmp/out/full/helpers.zip"],
        },
    )
    pipeline = manifest["spec"]["pipeline"]
    pipeline["inputs"][0]["options"] = {"rowsPerSecond": 5}
    pipeline["steps"][0]["sequence"][0]["sql"] = (
        "SELECT value, 'a <b>' AS label -- keep evens\nFROM ticks WHERE value % 2 = 0"
    )
    return manifest


def test_the_details_tab_shows_the_pipeline_with_its_sql_highlighted(browser: Browser) -> None:
    browser.stage.api.put("/api/v1/jobs/full", json=full_manifest()).raise_for_status()
    panel = details(browser, "full")
    pipeline = section(panel, "pipeline-title")
    shown = facts(pipeline)
    assert shown["Mode"] == "Streaming"
    assert shown["Trigger"] == "ProcessingTime, every 5 seconds"
    assert shown["Checkpoint location"].endswith("/default/full")
    inputs = pipeline.one("#pipeline-inputs tbody tr")
    assert inputs.text("th") == "ticks"
    assert "rowsPerSecond = 5" in inputs.text()
    outputs = pipeline.one("#pipeline-outputs tbody tr")
    assert outputs.text("th") == "evens"
    assert "/tmp/out/full/evens" in outputs.text()

    assert pipeline.texts(".step h4") == ["evens"]
    sql = pipeline.one("pre.sql code")
    assert (
        sql.text() == "SELECT value, 'a <b>' AS label -- keep evens FROM ticks WHERE value % 2 = 0"
    )
    assert sql.texts(".sql-keyword") == ["SELECT", "AS", "FROM", "WHERE"]
    assert sql.texts(".sql-string") == ["'a <b>'"]
    assert sql.texts(".sql-comment") == ["-- keep evens"]
    assert sql.texts(".sql-number") == ["2", "0"]
    assert not sql.has("b")  # the SQL's markup is text, not an element


def test_the_details_tab_shows_restart_policy_processing_settings_and_dependencies(
    browser: Browser,
) -> None:
    browser.stage.api.put("/api/v1/jobs/full", json=full_manifest()).raise_for_status()
    panel = details(browser, "full")
    assert facts(section(panel, "restart-title")) == {
        "Policy": "OnFailure",
        "On a failed submission": "2 retries, 10s apart",
        "On a failure while running": "3 retries, 1m 15s apart",
        "Backoff": "exponential",
        "Longest interval": "5m 00s",
    }
    assert facts(section(panel, "processing-title")) == {
        "Guarantee": "AT_LEAST_ONCE",
        "Snapshot interval": "30.0 s",
        "Suspend on failure": "yes",
        "Initial snapshot": "none",
    }
    configuration = section(panel, "configuration-title")
    spark = settings(configuration.one("#spark-settings"))
    assert spark["spark.sql.shuffle.partitions"] == "8"
    assert spark["spark.hadoop.fs.s3a.access.key"] == "secret s3-access"
    assert spark["spark.hadoop.fs.s3a.secret.key"].startswith("*****")
    assert settings(configuration.one("#environment")) == {
        "API_KEY": "secret payments-api-key",
        "TZ": "UTC",
    }
    assert "-XX:+UseG1GC" in configuration.text()
    assert facts(section(panel, "dependencies-title")) == {
        "Packages": "org.example:lib_2.13:1.0.0",
        "Jars": "none",
        "Files": "none",
        "Python files": "file:///tmp/out/full/helpers.zip",
    }


def test_a_python_job_shows_its_program_and_no_pipeline(browser: Browser) -> None:
    manifest = python_manifest("program")
    manifest["spec"]["application"]["arguments"] = ["--fast", "<yes>"]
    browser.stage.api.put("/api/v1/jobs/program", json=manifest).raise_for_status()
    panel = details(browser, "program")
    assert facts(section(panel, "application-title")) == {
        "Type": "python",
        "Main application file": "local:///app/job.py",
        "Arguments": "--fast <yes>",
    }
    assert not panel.has("#pipeline-title")
    assert facts(section(panel, "restart-title")) == {"Policy": "Never"}
    assert "Guarantee" not in facts(section(panel, "processing-title"))
    configuration = section(panel, "configuration-title")
    assert "No Spark settings of its own." in configuration.text()
    assert "No environment variables." in configuration.text()
