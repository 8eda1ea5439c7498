"""Health rule states in the store: kept per (application, rule), replaced whole, pruned to the
rules an application still has, gone with the application; on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.health import RuleState
from streamjobs.store import Store
from streamjobs.store.health_states import HealthRuleStateRow
from tests.store.conftest import AddApplication, AddJob, CountRows


def test_states_are_kept_per_application_and_rule(
    store: Store, clock: FakeClock, add_job: AddJob, add_application: AddApplication
) -> None:
    add_job("orders")
    add_job("clicks")
    orders = add_application("orders")
    clicks = add_application("clicks")
    now = clock.now()
    holding = RuleState(holding_since=now, last_value=12.5, judged_at=now)
    firing = RuleState(
        holding_since=now - timedelta(seconds=30),
        firing_since=now,
        last_value=900.0,
        judged_at=now,
    )
    with store.transaction() as repos:
        assert repos.health.of(orders.id) == {}
        repos.health.put(orders.id, "backlog", holding)
        repos.health.put(orders.id, "stall", firing)
        repos.health.put(clicks.id, "backlog", RuleState(judged_at=now))
    with store.reading() as repos:
        assert repos.health.of(orders.id) == {"backlog": holding, "stall": firing}
        assert repos.health.firing(orders.id) == {"stall": firing}
        assert repos.health.of(clicks.id) == {"backlog": RuleState(judged_at=now)}


def test_put_replaces_the_whole_state(
    store: Store, clock: FakeClock, add_job: AddJob, add_application: AddApplication
) -> None:
    add_job("orders")
    orders = add_application("orders")
    now = clock.now()
    with store.transaction() as repos:
        repos.health.put(orders.id, "backlog", RuleState(now, now, 5.0, now))
    clock.advance(10)
    recovered = RuleState(last_value=None, judged_at=clock.now())
    with store.transaction() as repos:
        repos.health.put(orders.id, "backlog", recovered)
    with store.reading() as repos:
        assert repos.health.of(orders.id) == {"backlog": recovered}


def test_states_of_rules_gone_are_removed_and_go_with_their_application(
    store: Store,
    clock: FakeClock,
    add_job: AddJob,
    add_application: AddApplication,
    count_rows: CountRows,
) -> None:
    add_job("orders")
    orders = add_application("orders")
    now = clock.now()
    with store.transaction() as repos:
        for rule in ("a", "b", "c"):
            repos.health.put(orders.id, rule, RuleState(judged_at=now))
        repos.health.keep_only(orders.id, ["b"])
    with store.reading() as repos:
        assert set(repos.health.of(orders.id)) == {"b"}
    with store.transaction() as repos:
        repos.health.keep_only(orders.id, [])
    assert count_rows(HealthRuleStateRow) == 0


def test_a_write_that_is_rolled_back_leaves_nothing(
    store: Store, clock: FakeClock, add_job: AddJob, add_application: AddApplication
) -> None:
    add_job("orders")
    orders = add_application("orders")

    class Abandon(Exception):
        pass

    try:
        with store.transaction() as repos:
            repos.health.put(orders.id, "backlog", RuleState(judged_at=clock.now()))
            raise Abandon
    except Abandon:
        pass
    with store.reading() as repos:
        assert repos.health.of(orders.id) == {}
