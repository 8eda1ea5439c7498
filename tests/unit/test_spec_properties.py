"""Whatever a manifest holds, validation answers with InvalidInput or a job, never a crash."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.spark_sql import InvalidSqlError, views_read
from streamjobs.domain.spec import load_documents, parse_manifest, resolved_template
from tests.unit.manifests import jvm_manifest, pipeline_manifest, python_manifest

ROOT = "file:///tmp/sj"
PROPERTY_SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
Result = TypeVar("Result")

MANIFEST_WORDS = [
    "apiVersion", "kind", "metadata", "spec", "name", "namespace", "tags", "application", "type",
    "pipeline", "python", "jvm", "mainClass", "mainApplicationFile", "streaming", "triggerMode",
    "triggerDuration", "inputs", "steps", "sequence", "sql", "outputs", "format", "dataset", "path",
    "schema", "options", "keyColumns", "badRecords", "output", "instance", "deployment", "standard",
    "executor", "executors", "processing", "guarantee", "EXACTLY_ONCE", "kafka", "console", "jdbc",
    "rate", "parquet", "kafkajson", "Continuous", "Once", "10 seconds", "spark.x", "spark-internal",
    "streamjobs.io/v1", "StreamingJob", "SELECT * FROM ticks", "local:///app/job.py", "",
]  # fmt: skip
SQL_WORDS = [
    "SELECT", "*", "FROM", "ticks", "t", "(", ")", "'", ",", "WITH", "AS", ";", "JOIN", "window",
    "GROUP BY", "`", "--", "/*+", "*/", "UNION", "db.t",
]  # fmt: skip

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(MANIFEST_WORDS)
)
keys = st.sampled_from(MANIFEST_WORDS) | st.text(max_size=10) | st.integers(-2, 2)
json_like = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=5),
    max_leaves=25,
)
valid_manifests = st.sampled_from([pipeline_manifest, python_manifest, jvm_manifest]).map(
    lambda build: build()
)
sql_texts = st.text(max_size=80) | st.lists(st.sampled_from(SQL_WORDS), max_size=12).map(" ".join)


def outcome(call: Callable[[], Result]) -> Result | InvalidInput:
    """What ``call`` returns, or the InvalidInput it raises; any other exception fails the test."""
    try:
        return call()
    except InvalidInput as invalid:
        return invalid


def assert_well_formed(invalid: InvalidInput) -> None:
    assert invalid.errors
    for error in invalid.errors:
        assert isinstance(error.path, str)
        assert isinstance(error.message, str)
        assert error.message


def check_parse(document: Any) -> None:
    """Parsing gives a job whose template parses to itself, or a well-formed InvalidInput."""
    result = outcome(lambda: parse_manifest(document, checkpoint_root=ROOT))
    if isinstance(result, InvalidInput):
        assert_well_formed(result)
        return
    template = resolved_template(result, checkpoint_root=ROOT)
    reparsed = parse_manifest(json.loads(json.dumps(template, allow_nan=False)))
    assert resolved_template(reparsed, checkpoint_root=ROOT) == template


def places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value inside a JSON-like tree."""
    if isinstance(node, dict):
        children = list(node.items())
    elif isinstance(node, list):
        children = list(enumerate(node))
    else:
        children = []
    found = [path] if path else []
    for key, child in children:
        found += places(child, (*path, key))
    return found


def mutate(document: dict[str, Any], data: st.DataObject) -> None:
    """Remove one value of ``document``, replace it with anything, or add a sibling."""
    *parents, last = data.draw(st.sampled_from(places(document)))
    node: Any = document
    for part in parents:
        node = node[part]
    action = data.draw(st.sampled_from(["remove", "replace", "add"]))
    if action == "remove":
        del node[last]
    elif action == "replace":
        node[last] = data.draw(json_like)
    elif isinstance(node, dict):
        node[data.draw(keys)] = data.draw(json_like)
    else:
        node.insert(last, data.draw(json_like))


@PROPERTY_SETTINGS
@given(json_like)
def test_any_json_like_document(document: Any) -> None:
    check_parse(document)


@PROPERTY_SETTINGS
@given(st.dictionaries(st.sampled_from(["apiVersion", "kind", "metadata", "spec"]), json_like))
def test_any_values_under_the_top_level_keys(document: dict[str, Any]) -> None:
    check_parse(document)


@PROPERTY_SETTINGS
@given(valid_manifests, st.integers(min_value=1, max_value=3), st.data())
def test_valid_manifests_with_mutations(
    manifest: dict[str, Any], mutations: int, data: st.DataObject
) -> None:
    for _ in range(mutations):
        mutate(manifest, data)
    check_parse(manifest)


@PROPERTY_SETTINGS
@given(sql_texts)
def test_any_sql_text(sql: str) -> None:
    with contextlib.suppress(InvalidSqlError):
        views_read(sql)


@PROPERTY_SETTINGS
@given(
    st.text(max_size=200) | st.sampled_from(["a: [", "- x", "{", "a: *b", "\t- x", "a: &a [*a]"])
)
def test_any_text(text: str) -> None:
    result = outcome(lambda: load_documents(text, source="random.yaml"))
    if isinstance(result, InvalidInput):
        assert_well_formed(result)
    else:
        assert all(isinstance(document, dict) for document in result)
