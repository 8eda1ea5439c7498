"""``spec.instance.standby``: where a standby driver can be kept (each refusal names the field),
what it adds to a bundle's quota, and that the supervisor reads it off the spec."""

from __future__ import annotations

import pytest

from streamjobs.domain.quotas import NodeSize, application_demand
from streamjobs.supervisor.terms import ApplicationTerms
from tests.unit.manifests import assert_error, changed, parse, pipeline_manifest, python_manifest

STANDBY = "spec.instance.standby"


def test_a_streaming_pipeline_keeps_a_standby_in_single_node_and_client_mode() -> None:
    for instance in (
        {"standby": True},
        {"deployment": "standard", "deployMode": "client", "standby": True},
    ):
        job = parse(changed(pipeline_manifest(), ("spec.instance", instance)))
        assert job.spec.instance.standby
    assert not parse(pipeline_manifest()).spec.instance.standby


def test_a_program_cannot_keep_a_standby() -> None:
    manifest = changed(python_manifest(), ("spec.instance", {"standby": True}))
    assert_error(manifest, STANDBY, "a standby driver is for pipelines")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("spec.pipeline.batchMode", True),
        ("spec.pipeline.streaming", {"triggerMode": "AvailableNow"}),
        ("spec.pipeline.streaming", {"triggerMode": "Once"}),
    ],
)
def test_a_batch_or_finite_run_cannot_keep_a_standby(path: str, value: object) -> None:
    manifest = changed(pipeline_manifest(), ("spec.instance", {"standby": True}), (path, value))
    assert_error(manifest, STANDBY, "nothing to take over")


def test_a_cluster_mode_driver_cannot_keep_a_standby() -> None:
    instance = {"deployment": "standard", "deployMode": "cluster", "standby": True}
    manifest = changed(pipeline_manifest(), ("spec.instance", instance))
    assert_error(manifest, STANDBY, "use deployMode client")


def test_standby_must_be_a_boolean() -> None:
    manifest = changed(pipeline_manifest(), ("spec.instance", {"standby": "sometimes"}))
    assert_error(manifest, STANDBY, "boolean")


def test_the_quota_counts_the_standby_driver() -> None:
    sizes = {"small": NodeSize(1, 1024), "medium": NodeSize(2, 2048)}
    alone = application_demand(driver="small", executor="medium", executors=2, node_types=sizes)
    held = application_demand(
        driver="small", executor="medium", executors=2, node_types=sizes, standby=True
    )
    assert (held.cores - alone.cores, held.memory_mb - alone.memory_mb) == (1, 1024)
    assert held.applications == alone.applications == 1


def test_the_supervisor_reads_standby_off_a_pipelines_spec() -> None:
    manifest = changed(pipeline_manifest(), ("spec.instance", {"standby": True}))
    spec = parse(manifest).model_dump(by_alias=True, mode="json")
    assert ApplicationTerms.of(spec, version=1).standby
    assert not ApplicationTerms.of(
        parse(pipeline_manifest()).model_dump(by_alias=True, mode="json"), version=1
    ).standby
