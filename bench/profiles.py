"""Where the time goes, from a profile: py-spy's sampled stacks of a process, or cProfile's calls.

py-spy (``py-spy record --format raw``) writes one line per distinct stack, its frames outermost
first and separated by ``;``, then the number of samples that caught it: ``main (app.py:3);run
(loop.py:80) 42``. ``read_collapsed`` turns that into the functions that were running (own time,
the innermost frame) and those of streamjobs that were on the stack (time including their
callees), and the share of samples by package. ``cprofile_rows`` does the same for a cProfile run.
Only parsing and counting here; running the profilers is the figures' business.
"""

from __future__ import annotations

import pstats
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

_FRAME = re.compile(r"^(?P<function>.*?) \((?P<file>.*?)(?::(?P<line>\d+))?\)$")
OWN_PACKAGE = "streamjobs"
ENTRY_POINTS = ("streamjobs/cli/",)
"""streamjobs frames on every stack of a server (its command), left out of ``inclusive``."""


@dataclass(frozen=True)
class Hotspot:
    """A function (``name (file)``) or a package, how much of the profile it accounts for (samples
    of a sampled profile, seconds of a cProfile run) and that as a share of the whole."""

    name: str
    amount: float
    share: float


@dataclass(frozen=True)
class StackProfile:
    """A sampled profile summed up."""

    samples: int
    own: tuple[Hotspot, ...]
    """Functions by samples in which they were the innermost frame (running themselves)."""
    inclusive: tuple[Hotspot, ...]
    """streamjobs' functions (less its command line) by samples in which they were anywhere on
    the stack."""
    packages: tuple[Hotspot, ...]
    """Packages by samples whose innermost frame was theirs."""


def frame_parts(frame: str) -> tuple[str, str]:
    """(function, file) of a py-spy frame ``function (path/file.py:line)``."""
    found = _FRAME.match(frame.strip())
    if found is None:
        return frame.strip(), ""
    return found["function"], found["file"]


def short_path(path: str) -> str:
    """A file as it is known in its package: ``sqlalchemy/orm/session.py``,
    ``streamjobs/api/jobs.py``, or a standard-library module such as ``json/encoder.py``."""
    for marker in ("site-packages/", "dist-packages/", "/src/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    match = re.search(r"/lib/python3\.\d+/(.*)$", path)
    if match:
        return match[1]
    return path


def package_of(path: str) -> str:
    """The top-level package (or standard-library module) of a file."""
    short = short_path(path)
    head = short.split("/", 1)[0]
    if head.endswith(".py"):
        head = head[: -len(".py")]
    return head or "?"


def function_name(frame: str) -> str:
    function, path = frame_parts(frame)
    return f"{function} ({short_path(path)})" if path else function


def read_collapsed(text: str, *, top: int = 12) -> StackProfile:
    """Sum up py-spy's raw output (collapsed stacks with counts)."""
    stacks: list[tuple[list[str], int]] = []
    for line in text.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        stacks.append((stack.split(";"), int(count)))
    return summarise_stacks(stacks, top=top)


def summarise_stacks(stacks: Iterable[tuple[list[str], int]], *, top: int = 12) -> StackProfile:
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    total = 0
    for frames, count in stacks:
        if not frames:
            continue
        total += count
        leaf = frames[-1]
        own[function_name(leaf)] += count
        packages[package_of(frame_parts(leaf)[1])] += count
        mine = {function_name(f) for f in frames if _own_work(frame_parts(f)[1])}
        for name in mine:
            inclusive[name] += count
    return StackProfile(
        samples=total,
        own=_ranked(own, total, top),
        inclusive=_ranked(inclusive, total, top),
        packages=_ranked(packages, total, top),
    )


def _own_work(path: str) -> bool:
    """Whether a frame is streamjobs' own code, not its command line (the process's entry)."""
    short = short_path(path)
    return package_of(path) == OWN_PACKAGE and not short.startswith(ENTRY_POINTS)


@dataclass(frozen=True)
class ProfileRow:
    """One function of a cProfile run: its calls, own time and time including callees."""

    function: str
    calls: int
    own_seconds: float
    cumulative_seconds: float


def cprofile_rows(
    stats: pstats.Stats, *, top: int = 12, by: str = "cumulative"
) -> list[ProfileRow]:
    """The ``top`` functions of a cProfile run, by cumulative (default) or own time."""
    rows = [
        ProfileRow(
            function=_cprofile_name(filename, line, function),
            calls=calls,
            own_seconds=own,
            cumulative_seconds=cumulative,
        )
        for (filename, line, function), (_, calls, own, cumulative, _) in _stats_of(stats).items()
    ]
    key: Callable[[ProfileRow], float] = (
        (lambda row: row.cumulative_seconds)
        if by == "cumulative"
        else (lambda row: row.own_seconds)
    )
    return sorted(rows, key=key, reverse=True)[:top]


def cprofile_packages(stats: pstats.Stats, *, top: int = 10) -> tuple[Hotspot, ...]:
    """Own time by package: which libraries the run spent its time in (shares of the total)."""
    seconds: Counter[str] = Counter()
    for (filename, _, _), (_, _, own, _, _) in _stats_of(stats).items():
        package = package_of(filename) if filename != "~" else "built-in"
        seconds[package] += own
    total = sum(seconds.values())
    ranked = seconds.most_common(top)
    return tuple(Hotspot(name, value, value / total if total else 0.0) for name, value in ranked)


def _stats_of(
    stats: pstats.Stats,
) -> dict[tuple[str, int, str], tuple[int, int, float, float, Any]]:
    found: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    return found


def _cprofile_name(filename: str, line: int, function: str) -> str:
    if filename == "~":  # a built-in: cProfile names it like "<method 'execute' of ...>"
        return function
    return f"{function} ({short_path(filename)}:{line})"


def _ranked(counts: Counter[str], total: int, top: int) -> tuple[Hotspot, ...]:
    return tuple(
        Hotspot(name, count, count / total if total else 0.0)
        for name, count in counts.most_common(top)
    )
