"""Where the job form shows an error: on its control, and in a YAML block on its line."""

from __future__ import annotations

from dataclasses import replace

import pytest

from streamjobs.domain.errors import FieldError
from streamjobs.web.job_form_controls import DEFAULT_PIPELINE
from streamjobs.web.job_form_errors import form_errors, place_error
from streamjobs.web.job_forms import JobForm, form_from_fields, manifest_from_form
from streamjobs.web.yaml_text import line_of, path_parts, read_mapping
from tests.unit.test_job_forms import every_field


class TestErrorPlacement:
    @pytest.mark.parametrize(
        ("path", "control"),
        [
            ("metadata.name", "name"),
            ("metadata.namespace", "namespace"),
            ("spec.bundle", "bundle"),
            ("spec.application.mainClass", "main_class"),
            ("spec.application.mainApplicationFile", "main_file"),
            ("spec.instance.executors", "executors"),
            ("spec.instance.volume.mountPath", ""),
            ("spec.application.image", "app_type"),
            ("spec.restartPolicy.onFailureRetries", "failure_retries"),
            ("spec.restartPolicy.onSubmissionFailureRetryInterval", "submission_retry_interval"),
            ("spec.processing.guarantee", "guarantee"),
            ("spec.configuration.javaOptions", "java_options"),
            ("spec.application.arguments[1]", "arguments_1"),
            ("spec.dependencies.packages[0]", "packages_0"),
            ("spec.dependencies.packages[5]", "packages"),
            ("spec.configuration.env", "env"),
            ("spec.processing.snapshotIntervalMillis", ""),
            ("metadata.resourceVersion", ""),
            ("", ""),
        ],
    )
    def test_a_path_goes_to_its_control(self, path: str, control: str) -> None:
        form = form_from_fields(every_field())
        assert place_error(FieldError(path, "is wrong"), form).control == control

    def test_a_mapping_error_goes_to_the_key_or_the_value_of_its_row(self) -> None:
        form = form_from_fields({"tags_key": ["ok", "bad key"], "tags_value": ["x y", "v"]})
        about_key = FieldError('metadata.tags["bad key"]', "'bad key' is not a valid tag key: ...")
        about_value = FieldError("metadata.tags.ok", "'x y' is not a valid tag value: ...")
        assert place_error(about_key, form).control == "tags_key_1"
        assert place_error(about_value, form).control == "tags_value_0"

    def test_a_pipeline_error_gets_the_line_of_its_field(self) -> None:
        form = replace(JobForm(), pipeline=DEFAULT_PIPELINE)
        error = place_error(FieldError("spec.pipeline.outputs[0].format", "no"), form)
        expected = DEFAULT_PIPELINE.splitlines().index("    format: parquet") + 1
        assert (error.control, error.line, error.path) == (
            "pipeline",
            expected,
            "spec.pipeline.outputs[0].format",
        )

    def test_service_errors_on_a_control_with_a_form_problem_are_left_out(self) -> None:
        form = replace(JobForm(), pipeline="[")
        built = manifest_from_form(form)
        errors = form_errors(
            built.problems,
            [FieldError("spec.pipeline", "is required"), FieldError("metadata.name", "empty")],
            form,
        )
        assert [e.control for e in errors.items] == ["pipeline", "name"]
        assert errors.placed == 2
        assert errors.summary == []


class TestYamlLines:
    TEXT = "a:\n  b:\n    - x: 1\n    - x: 2\n      y: {z: 3}\n"

    @pytest.mark.parametrize(
        ("path", "line"),
        [("a", 1), ("a.b", 2), ("a.b[1]", 4), ("a.b[1].y", 5), ("a.b[1].missing", 4), ("q", 1)],
    )
    def test_the_line_of_a_path(self, path: str, line: int) -> None:
        parts = path_parts(path)
        assert parts is not None
        assert line_of(self.TEXT, parts) == line

    def test_paths_with_quoted_keys(self) -> None:
        assert path_parts('spec.env["a.b"].c[2]') == ["spec", "env", "a.b", "c", 2]
        assert path_parts("line 3, column 4") is None

    def test_unreadable_text_has_no_lines(self) -> None:
        assert line_of("a: [", ["a"]) is None

    def test_several_documents_are_refused(self) -> None:
        block, problems = read_mapping("a: 1\n---\nb: 2\n", what="the pipeline")
        assert block is None
        assert problems[0].line == 2  # the second document starts at its ---
