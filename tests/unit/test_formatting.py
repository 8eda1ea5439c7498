"""The one set of human formatters shared by the web UI and the CLI."""

from __future__ import annotations

import math

import pytest

from streamjobs import formatting
from streamjobs.formatting import UNKNOWN


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (45.9, "45s"),
        (185, "3m 05s"),
        (7385, "2h 03m 05s"),
        (93_780, "1d 02h 03m"),
        (-3, "0s"),
    ],
)
def test_duration(seconds: float, text: str) -> None:
    assert formatting.duration(seconds) == text


@pytest.mark.parametrize(
    ("milliseconds", "text"),
    [
        (0, "0 ms"),
        (850.4, "850 ms"),
        (12_300, "12.3 s"),
        (270_000, "4.5 min"),
        (7_200_000, "2.0 h"),
    ],
)
def test_milliseconds(milliseconds: float, text: str) -> None:
    assert formatting.milliseconds(milliseconds) == text


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0 B"),
        (512, "512 B"),
        (1536, "1.5 KiB"),
        (3 * 1024**3, "3.0 GiB"),
        (2048 * 1024**4, "2.0 PiB"),
    ],
)
def test_size(size: int, text: str) -> None:
    assert formatting.size(size) == text


@pytest.mark.parametrize(
    ("megabytes", "text"), [(0, "0 MB"), (512, "512 MB"), (4096, "4 GB"), (1536, "1536 MB")]
)
def test_memory(megabytes: int, text: str) -> None:
    assert formatting.memory(megabytes) == text


@pytest.mark.parametrize(("rows", "text"), [(0, "0.0"), (12.34, "12.3"), (1234.56, "1,234.6")])
def test_rate(rows: float, text: str) -> None:
    assert formatting.rate(rows) == text


def test_count_has_thousands_separators() -> None:
    assert formatting.count(12345.4) == "12,345"


@pytest.mark.parametrize(
    "formatter",
    [
        formatting.duration,
        formatting.milliseconds,
        formatting.size,
        formatting.memory,
        formatting.rate,
        formatting.count,
    ],
)
@pytest.mark.parametrize("value", [None, math.nan, math.inf, -math.inf, True, "12"])
def test_a_figure_not_known_is_a_dash(formatter: object, value: object) -> None:
    assert callable(formatter)
    assert formatter(value) == UNKNOWN
