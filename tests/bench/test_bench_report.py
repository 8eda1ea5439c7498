"""The benchmark report's absolute limits (figure 4's ``Measurement``) and how the report renders
them beside the baseline comparisons, which render as before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from bench.report import (
    SPEED_CHECK,
    Machine,
    figure_section,
    measurement_groups,
    render,
    speed_check_ms,
    summary_table,
    write_report,
)
from bench.results import Comparison, FigureResult, Limit, Measurement, Target

MACHINE: Machine = {
    "cores": "2",
    "CPU": "test CPU",
    SPEED_CHECK: "80 ms",
    "streamjobs commit": "a1",
}


class TestLimit:
    def test_an_upper_limit_is_strict(self) -> None:
        limit = Limit(50.0)
        assert limit.met(49.9)
        assert not limit.met(50.0)
        assert limit.describe("ms") == "< 50 ms"

    def test_a_lower_limit_includes_its_threshold(self) -> None:
        limit = Limit(196.0, at_least=True)
        assert limit.met(196.0)
        assert not limit.met(195.9)
        assert limit.describe("requests/s") == "≥ 196 requests/s"

    def test_describes_without_a_unit(self) -> None:
        assert Limit(0.5).describe() == "< 0.5"


class TestMeasurement:
    def test_is_checked_on_the_median_of_its_samples(self) -> None:
        item = Measurement("p99", "ms", "SQLite", (10.0, 60.0, 30.0), Limit(50.0))
        assert item.spread.median == 30.0
        assert (item.spread.low, item.spread.high) == (10.0, 60.0)
        assert item.met is True

    def test_is_not_conclusive_when_samples_fall_on_both_sides(self) -> None:
        assert not Measurement("p99", "ms", "x", (10.0, 60.0, 30.0), Limit(50.0)).conclusive
        assert Measurement("p99", "ms", "x", (10.0, 20.0), Limit(50.0)).conclusive

    def test_without_a_limit_it_is_neither_met_nor_missed(self) -> None:
        item = Measurement("p50", "ms", "x", (1.0,))
        assert item.met is None
        assert item.conclusive

    def test_a_missed_limit(self) -> None:
        assert Measurement("tick", "ms", "x", (120.0, 130.0), Limit(100.0)).met is False


def throughput_figure() -> FigureResult:
    return FigureResult(
        number=1,
        slug="throughput",
        title="Throughput",
        comparisons=[
            Comparison(
                name="Kafka JSON → Parquet",
                metric="records/s",
                candidate_label="(a) streamjobs",
                baseline_label="(b) hand-written PySpark",
                candidate=(100.0, 110.0),
                baseline=(100.0, 100.0),
                target=Target(0.97),
            )
        ],
        method="How.",
    )


def control_plane_figure() -> FigureResult:
    return FigureResult(
        number=4,
        slug="control-plane",
        title="Control plane",
        comparisons=[],
        measurements=[
            Measurement("list jobs p99", "ms", "SQLite", (12.0, 14.0, 13.0), Limit(50.0)),
            Measurement("list jobs p99", "ms", "PostgreSQL", (40.0, 70.0, 60.0), Limit(50.0)),
            Measurement("tick", "ms per tick", "SQLite", (80.0,), Limit(100.0)),
            Measurement("requests/s", "requests/s", "SQLite", (199.0,), Limit(196, True)),
        ],
        method="How.",
    )


class TestRendering:
    def test_a_figure_without_measurements_renders_as_before(self) -> None:
        figure = throughput_figure()
        assert summary_table([figure]).splitlines() == [
            "| figure | comparison | streamjobs | baseline | ratio (paired) | target | met |",
            "|---|---|---:|---:|---:|---:|---|",
            "| 1 | Kafka JSON → Parquet (records/s) | 105 [100-110] | 100 [100-100] | "
            "1.050 (1.000-1.100) | ≥ 0.97 | met |",
        ]
        section = figure_section(figure)
        assert section.split("\n\n")[2] == (
            "- **Kafka JSON → Parquet**: (a) streamjobs 105 [100-110] records/s, "
            "(b) hand-written PySpark 100 [100-100] records/s; ratio 1.050 "
            "(paired 1.000-1.100); target ≥ 0.97: **met**."
        )
        assert "absolute limit" not in render([figure], MACHINE, command="c", minutes=1.0)

    def test_measurements_join_the_summary_with_their_limits(self) -> None:
        lines = summary_table([throughput_figure(), control_plane_figure()]).splitlines()
        assert lines[3] == (
            "| 4 | list jobs p99, SQLite (ms) | 13 [12-14] | — | — | < 50 ms | met |"
        )
        assert lines[4] == (
            "| 4 | list jobs p99, PostgreSQL (ms) | 60 [40-70] | — | — | < 50 ms | "
            "missed, not conclusive |"
        )
        assert lines[6].endswith("| ≥ 196 requests/s | met |")

    def test_a_figures_section_lists_each_measurement(self) -> None:
        section = figure_section(control_plane_figure())
        assert "- **list jobs p99**, SQLite: 13 [12-14] ms; limit < 50 ms: **met**." in section
        assert "- **tick**, SQLite: 80 [80-80] ms per tick; limit < 100 ms per tick: **met**." in (
            section
        )

    def test_the_report_explains_absolute_limits_when_there_are_some(self) -> None:
        text = render([control_plane_figure()], MACHINE, command="c", minutes=1.0)
        assert "absolute limit" in text

    def test_measurements_are_charted_one_panel_per_unit(self) -> None:
        groups = measurement_groups(control_plane_figure().measurements)
        assert list(groups) == ["ms", "ms per tick", "requests/s"]
        assert [item.label for item in groups["ms"]] == ["SQLite", "PostgreSQL"]

    @pytest.mark.parametrize("figure", [throughput_figure, control_plane_figure])
    def test_writes_the_report_and_a_chart(
        self, figure: Callable[[], FigureResult], tmp_path: Path
    ) -> None:
        result = figure()
        path = write_report([result], MACHINE, tmp_path, command="c", minutes=1.0)
        assert path.read_text(encoding="utf-8").startswith("# streamjobs benchmark report")
        assert (tmp_path / result.chart_file).stat().st_size > 1000


class TestMachine:
    def test_states_the_speed_check_beside_the_machines_facts(self) -> None:
        text = render([], MACHINE, command="c", minutes=1.0)
        assert "| CPU speed check: 1,000,000 additions in a Python loop, best of 5 | 80 ms |" in (
            text
        )

    def test_the_speed_check_times_the_loop(self) -> None:
        assert speed_check_ms(repetitions=1) > 0
