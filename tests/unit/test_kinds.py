"""Telling manifests apart by kind, and applying connections before the jobs that use them."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.connections import Connection
from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.kinds import Kind, in_apply_order, kind_of, parse_resource
from streamjobs.domain.spec import StreamingJob
from tests.factories import connection_manifest, pipeline_manifest


def test_each_kind_parses_with_its_own_rules() -> None:
    assert isinstance(parse_resource(pipeline_manifest("ticks")), StreamingJob)
    assert isinstance(parse_resource(connection_manifest("kafka-main")), Connection)
    with pytest.raises(InvalidInput) as refused:
        parse_resource(connection_manifest("Not_A_Label"), source="c.yaml")
    assert refused.value.detail.startswith("c.yaml: metadata.name: 'Not_A_Label'")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"apiVersion": "streamjobs.io/v1"},
            "kind: is required: Connection, NotificationDestination or StreamingJob",
        ),
        (
            {"kind": "Secret"},
            "kind: 'Secret' is not a kind streamjobs knows: use Connection, "
            "NotificationDestination or StreamingJob",
        ),
        ({"kind": ["Connection"]}, "kind: ['Connection'] is not a kind streamjobs knows"),
        ([], "a manifest must be a mapping of keys to values"),
    ],
)
def test_an_unknown_or_missing_kind_names_the_known_ones(document: Any, message: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        kind_of(document, source="file.yaml")
    assert refused.value.detail.startswith(f"file.yaml: {message}")


def test_connections_come_first_and_each_kind_keeps_its_order() -> None:
    items = [
        (Kind.STREAMING_JOB, "a"),
        (Kind.CONNECTION, "b"),
        (Kind.STREAMING_JOB, "c"),
        (Kind.CONNECTION, "d"),
    ]
    assert [name for _, name in in_apply_order(items, lambda item: item[0])] == [
        "b",
        "d",
        "a",
        "c",
    ]
    assert [kind.label for kind in Kind] == [
        "connection",
        "notificationdestination",
        "streamingjob",
    ]
