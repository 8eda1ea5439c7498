"""The application page's figures: totals over executors and the units people read them in."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.web.figures import (
    MAIN_CARDS,
    MORE_CARDS,
    UNKNOWN,
    Unit,
    executor_totals,
    human,
    human_bytes,
    human_elapsed,
    human_milliseconds,
)


def figures(*executors: dict[str, Any]) -> dict[str, Any]:
    return {
        "spark_application_id": "app-1",
        "executors": list(executors),
        "running_executors": 1,
        "pending_executors": None,
    }


def test_totals_add_up_every_executor_the_driver_included() -> None:
    totals = executor_totals(
        figures(
            {
                "id": "driver",
                "is_active": True,
                "total_cores": 2,
                "completed_tasks": 10,
                "task_time_ms": 700,
                "memory_spilled_bytes": 900,
                "disk_spilled_bytes": 300,
            },
            {
                "id": "1",
                "is_active": True,
                "total_cores": 4,
                "completed_tasks": 5,
                "failed_tasks": 1,
                "task_time_ms": 300,
                "shuffle_read_bytes": 2048,
            },
            {
                "id": "2",
                "is_active": False,
                "total_cores": 4,
                "completed_tasks": 1,
                "gc_time_ms": 50,
                "disk_spilled_bytes": 100,
            },
        )
    )
    assert totals is not None
    assert totals["completed_tasks"] == 16
    assert totals["failed_tasks"] == 1
    assert totals["task_time_ms"] == 1000
    assert totals["driver_task_time_ms"] == 700
    assert totals["shuffle_read_bytes"] == 2048
    assert totals["gc_time_ms"] == 50
    assert totals["total_cores"] == 6  # the lost executor's cores are gone
    assert totals["spilled_bytes"] == 400  # on disk; the in-memory size is shown beside it
    assert totals["memory_spilled_bytes"] == 900


def test_every_card_has_a_total() -> None:
    totals = executor_totals(figures({"id": "driver", "is_active": True}))
    assert totals is not None
    assert {card.key for card in MAIN_CARDS + MORE_CARDS} <= set(totals)
    assert all(value == 0 for value in totals.values())


@pytest.mark.parametrize("stored", [None, {}])
def test_no_figures_yet_is_none(stored: dict[str, Any] | None) -> None:
    assert executor_totals(stored) is None


def test_missing_or_odd_fields_count_as_zero() -> None:
    totals = executor_totals(
        figures({"id": "1", "completed_tasks": None, "failed_tasks": "3", "rdd_blocks": True})
    )
    assert totals is not None
    assert (totals["completed_tasks"], totals["failed_tasks"], totals["rdd_blocks"]) == (0, 0, 0)


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (5 * 1024**2, "5.0 MiB"),
        (3 * 1024**3 + 1024**3 // 2, "3.5 GiB"),
        (2048 * 1024**4, "2,048.0 TiB"),
    ],
)
def test_bytes_in_binary_units(size: int, text: str) -> None:
    assert human_bytes(size) == text


@pytest.mark.parametrize(
    ("milliseconds", "text"),
    [
        (0, "0 ms"),
        (999, "999 ms"),
        (1000, "1.0 s"),
        (12_345, "12.3 s"),
        (90_000, "1.5 min"),
        (7_200_000, "2.0 h"),
    ],
)
def test_milliseconds_in_seconds_minutes_and_hours(milliseconds: int, text: str) -> None:
    assert human_milliseconds(milliseconds) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "0 s"),
        (45.9, "45 s"),
        (185, "3 min 05 s"),
        (2 * 3600 + 7 * 60 + 30, "2 h 07 min"),
        (3 * 86_400 + 4 * 3600, "3 d 04 h"),
    ],
)
def test_elapsed_time_to_the_second(seconds: float, text: str) -> None:
    assert human_elapsed(seconds) == text


def test_human_picks_the_unit_and_dashes_the_unknown() -> None:
    assert human(None, Unit.BYTES) == UNKNOWN
    assert human(1234567, Unit.COUNT) == "1,234,567"
    assert human(2048, Unit.BYTES) == "2.0 KiB"
    assert human(1500, Unit.MILLISECONDS) == "1.5 s"
