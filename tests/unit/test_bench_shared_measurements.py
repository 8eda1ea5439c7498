"""Measurements two figures share are made once per plan and directory."""

from __future__ import annotations

from pathlib import Path

from bench.shared_measurements import SharedMeasurements


def test_makes_once_per_plan_and_directory_and_says_when_it_reuses(tmp_path: Path) -> None:
    made: list[tuple[str, Path]] = []

    def measure(plan: str, work: Path, log: object) -> str:
        made.append((plan, work))
        return f"{plan} in {work.name}"

    shared = SharedMeasurements("figure 9", measure)
    logged: list[str] = []
    first = shared.get("quick", tmp_path / "a", logged.append)
    again = shared.get("quick", tmp_path / "x" / ".." / "a", logged.append)
    other = shared.get("full", tmp_path / "a", logged.append)

    assert first == again == "quick in a"
    assert other == "full in a"
    assert made == [("quick", tmp_path / "a"), ("full", tmp_path / "a")]
    assert logged == [f"figure 9: reusing what was measured in {tmp_path / 'x' / '..' / 'a'}"]
