"""``GET /metrics`` of a real server whose jobs are in several states, parsed with the Prometheus
client's own parser: every series docs/metrics.md lists, with its labels and the values the
store holds; the token and the metrics port; route templates, never raw paths."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from streamjobs.composition import build_server
from streamjobs.domain.states import AppState
from streamjobs.launch.ports import free_loopback_port
from streamjobs.settings import Settings
from tests.api.metrics_world import (
    DASHBOARD,
    EXPECTED_STATES,
    FLOWING_FIGURES,
    METRICS_TOKEN,
    MetricsWorld,
    dashboard_queries,
    metrics_world,
)
from tests.api.problems import problem_of
from tests.live_server import live_server

DOCS = Path(__file__).parents[2] / "docs" / "metrics.md"
APPLICATION_LABELS = {"job", "bundle", "namespace", "application"}


def documented_series() -> dict[str, set[str]]:
    """Each series docs/metrics.md lists, with its labels."""
    rows = re.findall(r"^\| `(streamjobs_\w+)` \| \w+ \|([^|]*)\|", DOCS.read_text(), re.M)
    return {
        name: {label.strip() for label in labels.split(",") if label.strip()}
        for name, labels in rows
    }


def samples_of(text: str) -> list[Sample]:
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def series(samples: list[Sample], name: str, **labels: str) -> list[Sample]:
    return [
        s
        for s in samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetricsWorld]:
    with metrics_world(tmp_path_factory.mktemp("metrics")) as built:
        yield built


def test_every_documented_series_is_there_with_its_labels(world: MetricsWorld) -> None:
    answer = world.scrape()
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = samples_of(answer.text)
    documented = documented_series()
    assert len(documented) == 15
    for name, labels in documented.items():
        found = [s for s in samples if s.name == name or s.name == f"{name}_count"]
        assert found, f"{name} is documented but not served"
        for sample in found:
            assert set(sample.labels) == labels, (name, sample.labels)
    served = {family.name for family in text_string_to_metric_families(answer.text)}
    assert served == {re.sub(r"_total$", "", name) for name in documented}


def test_each_application_has_one_state_series_per_state(world: MetricsWorld) -> None:
    samples = samples_of(world.scrape().text)
    for job, state in EXPECTED_STATES.items():
        application = world.application(job)
        states = series(samples, "streamjobs_application_state", job=job)
        assert {s.labels["state"] for s in states} == {each.value for each in AppState}
        assert [s.labels["state"] for s in states if s.value == 1.0] == [state]
        assert sum(s.value for s in states) == 1.0
        assert {s.labels["application"] for s in states} == {application["name"]}
        assert {(s.labels["bundle"], s.labels["namespace"]) for s in states} == {
            ("default", "default")
        }
        (restarts,) = series(samples, "streamjobs_application_restarts_total", job=job)
        assert restarts.value == application["restarts"]
    assert not [s for s in samples if s.labels.get("job") == "idle"]  # never run: no series


def test_figures_are_those_the_driver_reported(world: MetricsWorld) -> None:
    samples = samples_of(world.scrape().text)
    for name, value in FLOWING_FIGURES.items():
        (sample,) = series(samples, name, job="flowing")
        assert sample.value == pytest.approx(value), name
    quiet = {s.name for s in samples if s.labels.get("job") == "quiet"}
    assert quiet == {
        "streamjobs_application_state",
        "streamjobs_application_restarts_total",
        "streamjobs_application_last_progress_age_seconds",
    }  # a figure never reported has no sample
    (age,) = series(samples, "streamjobs_application_last_progress_age_seconds", job="quiet")
    assert age.value == pytest.approx(60.0)  # since its heartbeat
    for ended in ("stopped", "failed"):
        names = {s.name for s in samples if s.labels.get("job") == ended}
        assert names == {"streamjobs_application_state", "streamjobs_application_restarts_total"}


def test_server_series_count_ticks_and_the_outbox(world: MetricsWorld) -> None:
    samples = samples_of(world.scrape().text)
    (ticks,) = series(samples, "streamjobs_supervisor_tick_duration_seconds_count")
    before = ticks.value
    assert before >= 10  # every tick of the world's set-up
    world.tick()
    samples = samples_of(world.scrape().text)
    (ticks,) = series(samples, "streamjobs_supervisor_tick_duration_seconds_count")
    assert ticks.value == before + 1
    (depth,) = series(samples, "streamjobs_notification_queue_depth")
    (failures,) = series(samples, "streamjobs_notification_delivery_failures_total")
    assert (depth.value, failures.value) == (0.0, 0.0)


def test_requests_are_labelled_by_route_template_never_raw_path(world: MetricsWorld) -> None:
    for name in ("one", "two", "three"):
        problem_of(world.api.get(f"/api/v1/jobs/{name}"), 404)
    world.api.get("/api/v1/jobs/flowing").raise_for_status()
    httpx.get(f"{world.url}/no/such/page/{world.applications['flowing']}")
    samples = samples_of(world.scrape().text)
    counts = series(samples, "streamjobs_http_request_duration_seconds_count")
    routes = {s.labels["route"] for s in counts}
    raw = ("one", "two", "three", "flowing", "no/such", world.applications["flowing"])
    assert not [route for route in routes if any(value in route for value in raw)], routes
    assert "/api/v1/jobs/{name}" in routes
    assert "/api/v1/applications/{application_id}" in routes
    (jobs_404,) = series(
        counts,
        "streamjobs_http_request_duration_seconds_count",
        route="/api/v1/jobs/{name}",
        method="GET",
        status_class="4xx",
    )
    assert jobs_404.value >= 3
    assert series(counts, "streamjobs_http_request_duration_seconds_count", route="unmatched")
    reports = series(counts, "streamjobs_http_request_duration_seconds_count", method="POST")
    assert "/api/v1/applications/{application_id}/reports" in {s.labels["route"] for s in reports}


def test_the_token_guards_metrics(world: MetricsWorld) -> None:
    missing = problem_of(httpx.get(f"{world.url}/metrics"), 401)
    assert "metrics token" in missing["detail"]
    problem_of(world.scrape("not-the-metrics-token"), 401)
    problem_of(world.scrape(METRICS_TOKEN + "x"), 401)
    admin = world.api.get("/metrics")  # a user's token, even the admin's, is not it
    problem_of(admin, 401)
    basic = httpx.get(f"{world.url}/metrics", headers={"Authorization": f"Basic {METRICS_TOKEN}"})
    problem_of(basic, 401)
    assert world.scrape().status_code == 200


def test_without_a_setting_metrics_are_404_naming_the_settings(tmp_path: Path) -> None:
    server = build_server(Settings(home=tmp_path / "home"), supervise=False)
    try:
        with live_server(server) as url:
            problem = problem_of(httpx.get(f"{url}/metrics"), 404)
    finally:
        server.close()
    assert "STREAMJOBS_METRICS_TOKEN" in problem["detail"]
    assert "STREAMJOBS_METRICS_PORT" in problem["detail"]


def test_the_metrics_port_serves_them_open(tmp_path: Path) -> None:
    port = free_loopback_port()
    with metrics_world(tmp_path / "home", metrics_port=port) as world:
        problem = problem_of(httpx.get(f"{world.url}/metrics"), 404)
        assert f"port {port}" in problem["detail"]
        opened = world.server.open_metrics_port()
        assert opened is not None
        try:
            answer = httpx.get(f"http://127.0.0.1:{port}/metrics")
        finally:
            opened.close()
    assert answer.status_code == 200
    samples = samples_of(answer.text)
    running = series(samples, "streamjobs_application_state", job="flowing", state="RUNNING")
    assert [s.value for s in running] == [1.0]


def test_a_metrics_token_too_short_or_a_port_taken_by_the_server_is_refused() -> None:
    with pytest.raises(ValueError, match=r"metrics_token\n.*at least 16 characters"):
        Settings(metrics_token="short")
    with pytest.raises(ValueError, match="metrics port 8040 is the server's own port"):
        Settings(port=8040, metrics_port=8040)


def test_the_grafana_dashboard_charts_every_series() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["schemaVersion"] >= 39
    variables = {each["name"]: each for each in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert "streamjobs_application_state" in variables["job"]["definition"]
    charted = [panel for panel in dashboard["panels"] if panel["type"] != "row"]
    for panel in charted:
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"])
    queries = " ".join(dashboard_queries())
    for name in documented_series():
        assert name in queries, f"{name} is on no panel"
    for query in dashboard_queries():
        if "streamjobs_application_" in query:
            assert 'job=~"$job"' in query, query
