"""A real Prometheus (Debian's ``prometheus`` package, ``scripts/ensure-prometheus.sh``) scrapes a
live server's ``/metrics`` with the metrics token, as docs/metrics.md configures it, and its
query API then answers with the server's series. Without the binary the test is skipped with
the reason (failed under CI=true)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamjobs.launch.ports import free_loopback_port
from tests.api.metrics_world import (
    FLOWING_FIGURES,
    METRICS_TOKEN,
    MetricsWorld,
    dashboard_queries,
    metrics_world,
)
from tests.conftest import skip_or_fail

SCRAPE_CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: streamjobs
    honor_labels: true
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: {token_file}
    static_configs:
      - targets: ["{target}"]
"""


@pytest.fixture(scope="module")
def prometheus_binary() -> str:
    binary = shutil.which("prometheus")
    if binary is None:
        skip_or_fail(
            "no prometheus binary on PATH: install Debian's package (scripts/ensure-prometheus.sh)"
        )
    return binary


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetricsWorld]:
    with metrics_world(tmp_path_factory.mktemp("scraped")) as built:
        yield built


@pytest.fixture(scope="module")
def prometheus(
    prometheus_binary: str, world: MetricsWorld, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A Prometheus scraping ``world`` every second; yields the URL of its HTTP API."""
    directory = tmp_path_factory.mktemp("prometheus")
    token_file = directory / "metrics-token"
    token_file.write_text(METRICS_TOKEN)
    config = directory / "prometheus.yml"
    config.write_text(
        SCRAPE_CONFIG.format(token_file=token_file, target=world.url.removeprefix("http://"))
    )
    port = free_loopback_port()
    log = (directory / "prometheus.log").open("w")
    process = subprocess.Popen(
        [
            prometheus_binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={directory / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(lambda: _ready(url), what="Prometheus to be ready", log=directory)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_prometheus_scrapes_every_series_with_the_token(
    prometheus: str, world: MetricsWorld
) -> None:
    up = _wait_for(
        lambda: _query(prometheus, 'up{job="streamjobs"} == 1'), what="a successful scrape"
    )
    assert up[0]["metric"]["instance"] == world.url.removeprefix("http://")
    running = _query(prometheus, 'streamjobs_application_state{state="RUNNING"} == 1')
    assert {each["metric"]["job"] for each in running} == {"flowing", "quiet"}
    for name, value in FLOWING_FIGURES.items():
        (found,) = _query(prometheus, f'{name}{{job="flowing"}}')
        assert float(found["value"][1]) == pytest.approx(value), name
        assert {"bundle", "namespace", "application"} <= set(found["metric"])
    restarts = _query(prometheus, 'streamjobs_application_restarts_total{job="retrying"}')
    assert len(restarts) == 1
    for server_series in (
        "streamjobs_supervisor_tick_duration_seconds_count",
        "streamjobs_notification_queue_depth",
        "streamjobs_notification_delivery_failures_total",
    ):
        assert _query(prometheus, server_series), server_series
    routes = _query(prometheus, "streamjobs_http_request_duration_seconds_count")
    assert "/api/v1/jobs/{name}" in {each["metric"]["route"] for each in routes}


def test_the_dashboards_queries_are_promql_prometheus_answers(
    prometheus: str, world: MetricsWorld
) -> None:
    _wait_for(lambda: _query(prometheus, 'up{job="streamjobs"} == 1'), what="a scrape")
    for query in dashboard_queries():
        runnable = query.replace("$job", ".*").replace("$__rate_interval", "1m")
        answer = _query(prometheus, runnable)  # a query Prometheus cannot parse fails here
        if "rate(" not in query:  # a rate needs two scrapes: it may still be empty
            assert answer, query


def _query(url: str, query: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{url}/api/v1/query", params={"query": query}, timeout=10)
    answer.raise_for_status()
    body = answer.json()
    assert body["status"] == "success", body
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/-/ready", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _wait_for(found: Any, *, what: str, log: Path | None = None, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = found()
        if answer:
            return answer
        time.sleep(0.5)
    where = f"; see {log / 'prometheus.log'}" if log else ""
    raise AssertionError(f"waited {timeout:.0f} s for {what} in vain{where}")
