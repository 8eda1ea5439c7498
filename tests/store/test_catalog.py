"""Node types and resource bundles: the names a job's spec refers to."""

from __future__ import annotations

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.store import NodeTypeRecord, Store


def test_node_types_are_found_by_name(store: Store) -> None:
    with store.transaction() as repos:
        assert repos.node_types.get("medium") == NodeTypeRecord("medium", 2, 4096)
        assert repos.node_types.find("huge") is None
        with pytest.raises(NotFound, match="node type 'huge'"):
            repos.node_types.get("huge")


def test_bundles_are_added_listed_by_name_and_checked(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        added = repos.bundles.add("payments", clock.now())
        repos.bundles.add("analytics", clock.now())
    with store.transaction() as repos:
        assert [bundle.name for bundle in repos.bundles.list()] == [
            "analytics",
            "default",
            "payments",
        ]
        assert added in repos.bundles.list()
        assert repos.bundles.exists("payments")
        assert not repos.bundles.exists("search")


def test_a_taken_bundle_name_is_refused(store: Store, clock: FakeClock) -> None:
    with (
        pytest.raises(AlreadyExists, match="resource bundle 'default'"),
        store.transaction() as repos,
    ):
        repos.bundles.add("default", clock.now())
