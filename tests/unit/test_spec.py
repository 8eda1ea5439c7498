"""Every manifest rule, part by part (``test_spec_*.py``): here the document as a whole, error
paths and metadata."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.spec import (
    parse_manifest,
)
from tests.unit.manifests import (
    DELETE,
    INPUT,
    OUTPUT,
    PIPELINE,
    STEP,
    assert_error,
    broken,
    changed,
    errors_of,
    jvm_manifest,
    parse,
    pipeline_manifest,
    python_manifest,
)


class TestValidManifests:
    @pytest.mark.parametrize("manifest", [pipeline_manifest(), python_manifest(), jvm_manifest()])
    def test_minimal_manifests_parse(self, manifest: dict[str, Any]) -> None:
        job = parse(manifest)
        assert job.name == manifest["metadata"]["name"]

    def test_snake_case_keys_are_accepted_too(self) -> None:
        application = {
            "type": "jvm",
            "main_class": "com.example.Job",
            "main_application_file": "app.jar",
        }
        manifest = changed(jvm_manifest(), ("spec.application", application))
        assert parse(manifest).spec.application.main_class == "com.example.Job"

    def test_a_mapping_that_is_not_a_dict_is_accepted(self) -> None:
        assert parse(MappingProxyType(pipeline_manifest())).name == "ticks"


class TestDocument:
    @pytest.mark.parametrize("document", [[], "text", None, 3])
    def test_a_document_that_is_not_a_mapping_is_an_error_at_the_root(self, document: Any) -> None:
        assert_error(document, "", "must be a mapping of keys to values")

    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(PIPELINE, [("apiVersion", "v1")], "apiVersion", "'streamjobs.io/v1'", "api"),
            broken(PIPELINE, [("kind", "Job")], "kind", "must be 'StreamingJob'", "kind"),
            broken(PIPELINE, [("metadata", DELETE)], "metadata", "is required", "no-metadata"),
            broken(PIPELINE, [("spec", DELETE)], "spec", "is required", "no-spec"),
            broken(PIPELINE, [("spec", [])], "spec", "must be a mapping", "spec-list"),
            broken(PIPELINE, [("specs", {})], "specs", "is not a field here", "unknown-key"),
        ],
    )
    def test_top_level_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    def test_every_error_is_reported_at_once(self) -> None:
        manifest = changed(
            PIPELINE,
            ("metadata.name", "bad/name"),
            ("spec.restartPolicy.onFailureRetries", -1),
            ("spec.pipeline.explain", "maybe"),
        )
        paths = {error.path for error in errors_of(manifest)}
        assert paths == {
            "metadata.name",
            "spec.restartPolicy.onFailureRetries",
            "spec.pipeline.explain",
        }

    def test_every_cross_field_error_is_reported_at_once(self) -> None:
        manifest = changed(
            PIPELINE,
            ("spec.instance.executors", 2),
            (f"{STEP}.sql", "SELECT * FROM ghost"),
            (f"{OUTPUT}.name", "nowhere"),
        )
        paths = [error.path for error in errors_of(manifest)]
        assert sorted(paths) == sorted(["spec.instance.executors", f"{STEP}.sql", f"{OUTPUT}.name"])

    def test_source_prefixes_the_detail(self) -> None:
        with pytest.raises(InvalidInput) as caught:
            parse_manifest(changed(PIPELINE, ("kind", "Job")), source="jobs/ticks.yaml")
        assert caught.value.source == "jobs/ticks.yaml"
        assert caught.value.detail.startswith("jobs/ticks.yaml: kind: must be")


class TestErrorPaths:
    def test_list_items_are_indexed_and_aliases_are_camel_case(self) -> None:
        manifest = changed(PIPELINE, (f"{OUTPUT}.outputMode", "sometimes"))
        assert_error(manifest, f"{OUTPUT}.outputMode", "must be 'append', 'update' or 'complete'")

    def test_keys_that_are_not_plain_are_quoted(self) -> None:
        manifest = changed(PIPELINE, ("spec.configuration.sparkConf", {"spark.x": [1]}))
        assert_error(manifest, 'spec.configuration.sparkConf["spark.x"]', "must be a valid string")

    def test_union_member_tags_are_dropped(self) -> None:
        manifest = changed(PIPELINE, (f"{INPUT}.options", {"a": [1, {"b": float("nan")}]}))
        assert_error(manifest, f"{INPUT}.options.a[1].b", "must be a finite number")

    def test_a_key_that_breaks_its_syntax_is_the_path(self) -> None:
        manifest = changed(PIPELINE, ("spec.configuration.env", {"1BAD": "x"}))
        assert_error(manifest, 'spec.configuration.env["1BAD"]', "environment variable name")

    def test_a_snake_case_key_keeps_its_spelling_in_the_path(self) -> None:
        manifest = changed(PIPELINE, ("spec.pipeline.show_preview_lines", -1))
        assert_error(manifest, "spec.pipeline.show_preview_lines", "greater than or equal to 0")

    def test_messages_have_no_pydantic_boilerplate(self) -> None:
        manifest = changed(PIPELINE, ("metadata.name", "a/b"), ("spec.pipeline.explain", []))
        for error in errors_of(manifest):
            assert not error.message.startswith(("Value error", "Input should"))
            assert "pydantic" not in error.message

    def test_duplicate_errors_are_reported_once(self) -> None:
        errors = errors_of(changed(PIPELINE, (f"{INPUT}.options", {"a": {1, 2}})))
        assert len(errors) == len(set(errors))

    def test_every_error_is_a_field_error(self) -> None:
        for error in errors_of(changed(PIPELINE, ("spec.instance", {"deployment": "x"}))):
            assert isinstance(error, FieldError)


class TestMetadata:
    @pytest.mark.parametrize(
        "name", ["a", "orders to lake", "v1.2_final-job", "x" * 255, "...", "Orders.2024"]
    )
    def test_valid_names(self, name: str) -> None:
        assert parse(changed(PIPELINE, ("metadata.name", name))).name == name

    @pytest.mark.parametrize(
        "name", ["", "bad/name", " leading", "trailing ", "x" * 256, "tab\tname", ".", "..", "é"]
    )
    def test_invalid_names(self, name: str) -> None:
        manifest = changed(PIPELINE, ("metadata.name", name))
        assert_error(manifest, "metadata.name", "is not a valid job name: 1-255 letters, digits")

    def test_namespace_defaults_to_default(self) -> None:
        assert parse(PIPELINE).metadata.namespace == "default"

    @pytest.mark.parametrize("namespace", ["Upper", "under_score", "-dash", "x" * 64, ""])
    def test_namespace_must_be_a_dns_label(self, namespace: str) -> None:
        manifest = changed(PIPELINE, ("metadata.namespace", namespace))
        assert_error(manifest, "metadata.namespace", "is not a valid DNS label")

    @pytest.mark.parametrize(
        ("key", "value"),
        [
            ("team", "payments"),
            ("example.com/owner", "a-b_c.d"),
            ("a", ""),
            ("x" * 63, "y" * 63),
            ("sub.example.com/" + "x" * 63, "v"),
            ("a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 61 + "/k", "v"),
        ],
    )
    def test_valid_tags(self, key: str, value: str) -> None:
        assert parse(changed(PIPELINE, ("metadata.tags", {key: value}))).metadata.tags == {
            key: value
        }

    @pytest.mark.parametrize(
        ("key", "path"),
        [
            ("bad key", 'metadata.tags["bad key"]'),
            ("x" * 64, "metadata.tags." + "x" * 64),
            ("-start", 'metadata.tags["-start"]'),
            ("end-", "metadata.tags.end-"),
            ("Upper.Example.com/k", 'metadata.tags["Upper.Example.com/k"]'),
            ("a" * 254 + "/k", f'metadata.tags["{"a" * 254}/k"]'),
            ("/k", 'metadata.tags["/k"]'),
        ],
    )
    def test_invalid_tag_keys(self, key: str, path: str) -> None:
        assert_error(changed(PIPELINE, ("metadata.tags", {key: "v"})), path, "not a valid tag key")

    @pytest.mark.parametrize("value", ["-start", "end.", "x" * 64, "has space", "a/b"])
    def test_invalid_tag_values(self, value: str) -> None:
        manifest = changed(PIPELINE, ("metadata.tags", {"team": value}))
        assert_error(manifest, "metadata.tags.team", "is not a valid tag value")

    def test_tag_values_are_strings(self) -> None:
        manifest = changed(PIPELINE, ("metadata.tags", {"tier": 1}))
        assert_error(manifest, "metadata.tags.tier", "must be a valid string")
