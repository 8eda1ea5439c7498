"""No field pretends (issue 21): the API refuses, with a 422 at the field, what this server would
ignore (Kubernetes fields, a program's guarantee, stream-only settings of a batch job, a save mode
a streaming query cannot honour), and Run refuses a standard job while the server has no
standalone master (``STREAMJOBS_SPARK_MASTER``), naming the setting."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.problems import error_paths, problem_of
from tests.factories import DELETE, changed, jvm_manifest, pipeline_manifest, python_manifest

JOBS = "/api/v1/jobs"
OUTPUT = "spec.pipeline.outputs[0]"


def batch_manifest(name: str) -> dict[str, Any]:
    static = {"name": "ticks", "format": "parquet", "path": f"/tmp/out/{name}/in"}
    return changed(
        pipeline_manifest(name),
        ("spec.pipeline.batchMode", True),
        ("spec.pipeline.streaming", DELETE),
        ("spec.pipeline.inputs[0]", static),
    )


@pytest.mark.parametrize(
    ("make", "change", "path", "message"),
    [
        (
            python_manifest,
            ("spec.application.image", "registry.example.com/job:1.0"),
            "spec.application.image",
            "needs the Kubernetes deployment",
        ),
        (
            pipeline_manifest,
            ("spec.instance.volume", {"size": "10Gi", "mountPath": "/data"}),
            "spec.instance.volume",
            "needs the Kubernetes deployment",
        ),
        (
            jvm_manifest,
            ("spec.configuration.configMaps", ["common"]),
            "spec.configuration.configMaps",
            "needs the Kubernetes deployment",
        ),
        (
            python_manifest,
            ("spec.processing.guarantee", "EXACTLY_ONCE"),
            "spec.processing.guarantee",
            "python/jvm jobs manage their own delivery guarantee",
        ),
        (
            batch_manifest,
            ("spec.pipeline.streaming.triggerMode", "AvailableNow"),
            "spec.pipeline.streaming.triggerMode",
            "batchMode reads every input once",
        ),
        (
            pipeline_manifest,
            (f"{OUTPUT}.options", {"saveMode": "overwrite"}),
            f"{OUTPUT}.options.saveMode",
            "a streaming query appends",
        ),
        (
            batch_manifest,
            (f"{OUTPUT}.options", {"saveMode": "replace"}),
            f"{OUTPUT}.options.saveMode",
            "is not a save mode",
        ),
    ],
    ids=["image", "volume", "config-maps", "guarantee", "batch-trigger", "stream-save", "mode"],
)
def test_fields_this_server_would_ignore_are_refused(
    api: httpx.Client,
    job_name: str,
    make: Any,
    change: tuple[str, Any],
    path: str,
    message: str,
) -> None:
    answer = api.put(f"{JOBS}/{job_name}", json=changed(make(job_name), change))
    problem = problem_of(answer, 422)
    assert [error["path"] for error in problem["errors"]] == [path]
    assert message in problem["errors"][0]["message"]
    assert api.get(f"{JOBS}/{job_name}").status_code == 404


def test_a_batch_job_with_save_modes_is_accepted_and_has_no_checkpoint(
    api: httpx.Client, job_name: str
) -> None:
    manifest = changed(batch_manifest(job_name), (f"{OUTPUT}.options", {"saveMode": "overwrite"}))
    assert api.put(f"{JOBS}/{job_name}", json=manifest).status_code == 201
    template = api.get(f"{JOBS}/{job_name}/template").json()
    assert template["spec"]["pipeline"]["streaming"]["checkpointLocation"] is None
    assert template["spec"]["processing"]["guarantee"] == "AT_LEAST_ONCE"


def test_a_program_is_stored_without_a_guarantee_and_applies_back(
    api: httpx.Client, job_name: str
) -> None:
    assert api.put(f"{JOBS}/{job_name}", json=python_manifest(job_name)).status_code == 201
    printed = api.get(f"{JOBS}/{job_name}").json()
    assert printed["spec"]["processing"]["guarantee"] is None
    assert api.put(f"{JOBS}/{job_name}", json=printed).status_code == 200


def test_run_refuses_a_standard_job_without_a_standalone_master(
    api: httpx.Client, job_name: str
) -> None:
    manifest = changed(pipeline_manifest(job_name), ("spec.instance.deployment", "standard"))
    assert api.put(f"{JOBS}/{job_name}", json=manifest).status_code == 201
    answer = api.post(f"{JOBS}/{job_name}/run")
    assert error_paths(answer, 409) == ["spec.instance.deployment"]
    assert "STREAMJOBS_SPARK_MASTER=spark://host:port" in answer.json()["detail"]
    assert api.get(f"{JOBS}/{job_name}/applications").json()["items"] == []
