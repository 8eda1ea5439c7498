"""Manifest text into mappings: YAML streams, JSON, and where text problems are."""

from __future__ import annotations

import pytest
import yaml

from streamjobs.domain import documents
from streamjobs.domain.documents import MAX_DOCUMENT_VALUES
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.spec import load_documents
from tests.conftest import skip_or_fail


@pytest.fixture(autouse=True, params=["libyaml", "pure-python"])
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test reads with libyaml and with the pure-Python fallback, which must agree."""
    if request.param == "pure-python":
        monkeypatch.setattr(documents, "_Loader", documents._PythonLoader)
    elif not yaml.__with_libyaml__:
        skip_or_fail("PyYAML was built without libyaml")
    return str(request.param)


def problems(text: str) -> tuple[FieldError, ...]:
    with pytest.raises(InvalidInput) as caught:
        load_documents(text, source="jobs.yaml")
    assert caught.value.source == "jobs.yaml"
    return caught.value.errors


def test_reads_every_document_and_skips_empty_ones() -> None:
    text = "---\n# nothing here\n---\nname: a\n---\n---\nname: b\n...\n"
    assert load_documents(text, source="jobs.yaml") == [{"name": "a"}, {"name": "b"}]


def test_empty_text_holds_no_documents() -> None:
    assert load_documents("", source="jobs.yaml") == []


def test_a_syntax_error_is_located_by_line_and_column() -> None:
    text = "apiVersion: streamjobs.io/v1\nmetadata:\n  name: a\n   bad: indent\n"
    [error] = problems(text)
    assert error.path == "line 4, column 7"
    assert "mapping values are not allowed" in error.message  # libyaml: "in this context"


def test_an_unclosed_flow_sequence() -> None:
    [error] = problems("spec:\n  jars: [a, b\n")
    assert error.path.startswith("line ")
    assert "expected ',' or ']'" in error.message


def test_a_document_that_is_not_a_mapping_is_located() -> None:
    [error] = problems("name: a\n---\n- a\n- b\n")
    assert error == FieldError(
        "line 3, column 1",
        "a manifest must be a mapping of keys to values (apiVersion, kind, metadata, spec), "
        "not a list",
    )


def test_a_scalar_document_is_not_a_mapping() -> None:
    [error] = problems("just text\n")
    assert error.message.endswith("not a str")


def test_json_is_read() -> None:
    assert load_documents('{"kind": "StreamingJob"}', source="job.json") == [
        {"kind": "StreamingJob"}
    ]


def test_tab_indented_json_is_read() -> None:
    text = '{\n\t"kind": "StreamingJob",\n\t"spec": {\n\t\t"bundle": "x"\n\t}\n}\n'
    assert load_documents(text, source="job.json") == [
        {"kind": "StreamingJob", "spec": {"bundle": "x"}}
    ]


def test_a_json_error_is_located_by_line_and_column() -> None:
    [error] = problems('{\n\t"kind": "StreamingJob",\n\t"spec": [\n}\n')
    assert error == FieldError("line 4, column 1", "Expecting value")


def test_only_safe_yaml_is_read() -> None:
    [error] = problems("a: !!python/object/apply:os.system ['true']\n")
    assert error.path == "line 1, column 4"
    assert "could not determine a constructor" in error.message


def test_aliases_that_expand_too_far_are_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    [error] = problems("\n".join(lines) + "\n")
    assert f"more than {MAX_DOCUMENT_VALUES} values once its aliases are expanded" in error.message


def test_an_alias_inside_itself_is_refused() -> None:
    [error] = problems("a: &a [*a]\n")
    assert error == FieldError("line 1, column 4", "an alias refers to a value that contains it")


def test_modest_aliases_are_fine() -> None:
    text = "base: &conf {a: 1}\nfirst: *conf\nsecond: *conf\n"
    assert load_documents(text, source="jobs.yaml") == [
        {"base": {"a": 1}, "first": {"a": 1}, "second": {"a": 1}}
    ]


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    [error] = problems("[" * 100_000)
    assert error.message


def test_an_integer_too_long_to_convert_is_an_error_not_a_crash() -> None:
    [error] = problems("a: " + "9" * 5000 + "\n")
    assert "digits" in error.message


def test_a_character_yaml_refuses_is_located() -> None:
    [error] = problems("a: 1\nb: x\x1fy\n")
    assert error == FieldError("line 2, column 5", "character #x001f is not allowed in YAML")


def test_a_refused_character_after_other_than_ascii_text_is_located_by_characters() -> None:
    [error] = problems("é: 1\nb: ü\x1fy\n")  # libyaml counts its offset in bytes of UTF-8
    assert error == FieldError("line 2, column 5", "character #x001f is not allowed in YAML")


def test_a_document_of_too_many_values_is_refused_while_it_is_read() -> None:
    [error] = problems("jars: [" + "a, " * MAX_DOCUMENT_VALUES + "]\n")
    assert error.path.startswith("line 1, column ")
    assert f"more than {MAX_DOCUMENT_VALUES} values" in error.message
