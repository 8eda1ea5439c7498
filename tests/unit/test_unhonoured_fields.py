"""Fields this server cannot honour are refused, and Run checks the deployments it can launch."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.deployment_rules import STANDALONE_MASTER_SETTING, deployment_errors
from streamjobs.domain.spec import Deployment
from tests.unit.manifests import (
    assert_error,
    changed,
    errors_of,
    jvm_manifest,
    parse,
    pipeline_manifest,
    python_manifest,
)

KUBERNETES = "needs the Kubernetes deployment"


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (("spec.application.image", "registry.example.com/job:1.0"), "spec.application.image"),
        (("spec.instance.volume", {"size": "10Gi", "mountPath": "/data"}), "spec.instance.volume"),
        (("spec.configuration.configMaps", ["common"]), "spec.configuration.configMaps"),
    ],
)
@pytest.mark.parametrize("base", [pipeline_manifest(), python_manifest(), jvm_manifest()])
def test_kubernetes_fields_are_refused(
    base: dict[str, Any], change: tuple[str, Any], path: str
) -> None:
    assert_error(changed(base, change), path, KUBERNETES)


def test_empty_kubernetes_fields_are_no_fields() -> None:
    manifest = changed(
        python_manifest(),
        ("spec.application.image", None),
        ("spec.instance.volume", None),
        ("spec.configuration.configMaps", []),
    )
    assert parse(manifest).spec.application.image is None


@pytest.mark.parametrize("guarantee", ["NONE", "AT_LEAST_ONCE", "EXACTLY_ONCE"])
@pytest.mark.parametrize("base", [python_manifest(), jvm_manifest()])
def test_programs_manage_their_own_guarantee(base: dict[str, Any], guarantee: str) -> None:
    errors = errors_of(changed(base, ("spec.processing.guarantee", guarantee)))
    assert [error.path for error in errors] == ["spec.processing.guarantee"]
    assert "python/jvm jobs manage their own delivery guarantee" in errors[0].message


def test_a_program_has_no_guarantee_and_a_pipeline_at_least_once() -> None:
    assert parse(python_manifest()).spec.processing.guarantee is None
    assert parse(pipeline_manifest()).spec.processing.guarantee == "AT_LEAST_ONCE"


def test_a_program_stored_with_its_defaults_parses_again() -> None:
    job = parse(python_manifest())
    assert parse(job.model_dump(mode="json", by_alias=True)) == job


def test_standard_needs_a_standalone_master_at_run() -> None:
    standard = parse(changed(pipeline_manifest(), ("spec.instance.deployment", "standard")))
    [error] = deployment_errors(standard, {Deployment.SINGLE_NODE})
    assert error.path == "spec.instance.deployment"
    assert f"{STANDALONE_MASTER_SETTING}=spark://host:port" in error.message
    assert deployment_errors(standard, set(Deployment)) == []
    assert deployment_errors(parse(pipeline_manifest()), {Deployment.SINGLE_NODE}) == []
