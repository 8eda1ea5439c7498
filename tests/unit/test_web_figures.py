"""The application page's figures: totals over executors and the units people read them in."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.formatting import UNKNOWN
from streamjobs.web.figures import (
    MAIN_CARDS,
    MORE_CARDS,
    Unit,
    executor_totals,
    human,
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


def test_human_picks_the_unit_and_dashes_the_unknown() -> None:
    assert human(None, Unit.BYTES) == UNKNOWN
    assert human(1234567, Unit.COUNT) == "1,234,567"
    assert human(2048, Unit.BYTES) == "2.0 KiB"
    assert human(1500, Unit.MILLISECONDS) == "1.5 s"


def test_what_removed_executors_did_counts_but_not_what_they_held() -> None:
    removed = {
        "id": "1",
        "is_active": False,
        "total_cores": 2,
        "completed_tasks": 12,
        "task_time_ms": 9000,
        "shuffle_write_bytes": 512,
        "memory_used_bytes": 4096,
        "disk_used_bytes": 100,
        "rdd_blocks": 3,
    }
    active = {**removed, "id": "2", "is_active": True, "completed_tasks": 1, "memory_used_bytes": 8}
    totals = executor_totals(figures({"id": "driver", "is_active": True}, removed, active))
    assert totals is not None
    assert (totals["completed_tasks"], totals["task_time_ms"]) == (13, 18000)
    assert totals["shuffle_write_bytes"] == 1024
    assert (totals["memory_used_bytes"], totals["disk_used_bytes"]) == (8, 100)
    assert (totals["rdd_blocks"], totals["total_cores"]) == (3, 2)
