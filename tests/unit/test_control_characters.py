"""The control-character rule of manifests (issue 20, item 1): which characters, which fields may
span lines, every string and key of a document walked, errors at the paths users write."""

from __future__ import annotations

import pytest

from streamjobs.domain.connections import parse_connection
from streamjobs.domain.control_characters import (
    ANY,
    JOB_MULTI_LINE,
    control_character_errors,
    text_error,
)
from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.secrets import value_errors
from streamjobs.domain.spec import parse_manifest
from tests.factories import changed, connection_manifest, pipeline_manifest


def _paths(document: object, multi_line: tuple[tuple[str, ...], ...] = ()) -> list[str]:
    return [error.path for error in control_character_errors(document, multi_line=multi_line)]


@pytest.mark.parametrize("code", [*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F, 0x80, 0x9F])
def test_every_control_character_but_the_tab_is_refused_in_a_single_line_field(code: int) -> None:
    assert _paths({"name": f"a{chr(code)}b"}) == ["name"]


@pytest.mark.parametrize("text", ["plain", "tab\there", "ünïcödé ✓", "\u00a0non-breaking", ""])
def test_text_without_control_characters_passes(text: str) -> None:
    assert _paths({"name": text}) == []


@pytest.mark.parametrize("code", [0x09, 0x0A, 0x0D])
def test_a_multi_line_field_takes_tabs_and_line_breaks(code: int) -> None:
    assert _paths({"sql": f"a{chr(code)}b"}, multi_line=(("sql",),)) == []


@pytest.mark.parametrize("code", [0x00, 0x0B, 0x0C, 0x1B, 0x7F])
def test_a_multi_line_field_refuses_the_other_control_characters(code: int) -> None:
    assert _paths({"sql": f"a{chr(code)}b"}, multi_line=(("sql",),)) == ["sql"]


def test_keys_are_checked_and_single_line_even_below_a_multi_line_field() -> None:
    document = {"options": {"a\nb": "x\ny", "c": {"d\x00": ["e\x00"]}}}

    paths = _paths(document, multi_line=(("options", ANY),))

    assert paths == ['options.c["d\\u0000"]', 'options.c["d\\u0000"][0]', 'options["a\\nb"]']


def test_the_message_names_the_character_and_where_it_is() -> None:
    [error] = control_character_errors({"name": "ab\x00"})

    assert "U+0000" in error.message
    assert "character 3" in error.message
    assert "only tabs" in error.message


def test_a_deep_document_is_walked_without_recursion() -> None:
    document: object = "bad\x00"
    for _ in range(50_000):
        document = [document]

    assert len(control_character_errors(document)) == 1


def test_the_errors_listed_are_bounded() -> None:
    document = {f"key{index}": "\x00" for index in range(1000)}

    assert 0 < len(control_character_errors(document)) <= 20


def test_parse_manifest_refuses_before_the_field_rules_naming_each_field() -> None:
    manifest = changed(
        pipeline_manifest("ticks"),
        ("spec.configuration.env", {"X": "1\x00"}),
        ("spec.pipeline.steps[0].sequence[0].sql", "SELECT 1\x00"),
    )

    with pytest.raises(InvalidInput) as refused:
        parse_manifest(manifest)

    assert [error.path for error in refused.value.errors] == [
        "spec.configuration.env.X",
        "spec.pipeline.steps[0].sequence[0].sql",
    ]


def test_parse_manifest_takes_line_breaks_where_a_field_spans_lines() -> None:
    manifest = changed(
        pipeline_manifest("ticks"),
        ("metadata.description", "one\r\ntwo"),
        ("spec.pipeline.steps[0].sequence[0].sql", "SELECT *\n\tFROM ticks"),
    )

    assert parse_manifest(manifest).metadata.description == "one\r\ntwo"


def test_every_multi_line_pattern_names_a_field_of_the_manifest() -> None:
    fields = {pattern[-1] if pattern[-1] != ANY else pattern[-2] for pattern in JOB_MULTI_LINE}

    assert fields == {"description", "sql", "schema", "options", "env", "javaOptions"}


def test_parse_connection_refuses_a_nul_in_an_option() -> None:
    manifest = changed(connection_manifest("kafka-main"), ("spec.options", {"a.b": "\x00"}))

    with pytest.raises(InvalidInput) as refused:
        parse_connection(manifest)

    assert [error.path for error in refused.value.errors] == ['spec.options["a.b"]']


def test_a_secret_value_may_span_lines_but_holds_no_nul() -> None:
    assert value_errors("line one\r\nline two\n") == []
    [error] = value_errors("pass\x00word")
    assert error.path == "value"
    assert "pass" not in error.message


def test_text_error_of_one_field() -> None:
    assert text_error("fine", path="body.description") is None
    error = text_error("a\nb", path="body.description")
    assert error is not None
    assert error.path == "body.description"
    assert text_error("a\nb", path="body.description", multi_line=True) is None
