"""The manifest's application rules (type, deployment, files, arguments) and streaming settings:
a manifest that breaks each, the exact path of the error and what it says."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.spec import (
    ApplicationType,
    TriggerMode,
)
from tests.unit.manifests import (
    DELETE,
    PIPELINE,
    STREAMING,
    assert_error,
    broken,
    changed,
    errors_of,
    jvm_manifest,
    parse,
    python_manifest,
)


class TestApplication:
    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(
                PIPELINE,
                [("spec.application.type", "scala")],
                "spec.application.type",
                "must be 'pipeline', 'python' or 'jvm'",
                "unknown-type",
            ),
            broken(
                PIPELINE,
                [("spec.application", {})],
                "spec.application.type",
                "is required",
                "no-type",
            ),
            broken(
                PIPELINE,
                [("spec.application", DELETE)],
                "spec.application",
                "is required",
                "no-application",
            ),
            broken(
                jvm_manifest(),
                [("spec.application.mainClass", DELETE)],
                "spec.application.mainClass",
                "a jvm application needs mainClass",
                "jvm-without-main-class",
            ),
            broken(
                python_manifest(),
                [("spec.application.mainClass", "com.example.Job")],
                "spec.application.mainClass",
                "mainClass is for jvm applications only, not python",
                "python-with-main-class",
            ),
            broken(
                PIPELINE,
                [("spec.application.mainClass", "com.example.Job")],
                "spec.application.mainClass",
                "mainClass is for jvm applications only, not pipeline",
                "pipeline-with-main-class",
            ),
            broken(
                jvm_manifest(),
                [("spec.application.mainClass", "com.example.1Job")],
                "spec.application.mainClass",
                "is not a valid Java class name",
                "main-class-syntax",
            ),
            broken(
                python_manifest(),
                [("spec.application.mainApplicationFile", DELETE)],
                "spec.application.mainApplicationFile",
                "a python application needs mainApplicationFile, e.g. local:///app/job.py",
                "python-without-file",
            ),
            broken(
                jvm_manifest(),
                [("spec.application.mainApplicationFile", DELETE)],
                "spec.application.mainApplicationFile",
                "a jvm application needs mainApplicationFile",
                "jvm-without-file",
            ),
            broken(
                PIPELINE,
                [("spec.application.mainApplicationFile", "local:///app/job.py")],
                "spec.application.mainApplicationFile",
                "a pipeline application has no mainApplicationFile",
                "pipeline-with-file",
            ),
            broken(
                python_manifest(),
                [("spec.application.mainApplicationFile", "spark-internal")],
                "spec.application.mainApplicationFile",
                "spark-internal is for jvm applications only",
                "python-spark-internal",
            ),
            broken(
                python_manifest(),
                [("spec.application.mainApplicationFile", "http://example.com/job.py")],
                "spec.application.mainApplicationFile",
                "other schemes such as http:// are not supported",
                "http-scheme",
            ),
            broken(
                jvm_manifest(),
                [("spec.application.mainApplicationFile", "s3a://bucket/app.jar")],
                "spec.application.mainApplicationFile",
                "is not a valid application file",
                "s3a-scheme",
            ),
            broken(
                python_manifest(),
                [("spec.application.image", "Not An Image")],
                "spec.application.image",
                "is not a valid container image: registry/name:tag",
                "image-syntax",
            ),
            broken(
                python_manifest(),
                [("spec.application.arguments", ["--n", 3])],
                "spec.application.arguments[1]",
                "must be a valid string",
                "argument-not-string",
            ),
            broken(
                PIPELINE,
                [("spec.pipeline", DELETE)],
                "spec.pipeline",
                "a pipeline application needs a pipeline block",
                "pipeline-without-block",
            ),
            broken(
                python_manifest(),
                [("spec.pipeline", PIPELINE["spec"]["pipeline"])],
                "spec.pipeline",
                "only pipeline applications have a pipeline block",
                "python-with-block",
            ),
        ],
    )
    def test_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    @pytest.mark.parametrize(
        "main_file",
        ["local:///app/job.py", "file:///opt/job.py", "jobs/job.py", "/opt/jobs/job.py"],
    )
    def test_python_file_locations(self, main_file: str) -> None:
        manifest = changed(python_manifest(), ("spec.application.mainApplicationFile", main_file))
        assert parse(manifest).spec.application.main_application_file == main_file

    def test_spark_internal_is_for_jvm(self) -> None:
        manifest = changed(
            jvm_manifest(), ("spec.application.mainApplicationFile", "spark-internal")
        )
        assert parse(manifest).spec.application.type is ApplicationType.JVM

    @pytest.mark.parametrize(
        "image",
        [
            "job",
            "library/python:3.11-slim",
            "registry.example.com:5000/team/orders-job:1.4.0",
            "ghcr.io/acme/job@sha256:" + "a" * 64,
        ],
    )
    def test_well_formed_images_are_refused_without_kubernetes(self, image: str) -> None:
        errors = errors_of(changed(python_manifest(), ("spec.application.image", image)))
        assert [error.path for error in errors] == ["spec.application.image"]
        assert "needs the Kubernetes deployment" in errors[0].message

    def test_arguments_default_to_empty(self) -> None:
        assert parse(python_manifest()).spec.application.arguments == []


class TestStreaming:
    @pytest.mark.parametrize("mode", [TriggerMode.CONTINUOUS, TriggerMode.REAL_TIME])
    def test_timed_triggers_need_a_duration(self, mode: TriggerMode) -> None:
        manifest = changed(PIPELINE, (STREAMING, {"triggerMode": str(mode)}))
        assert_error(
            manifest,
            f"{STREAMING}.triggerDuration",
            f"triggerMode {mode} needs a triggerDuration, e.g. '10 seconds'",
        )

    def test_processing_time_without_duration_runs_back_to_back(self) -> None:
        manifest = changed(PIPELINE, (STREAMING, {"triggerMode": "ProcessingTime"}))
        pipeline = parse(manifest).spec.pipeline
        assert pipeline is not None
        assert pipeline.streaming.trigger_duration is None

    def test_streaming_block_may_be_omitted(self) -> None:
        pipeline = parse(changed(PIPELINE, (STREAMING, DELETE))).spec.pipeline
        assert pipeline is not None
        assert pipeline.streaming.trigger_mode is TriggerMode.PROCESSING_TIME
        assert pipeline.streaming.trigger_duration is None

    @pytest.mark.parametrize("mode", [TriggerMode.ONCE, TriggerMode.AVAILABLE_NOW])
    def test_finite_triggers_take_no_duration(self, mode: TriggerMode) -> None:
        manifest = changed(PIPELINE, (f"{STREAMING}.triggerMode", str(mode)))
        assert_error(
            manifest, f"{STREAMING}.triggerDuration", f"triggerMode {mode} takes no triggerDuration"
        )

    @pytest.mark.parametrize("mode", [TriggerMode.ONCE, TriggerMode.AVAILABLE_NOW])
    def test_finite_triggers_without_duration_are_valid(self, mode: TriggerMode) -> None:
        manifest = changed(PIPELINE, (STREAMING, {"triggerMode": str(mode)}))
        assert parse(manifest).spec.pipeline is not None

    @pytest.mark.parametrize(
        "duration",
        ["10 seconds", "500 milliseconds", "1 minute", "1 hour 30 minutes", "interval 10 seconds"],
    )
    def test_valid_durations(self, duration: str) -> None:
        assert parse(changed(PIPELINE, (f"{STREAMING}.triggerDuration", duration)))

    @pytest.mark.parametrize(
        "duration", ["10", "ten seconds", "10 secs", "1.5 seconds", "-1 seconds", "10 Seconds"]
    )
    def test_invalid_durations(self, duration: str) -> None:
        manifest = changed(PIPELINE, (f"{STREAMING}.triggerDuration", duration))
        assert_error(manifest, f"{STREAMING}.triggerDuration", "is not a valid Spark interval")

    def test_unknown_trigger_mode(self) -> None:
        manifest = changed(PIPELINE, (f"{STREAMING}.triggerMode", "Sometimes"))
        assert_error(manifest, f"{STREAMING}.triggerMode", "must be 'ProcessingTime', 'Once'")

    def test_checkpoint_location_has_no_surrounding_whitespace(self) -> None:
        manifest = changed(PIPELINE, (f"{STREAMING}.checkpointLocation", " /tmp/cp"))
        assert_error(manifest, f"{STREAMING}.checkpointLocation", "is not a valid location")
