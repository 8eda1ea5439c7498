"""The benchmark's latency figures: percentiles, per-route summaries, the rate achieved, and the
load generator's request plan (figure 4)."""

from __future__ import annotations

import statistics

import pytest
from bench.latency import Request, percentile, summarise
from bench.load_generator import APPLY, LIST_JOBS, ROUTES, Plan, calls


class TestPercentile:
    def test_median_of_an_odd_count_is_the_middle_value(self) -> None:
        assert percentile([5.0, 1.0, 3.0], 0.5) == 3.0

    def test_interpolates_between_the_nearest_ranks(self) -> None:
        assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
        assert percentile(list(range(1, 101)), 0.99) == pytest.approx(99.01)

    def test_ends_are_the_minimum_and_the_maximum(self) -> None:
        values = [7.0, 3.0, 9.0, 1.0]
        assert percentile(values, 0.0) == 1.0
        assert percentile(values, 1.0) == 9.0

    def test_agrees_with_the_standard_librarys_inclusive_quantiles(self) -> None:
        values = [float(v * v % 97) for v in range(250)]
        cuts = statistics.quantiles(values, n=100, method="inclusive")
        assert percentile(values, 0.99) == pytest.approx(cuts[98])
        assert percentile(values, 0.5) == pytest.approx(cuts[49])

    def test_one_value_is_every_percentile(self) -> None:
        assert percentile([4.0], 0.99) == 4.0

    @pytest.mark.parametrize("fraction", [-0.1, 1.5])
    def test_refuses_a_fraction_outside_0_and_1(self, fraction: float) -> None:
        with pytest.raises(ValueError, match="fraction"):
            percentile([1.0], fraction)

    def test_refuses_no_values(self) -> None:
        with pytest.raises(ValueError, match="no values"):
            percentile([], 0.5)


def request(
    route: str, scheduled: float, took: float, *, late: float = 0.0, status: int = 200
) -> Request:
    started = scheduled + late
    return Request(route, scheduled, started, started + took, status)


class TestSummarise:
    def test_latency_counts_from_the_scheduled_start_and_service_from_the_real_one(self) -> None:
        summary = summarise([request("a", 0.0, 0.010, late=0.040)])
        route = summary.route("a")
        assert route.p50_ms == pytest.approx(50.0)
        assert route.service_p50_ms == pytest.approx(10.0)
        assert summary.behind_ms == pytest.approx(40.0)

    def test_routes_are_summed_up_apart_in_the_order_they_appear(self) -> None:
        requests = [request("b", i / 10, 0.002) for i in range(10)] + [
            request("a", i / 10 + 0.05, 0.020) for i in range(10)
        ]
        summary = summarise(requests)
        assert [route.route for route in summary.routes] == ["b", "a"]
        assert summary.route("b").p99_ms == pytest.approx(2.0)
        assert summary.route("a").p50_ms == pytest.approx(20.0)
        assert summary.requests == 20

    def test_failed_and_unanswered_requests_count_in_the_percentiles_too(self) -> None:
        requests = [
            request("a", 0.0, 0.010),
            request("a", 0.1, 0.030, status=500),
            request("a", 0.2, 5.0, status=0),  # given up after 5 s
        ]
        summary = summarise(requests)
        assert (summary.errors, summary.unanswered) == (2, 1)
        route = summary.route("a")
        assert (route.errors, route.unanswered) == (2, 1)
        assert route.p50_ms == pytest.approx(30.0)
        assert route.max_ms == pytest.approx(5000.0)
        assert summary.achieved_rate == pytest.approx(1 / 5.2)

    def test_achieved_rate_is_successes_over_first_schedule_to_last_answer(self) -> None:
        requests = [request("a", i * 0.5, 0.5) for i in range(4)]  # 0 .. 2.0 s
        requests.append(request("a", 2.0, 0.1, status=503))
        summary = summarise(requests)
        assert summary.achieved_rate == pytest.approx(4 / 2.1)

    def test_refuses_a_run_without_requests(self) -> None:
        with pytest.raises(ValueError, match="no requests"):
            summarise([])


def plan(**changes: object) -> Plan:
    fields: dict[str, object] = {
        "url": "http://127.0.0.1:1",
        "token": "t",
        "names": ["job-a", "job-b", "job-c"],
        "manifest": {"metadata": {"name": "x"}, "spec": {"k": 1}},
        "rate": 50.0,
        "seconds": 2.0,
        "warmup_seconds": 1.0,
        "connections": 4,
        "seed": 7,
        **changes,
    }
    return Plan(**fields)  # type: ignore[arg-type]


class TestLoadPlan:
    def test_sends_rate_times_seconds_warm_up_included(self) -> None:
        assert len(calls(plan())) == 150

    def test_goes_round_the_routes_in_turn(self) -> None:
        routes = [call[0] for call in calls(plan())]
        assert routes[: len(ROUTES) * 2] == list(ROUTES) * 2

    def test_applies_each_jobs_own_manifest_back(self) -> None:
        applies = [call for call in calls(plan()) if call[0] == APPLY]
        for _, method, path, body in applies:
            assert method == "PUT"
            assert body is not None
            name = path.rsplit("/", 1)[1]
            assert name in plan().names
            assert f'"name": "{name}"' in body.decode()
            assert '"spec": {"k": 1}' in body.decode()

    def test_the_same_seed_gives_the_same_requests(self) -> None:
        assert calls(plan()) == calls(plan())
        assert calls(plan()) != calls(plan(seed=8))

    def test_lists_jobs_one_page_at_a_time(self) -> None:
        lists = {call[2] for call in calls(plan()) if call[0] == LIST_JOBS}
        assert lists == {"/api/v1/jobs?limit=50"}
