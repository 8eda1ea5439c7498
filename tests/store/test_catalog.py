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


def test_a_new_bundle_has_no_data_roots_set_and_no_spark_exceptions(
    store: Store, clock: FakeClock
) -> None:
    with store.transaction() as repos:
        repos.bundles.add("payments", clock.now())
    with store.transaction() as repos:
        for name in ("default", "payments"):
            bundle = repos.bundles.get(name)
            assert (bundle.data_roots, bundle.spark_conf_allowed, bundle.spark_conf_refused) == (
                None,
                (),
                (),
            )


def test_a_bundle_keeps_its_data_roots_and_spark_policy(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        added = repos.bundles.add(
            "payments",
            clock.now(),
            data_roots=["file:///data/payments", "s3a://lake/payments"],
            spark_conf_allowed=["spark.jars.repositories"],
            spark_conf_refused=["spark.sql.catalog.*"],
        )
    with store.transaction() as repos:
        assert repos.bundles.get("payments") == added
        assert added.data_roots == ("file:///data/payments", "s3a://lake/payments")
        assert added.spark_conf_allowed == ("spark.jars.repositories",)
        assert added.spark_conf_refused == ("spark.sql.catalog.*",)


def test_changing_the_policy_moves_the_version_and_keeps_what_is_not_given(
    store: Store, clock: FakeClock
) -> None:
    with store.transaction() as repos:
        repos.bundles.add("payments", clock.now(), data_roots=["file:///data/a"])
        repos.bundles.update(
            "payments",
            description="Payments",
            quota=Quota(max_cores=4),
            spark_conf_refused=["spark.sql.*"],
            expected_version=1,
        )
        repos.bundles.set_policy(
            "payments",
            data_roots=[],
            spark_conf_allowed=["spark.jars.repositories"],
            spark_conf_refused=None,
            expected_version=2,
        )
    with store.transaction() as repos:
        bundle = repos.bundles.get("payments")
    assert (bundle.description, bundle.quota, bundle.version) == ("Payments", Quota(max_cores=4), 3)
    assert bundle.data_roots == ()
    assert (bundle.spark_conf_allowed, bundle.spark_conf_refused) == (
        ("spark.jars.repositories",),
        ("spark.sql.*",),
    )


def test_a_stale_policy_change_writes_nothing(store: Store, clock: FakeClock) -> None:
    with store.transaction() as repos:
        repos.bundles.add("payments", clock.now(), data_roots=["file:///data/a"])
        repos.bundles.bump("payments")
    for stale in (
        lambda repos: repos.bundles.set_policy(
            "payments",
            data_roots=["file:///elsewhere"],
            spark_conf_allowed=None,
            spark_conf_refused=None,
            expected_version=1,
        ),
        lambda repos: repos.bundles.update(
            "payments",
            description=None,
            quota=Quota(),
            data_roots=["file:///elsewhere"],
            expected_version=1,
        ),
    ):
        with (
            pytest.raises(Conflict, match="changed by someone else"),
            store.transaction() as repos,
        ):
            stale(repos)
    with store.transaction() as repos:
        kept = repos.bundles.get("payments")
    assert (kept.data_roots, kept.version) == (("file:///data/a",), 2)


def test_data_roots_are_seeded_only_into_a_bundle_that_never_had_any(
    store: Store, clock: FakeClock
) -> None:
    with store.transaction() as repos:
        repos.bundles.add("emptied", clock.now(), data_roots=[])
        assert repos.bundles.seed_data_roots("default", ["file:///tmp/streamjobs"])
        assert not repos.bundles.seed_data_roots("default", ["file:///other"])
        assert not repos.bundles.seed_data_roots("emptied", ["file:///other"])
        assert not repos.bundles.seed_data_roots("missing", ["file:///other"])
    with store.transaction() as repos:
        default, emptied = repos.bundles.get("default"), repos.bundles.get("emptied")
    assert (default.data_roots, default.version) == (("file:///tmp/streamjobs",), 2)
    assert (emptied.data_roots, emptied.version) == ((), 1)
