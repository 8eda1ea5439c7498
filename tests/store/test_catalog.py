"""Node types and resource bundles: the names a job's spec refers to."""

from __future__ import annotations

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import AlreadyExists, Conflict, NotFound
from streamjobs.domain.quotas import Quota
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


def test_a_bundle_changes_only_from_the_version_it_is_at(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        assert repos.bundles.add("payments", clock.now()).version == 1
        repos.bundles.update("payments", description="Payments", quota=Quota(max_cores=4))
        repos.bundles.bump("payments", expected_version=2)
    with store.transaction() as repos:
        assert repos.bundles.get("payments").version == 3
    for stale in (
        lambda repos: repos.bundles.update(
            "payments", description="lost", quota=Quota(), expected_version=2
        ),
        lambda repos: repos.bundles.bump("payments", expected_version=1),
        lambda repos: repos.bundles.delete("payments", expected_version=2),
    ):
        with (
            pytest.raises(Conflict, match="changed by someone else"),
            store.transaction() as repos,
        ):
            stale(repos)
    with store.transaction() as repos:
        kept = repos.bundles.get("payments")
        assert (kept.description, kept.quota, kept.version) == ("Payments", Quota(max_cores=4), 3)
        repos.bundles.delete("payments", expected_version=3)
    for gone in (
        lambda repos: repos.bundles.update("payments", description=None, quota=Quota()),
        lambda repos: repos.bundles.bump("payments"),
        lambda repos: repos.bundles.delete("payments", expected_version=3),
    ):
        with (
            pytest.raises(NotFound, match="resource bundle 'payments'"),
            store.transaction() as repos,
        ):
            gone(repos)
