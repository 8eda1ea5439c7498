"""Figure 6's arithmetic: records, pacing, percentiles, and latencies joined from two topics."""

from __future__ import annotations

import json

import pytest
from bench.latency_samples import (
    achieved_rate,
    amount,
    due_count,
    kept,
    measured_latencies,
    parse_output,
    percentile,
    record_value,
)


def test_percentiles_interpolate_between_ranks_like_numpy() -> None:
    values = [float(n) for n in range(1, 101)]  # 1..100
    assert percentile(values, 0.5) == pytest.approx(50.5)
    assert percentile(values, 0.99) == pytest.approx(99.01)
    assert percentile(values, 1.0) == 100.0
    assert percentile([7.0], 0.99) == 7.0
    assert percentile([30.0, 10.0, 20.0], 0.5) == 20.0  # unsorted input
    with pytest.raises(ValueError, match="no values"):
        percentile([], 0.5)
    with pytest.raises(ValueError, match="within 0 and 1"):
        percentile([1.0], 99)


def test_the_pacing_schedule_makes_record_n_due_at_n_over_rate() -> None:
    assert due_count(1000, -0.1) == 0
    assert due_count(1000, 0.0) == 1  # record 0 at once
    assert due_count(1000, 0.0015) == 2
    assert due_count(1000, 1.0) == 1001
    assert due_count(200, 5.0) == 1001
    for record_id in (0, 17, 999):
        assert due_count(250, record_id / 250) == record_id + 1


def test_the_achieved_rate_counts_the_gaps_between_the_sends() -> None:
    assert achieved_rate([0.0, 0.001, 0.002, 0.003, 0.004]) == pytest.approx(1000)
    assert achieved_rate([10.0, 10.5, 12.0]) == pytest.approx(1.0)
    assert achieved_rate([1.0]) == 0.0
    assert achieved_rate([]) == 0.0


def test_records_are_deterministic_json_and_the_filter_keeps_nine_in_ten() -> None:
    value = json.loads(record_value(42, produced_ms=1_700_000_000_123))
    assert (value["id"], value["produced_ms"]) == (42, 1_700_000_000_123)
    assert value["amount"] == amount(42)
    assert record_value(42, 5) == record_value(42, 5)
    assert sum(kept(record_id) for record_id in range(1000)) == 900
    assert all(0 <= amount(record_id) < 100 for record_id in range(1000))


def output(record_id: int, appended: int, produced: int | None = None) -> bytes:
    produced = appended - 2 if produced is None else produced
    fields = {"id": record_id, "produced_ms": produced, "appended_ms": appended, "amount": 50.0}
    return json.dumps(fields).encode()


def test_an_output_record_joins_its_input_by_the_append_time_it_carries() -> None:
    record = parse_output(output(7, appended=1000), output_appended_ms=1012)
    assert (record.record_id, record.input_appended_ms, record.produced_ms) == (7, 1000, 998)
    assert record.latency_ms == 12


def test_latencies_take_the_measured_records_once_each() -> None:
    measured = range(10, 20)
    ids = [record_id for record_id in measured if kept(record_id)]
    outputs = [parse_output(output(i, 1000 + i), 1000 + i + 5 + i) for i in ids]
    outputs.append(parse_output(output(ids[0], 1000 + ids[0]), 9999))  # a later duplicate
    outputs.append(parse_output(output(3, 1003), 1500))  # warm-up: not measured
    latencies = measured_latencies(outputs, measured)
    assert latencies.records == len(ids)
    assert latencies.duplicates == 1
    assert latencies.missing == 0
    assert latencies.max_ms == 5 + ids[-1]
    assert latencies.p50_ms == pytest.approx(5 + percentile([float(i) for i in ids], 0.5))
    assert latencies.append_p99_ms == pytest.approx(2)


def test_a_kept_record_that_never_came_out_counts_as_missing() -> None:
    measured = range(0, 20)
    ids = [record_id for record_id in measured if kept(record_id)]
    outputs = [parse_output(output(i, 100), 110) for i in ids[1:]]
    latencies = measured_latencies(outputs, measured)
    assert latencies.missing == 1
    with pytest.raises(ValueError, match="no output record"):
        measured_latencies(outputs, range(1000, 1010))
