"""The job form as data: form fields -> manifest -> form, what each type keeps (where errors go:
``test_job_form_errors.py``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from streamjobs.domain.spec import parse_manifest
from streamjobs.web.job_form_controls import DEFAULT_PIPELINE, Row
from streamjobs.web.job_forms import (
    ControlError,
    JobForm,
    duplicate_form,
    form_from_fields,
    form_from_manifest,
    manifest_from_form,
    pipeline_check_manifest,
)
from streamjobs.web.yaml_text import read_mapping
from tests.factories import changed, jvm_manifest, pipeline_manifest, python_manifest

ROOT = "file:///var/lib/streamjobs/checkpoints"


def every_field() -> dict[str, list[str]]:
    """A submitted Python job form with every control filled in."""
    return {
        "name": ["orders to lake"],
        "description": ["Orders into the lake"],
        "bundle": ["payments"],
        "namespace": ["team-a"],
        "run_as": ["svc-payments"],
        "app_type": ["python"],
        "main_class": ["com.example.Ignored"],
        "main_file": ["local:///app/job.py"],
        "pipeline": ["inputs: []"],
        "env_key": ["TZ", ""],
        "env_value": ["UTC", ""],
        "env_secrets_key": ["API_KEY"],
        "env_secrets_value": ["payments-api-key"],
        "spark_conf_key": ["spark.sql.shuffle.partitions"],
        "spark_conf_value": ["8"],
        "spark_conf_secrets_key": ["spark.ssl.keyPassword"],
        "spark_conf_secrets_value": ["ssl-password"],
        "arguments": ["--since", "yesterday", ""],
        "java_options": ["-XX:+UseG1GC"],
        "jars": ["file:///opt/jars/a.jar"],
        "files": ["file:///etc/app.conf"],
        "py_files": ["local:///app/lib.zip"],
        "packages": ["org.example:lib:1.0"],
        "deployment": ["standard"],
        "driver": ["medium"],
        "executor": ["large"],
        "executors": ["3"],
        "deploy_mode": ["cluster"],
        "dynamic": ["true"],
        "min_executors": ["1"],
        "initial_executors": ["2"],
        "restart_policy": ["OnFailure"],
        "submission_retries": ["2"],
        "submission_retry_interval": ["10"],
        "failure_retries": ["3"],
        "failure_retry_interval": ["30"],
        "guarantee": ["EXACTLY_ONCE"],
        "tags_key": ["team", "tier"],
        "tags_value": ["payments", "gold"],
    }


class TestFormToManifest:
    def test_every_field_group_lands_at_its_manifest_path(self) -> None:
        built = manifest_from_form(form_from_fields(every_field()))
        assert built.problems == ()
        assert built.manifest == {
            "apiVersion": "streamjobs.io/v1",
            "kind": "StreamingJob",
            "metadata": {
                "name": "orders to lake",
                "description": "Orders into the lake",
                "namespace": "team-a",
                "tags": {"team": "payments", "tier": "gold"},
            },
            "spec": {
                "bundle": "payments",
                "runAs": "svc-payments",
                "application": {
                    "type": "python",
                    "mainApplicationFile": "local:///app/job.py",
                    "arguments": ["--since", "yesterday"],
                },
                "configuration": {
                    "env": {"TZ": "UTC"},
                    "envSecrets": {"API_KEY": "payments-api-key"},
                    "sparkConf": {"spark.sql.shuffle.partitions": "8"},
                    "sparkConfSecrets": {"spark.ssl.keyPassword": "ssl-password"},
                    "javaOptions": "-XX:+UseG1GC",
                },
                "dependencies": {
                    "jars": ["file:///opt/jars/a.jar"],
                    "files": ["file:///etc/app.conf"],
                    "pyFiles": ["local:///app/lib.zip"],
                    "packages": ["org.example:lib:1.0"],
                },
                "instance": {
                    "deployment": "standard",
                    "driver": "medium",
                    "executor": "large",
                    "executors": 3,
                    "deployMode": "cluster",
                    "dynamic": True,
                    "minExecutors": 1,
                    "initialExecutors": 2,
                },
                "restartPolicy": {
                    "type": "OnFailure",
                    "onSubmissionFailureRetries": 2,
                    "onSubmissionFailureRetryInterval": 10,
                    "onFailureRetries": 3,
                    "onFailureRetryInterval": 30,
                },
                "processing": {},
            },
        }
        parse_manifest(built.manifest, checkpoint_root=ROOT)

    def test_the_default_new_form_makes_a_valid_pipeline_job_once_named(self) -> None:
        built = manifest_from_form(replace(JobForm(), name="ticks"))
        assert built.problems == ()
        job = parse_manifest(built.manifest, checkpoint_root=ROOT)
        assert job.spec.pipeline is not None
        assert [output.format for output in job.spec.pipeline.outputs] == ["parquet"]
        assert job.spec.pipeline.inputs[0].format == "rate"

    @pytest.mark.parametrize(
        ("app_type", "kept", "dropped"),
        [
            ("pipeline", {"pipeline"}, {"mainClass", "mainApplicationFile"}),
            ("python", {"mainApplicationFile"}, {"mainClass", "pipeline"}),
            ("jvm", {"mainClass", "mainApplicationFile"}, {"pipeline"}),
        ],
    )
    def test_fields_of_other_application_types_are_dropped(
        self, app_type: str, kept: set[str], dropped: set[str]
    ) -> None:
        fields = every_field() | {"app_type": [app_type], "pipeline": [DEFAULT_PIPELINE]}
        spec = manifest_from_form(form_from_fields(fields)).manifest["spec"]
        present = set(spec["application"]) | ({"pipeline"} if "pipeline" in spec else set())
        assert kept <= present
        assert not dropped & present

    def test_executors_only_for_standard_and_dropped_from_the_base_for_single_node(self) -> None:
        base = {
            "spec": {
                "instance": {
                    "executor": "medium",
                    "executors": 2,
                    "dynamic": True,
                    "deployMode": "cluster",
                    "minExecutors": 1,
                    "initialExecutors": 1,
                }
            }
        }
        fields = every_field() | {"deployment": ["singleNode"]}
        instance = manifest_from_form(form_from_fields(fields), base).manifest["spec"]["instance"]
        assert instance == {"deployment": "singleNode", "driver": "medium"}

    def test_kubernetes_fields_and_a_programs_guarantee_are_dropped_from_the_base(self) -> None:
        base = changed(
            python_manifest("app"),
            ("spec.application.image", "registry.example.com/app:1"),
            ("spec.configuration.configMaps", ["common"]),
            ("spec.instance.volume", {"size": "1Gi", "mountPath": "/data"}),
            ("spec.processing", {"guarantee": "AT_LEAST_ONCE", "suspendOnFailure": True}),
        )
        form = form_from_manifest(base)
        spec = manifest_from_form(form, base).manifest["spec"]
        assert "image" not in spec["application"]
        assert "configMaps" not in spec["configuration"]
        assert "volume" not in spec["instance"]
        assert spec["processing"] == {"suspendOnFailure": True}
        parse_manifest(manifest_from_form(form, base).manifest, checkpoint_root=ROOT)
        pipeline = manifest_from_form(replace(form, app_type="pipeline", guarantee="NONE"))
        assert pipeline.manifest["spec"]["processing"] == {"guarantee": "NONE"}

    def test_never_takes_no_retries(self) -> None:
        fields = every_field() | {"restart_policy": ["Never"]}
        restart = manifest_from_form(form_from_fields(fields)).manifest["spec"]["restartPolicy"]
        assert restart == {"type": "Never"}

    def test_always_takes_its_submission_retries_and_the_wait_before_a_restart(self) -> None:
        """Always bounds failures to start as OnFailure does; restarts after a run are
        unlimited, so the failure retries are not taken."""
        fields = every_field() | {"restart_policy": ["Always"]}
        restart = manifest_from_form(form_from_fields(fields)).manifest["spec"]["restartPolicy"]
        assert restart == {
            "type": "Always",
            "onSubmissionFailureRetries": 2,
            "onSubmissionFailureRetryInterval": 10,
            "onFailureRetryInterval": 30,
        }

    def test_what_the_form_does_not_show_is_kept_from_the_base(self) -> None:
        base = pipeline_manifest("ticks")
        base["spec"]["restartPolicy"] = {"type": "OnFailure", "backoff": "exponential"}
        base["spec"]["processing"] = {"snapshotIntervalMillis": 500, "suspendOnFailure": True}
        base["spec"]["instance"] = {"deployment": "standard", "dynamic": True, "minExecutors": 2}
        fields = every_field() | {
            "app_type": ["pipeline"],
            "pipeline": [DEFAULT_PIPELINE],
            "dynamic": ["false"],
        }
        spec = manifest_from_form(form_from_fields(fields), base).manifest["spec"]
        assert spec["restartPolicy"]["backoff"] == "exponential"
        assert spec["restartPolicy"]["onFailureRetries"] == 3
        assert spec["processing"] == {
            "snapshotIntervalMillis": 500,
            "suspendOnFailure": True,
            "guarantee": "EXACTLY_ONCE",
        }
        assert spec["instance"]["dynamic"] is False  # the form shows it: its choice wins
        assert "minExecutors" not in spec["instance"]  # without dynamic allocation, dropped

    def test_empty_optional_fields_are_left_out_so_their_defaults_apply(self) -> None:
        fields = {
            "name": ["ticks"],
            "app_type": ["jvm"],
            "main_class": ["com.example.Job"],
            "main_file": ["file:///opt/app.jar"],
            "description": [" "],
            "run_as": [""],
            "image": [""],
            "namespace": [""],
            "restart_policy": ["OnFailure"],
            "failure_retries": [""],
        }
        manifest = manifest_from_form(form_from_fields(fields)).manifest
        assert manifest["metadata"] == {"name": "ticks"}
        assert manifest["spec"]["application"] == {
            "type": "jvm",
            "mainClass": "com.example.Job",
            "mainApplicationFile": "file:///opt/app.jar",
        }
        assert "onFailureRetries" not in manifest["spec"]["restartPolicy"]
        assert "runAs" not in manifest["spec"]

    def test_numbers_that_are_not_numbers_are_passed_on_for_the_rules_to_refuse(self) -> None:
        fields = every_field() | {"executors": ["two"], "failure_retries": ["-1"]}
        spec = manifest_from_form(form_from_fields(fields)).manifest["spec"]
        assert spec["instance"]["executors"] == "two"
        assert spec["restartPolicy"]["onFailureRetries"] == -1

    def test_tag_rows_blank_rows_dropped_and_keys_checked(self) -> None:
        fields = {
            "tags_key": ["team", "", " tier ", "team", ""],
            "tags_value": ["payments", "", "gold", "again", "orphan"],
        }
        form = form_from_fields(fields)
        assert form.rows["tags"] == (
            Row(key="team", value="payments"),
            Row(key=" tier ", value="gold"),
            Row(key="team", value="again"),
            Row(key="", value="orphan"),
        )
        built = manifest_from_form(form)
        assert built.manifest["metadata"]["tags"] == {"team": "payments", "tier": "gold"}
        assert built.problems == (
            ControlError("tags_key_2", "'team' is given twice"),
            ControlError("tags_key_3", "give a key too"),
        )

    def test_pipeline_yaml_that_does_not_parse_is_a_problem_with_its_line(self) -> None:
        form = replace(JobForm(), name="ticks", pipeline="inputs:\n  - name: a\n   format: [\n")
        built = manifest_from_form(form)
        assert "pipeline" not in built.manifest["spec"]
        [problem] = built.problems
        assert problem.control == "pipeline"
        assert problem.line == 3

    def test_a_pipeline_that_is_not_a_mapping_is_a_problem(self) -> None:
        built = manifest_from_form(replace(JobForm(), pipeline="- just\n- a list\n"))
        assert built.problems == (
            ControlError(
                "pipeline",
                "the pipeline must be a mapping of keys to values",
                path="spec.pipeline",
                line=1,
            ),
        )

    def test_the_resource_version_goes_with_the_manifest(self) -> None:
        form = replace(JobForm(), name="ticks", resource_version="7")
        assert manifest_from_form(form).manifest["metadata"]["resourceVersion"] == "7"


class TestManifestToForm:
    def test_a_manifest_comes_back_as_the_form_that_makes_it(self) -> None:
        built = manifest_from_form(form_from_fields(every_field()))
        form = form_from_manifest(built.manifest)
        assert manifest_from_form(form).manifest == built.manifest
        assert form.rows["env"] == (Row(key="TZ", value="UTC"),)
        assert form.rows["arguments"] == (Row("--since"), Row("yesterday"))
        assert form.executors == "3"
        assert (form.deploy_mode, form.dynamic) == ("cluster", "true")
        assert (form.min_executors, form.initial_executors) == ("1", "2")
        assert form.pipeline == DEFAULT_PIPELINE

    def test_a_stored_pipeline_is_shown_as_yaml_without_empty_fields(self) -> None:
        stored = parse_manifest(pipeline_manifest("ticks"), checkpoint_root=ROOT).model_dump(
            by_alias=True, mode="json"
        )
        form = form_from_manifest({**stored, "metadata": {**stored["metadata"], "uid": "x"}})
        assert "null" not in form.pipeline
        assert "{}" not in form.pipeline
        block, problems = read_mapping(form.pipeline, what="the pipeline")
        assert problems == []
        assert block is not None
        assert block["inputs"][0] == {"name": "ticks", "format": "rate", "isStream": True}
        assert form.app_type == "pipeline"
        assert form.restart_policy == "Never"
        assert (form.submission_retries, form.failure_retry_interval) == ("1", "5")

    def test_multi_line_sql_is_shown_as_a_block(self) -> None:
        manifest = pipeline_manifest("ticks")
        sequence = manifest["spec"]["pipeline"]["steps"][0]["sequence"][0]
        sequence["sql"] = "SELECT *\nFROM ticks\nWHERE value > 1"
        form = form_from_manifest(manifest)
        assert "sql: |-\n" in form.pipeline
        assert manifest_from_form(form).manifest["spec"]["pipeline"] == manifest["spec"]["pipeline"]

    def test_a_form_from_the_api_document_keeps_its_version(self) -> None:
        document: dict[str, Any] = jvm_manifest("app")
        document["metadata"]["resourceVersion"] = "4"
        document["status"] = {"phase": "Idle"}
        form = form_from_manifest(document)
        assert (form.name, form.resource_version, form.app_type) == ("app", "4", "jvm")
        assert form.main_class == "com.example.Job"

    def test_duplicate_names_the_copy_and_drops_the_version(self) -> None:
        document = pipeline_manifest("ticks")
        document["metadata"]["resourceVersion"] = "3"
        form = duplicate_form(document, "ticks")
        assert (form.name, form.resource_version, form.duplicate_of) == ("ticks-copy", "", "ticks")


def test_the_pipeline_check_manifest_is_valid_around_a_valid_block() -> None:
    block, _ = read_mapping(DEFAULT_PIPELINE, what="the pipeline")
    assert block is not None
    manifest = pipeline_check_manifest(block, guarantee="EXACTLY_ONCE")
    job = parse_manifest(manifest, checkpoint_root=ROOT)
    assert job.spec.processing.guarantee == "EXACTLY_ONCE"
