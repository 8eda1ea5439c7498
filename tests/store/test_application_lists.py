"""Lists of applications in the store: every filter, the search, pages, and each job's newest
application."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.states import AppState
from streamjobs.store import ApplicationRecord, Store
from tests.store.conftest import AddApplication, AddJob, change, finish


@pytest.fixture
def history(store: Store, add_application: AddApplication, clock: FakeClock) -> dict[str, str]:
    """Five applications of three jobs, one minute apart, by name to id."""
    added: list[ApplicationRecord] = []
    runs: list[tuple[str, dict[str, Any]]] = [
        ("alpha", {"tags": {"team": "payments", "app.kubernetes.io/tier": "gold"}}),
        ("beta", {"triggered_by": "supervisor", "tags": {"team": "search"}}),
        ("alpha", {"tags": {"team": "payments", "tier": ""}}),
        ("Gamma_1", {"triggered_by": "bob"}),
        ("beta", {}),
    ]
    for job_name, fields in runs:
        previous = next((a for a in reversed(added) if a.job_name == job_name), None)
        if previous is not None:
            finish(store, previous, clock)
        added.append(add_application(job_name, **fields))
        clock.advance(60)
    return {application.name: application.id for application in added}


def listed(store: Store, **filters: Any) -> tuple[list[str], int]:
    """The names ``list`` returns for ``filters``, and the total it gives for them."""
    with store.transaction() as repos:
        page, total = repos.applications.list(**filters)
        return [application.name for application in page], total


@pytest.mark.usefixtures("history")
@pytest.mark.parametrize(
    ("filters", "names"),
    [
        ({}, ["beta-2", "Gamma_1-1", "alpha-2", "beta-1", "alpha-1"]),
        ({"job_name": "alpha"}, ["alpha-2", "alpha-1"]),
        ({"states": [AppState.STARTING]}, ["beta-2", "Gamma_1-1", "alpha-2"]),
        ({"states": [AppState.FAILED, AppState.RUNNING]}, ["beta-1", "alpha-1"]),
        ({"states": []}, []),
        ({"triggered_by": "supervisor"}, ["beta-1"]),
        ({"tag": ("team", None)}, ["alpha-2", "beta-1", "alpha-1"]),
        ({"tag": ("team", "payments")}, ["alpha-2", "alpha-1"]),
        ({"tag": ("app.kubernetes.io/tier", "gold")}, ["alpha-1"]),
        ({"tag": ("tier", "")}, ["alpha-2"]),
        ({"tag": ("tier", None)}, ["alpha-2"]),
        ({"tag": ("owner", None)}, []),
        ({"tag": ('te"am', None)}, []),
        ({"search": "GAMMA"}, ["Gamma_1-1"]),
        ({"search": "a-2"}, ["beta-2", "alpha-2"]),
        ({"search": "_"}, ["Gamma_1-1"]),
        ({"search": "%"}, []),
        ({"search": "/"}, []),
        ({"bundles": []}, []),
        ({"bundles": ["default"], "job_name": "beta"}, ["beta-2", "beta-1"]),
        ({"job_name": "alpha", "tag": ("tier", None), "states": [AppState.STARTING]}, ["alpha-2"]),
    ],
)
def test_list_and_count_filter_by_job_state_trigger_tag_and_name(
    store: Store, filters: dict[str, Any], names: list[str]
) -> None:
    assert listed(store, **filters) == (names, len(names))


def test_search_matches_any_part_of_the_id_ignoring_case(
    store: Store, history: dict[str, str]
) -> None:
    hex_part = history["beta-1"].removeprefix("app-")
    assert listed(store, search=hex_part.upper()) == (["beta-1"], 1)


@pytest.mark.usefixtures("history")
def test_list_pages_newest_first(store: Store) -> None:
    assert listed(store, limit=2) == (["beta-2", "Gamma_1-1"], 5)
    assert listed(store, limit=2, offset=2) == (["alpha-2", "beta-1"], 5)
    assert listed(store, limit=2, offset=4) == (["alpha-1"], 5)
    assert listed(store, limit=2, offset=10) == ([], 5)
    assert listed(store, job_name="ghost") == ([], 0)
    assert listed(store, job_name="beta", limit=1, offset=1) == (["beta-1"], 2)


def test_jobs_are_read_with_their_newest_application(
    store: Store, history: dict[str, str], add_job: AddJob
) -> None:
    for name in ("alpha", "beta", "never-ran"):
        add_job(name)
    with store.transaction() as repos:
        rows, total = repos.jobs.list_with_latest()
        alpha, latest = repos.jobs.show("alpha")
        _, not_run = repos.jobs.show("never-ran")
    assert total == 3
    assert {job.name: run and run.name for job, run in rows} == {
        "alpha": "alpha-2",
        "beta": "beta-2",
        "never-ran": None,
    }
    assert (alpha.name, latest and latest.id, not_run) == ("alpha", history["alpha-2"], None)
    assert latest is not None
    assert latest.state is AppState.STARTING
    assert latest.created_at.tzinfo is not None


def test_supervised_are_the_active_applications_oldest_first(
    store: Store, add_application: AddApplication, clock: FakeClock
) -> None:
    starting = add_application("starting")
    clock.advance(1)
    running = change(store, add_application("running"), clock.now(), state=AppState.RUNNING)
    change(store, add_application("suspended"), clock.now(), state=AppState.SUSPENDED)
    finish(store, add_application("failed"), clock)
    add_application("completed", state=AppState.COMPLETED)
    with store.transaction() as repos:
        assert repos.applications.supervised() == [starting, running]
