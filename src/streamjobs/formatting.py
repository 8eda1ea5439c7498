"""Durations, sizes and rates written for people, the same way in the web UI and the CLI.

Every page and command formats these figures through this module only, so a duration reads
"3m 05s" everywhere (the pages and the CLI once had four formatters that disagreed). A figure
that is not known (yet) is written ``UNKNOWN``.
"""

from __future__ import annotations

import math

UNKNOWN = "\u2013"
"""An en dash: what is shown for a figure that is not known (yet)."""

_BINARY_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB")


def duration(seconds: float | None) -> str:
    """A span to the second: ``45s``, ``3m 05s``, ``2h 03m 05s``, ``1d 02h 03m``.

    Negative spans (clocks a little apart) are written ``0s``.
    """
    seconds = _finite(seconds)
    if seconds is None:
        return UNKNOWN
    total = max(0, int(seconds))
    days, rest = divmod(total, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h {minutes:02d}m"
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def milliseconds(ms: float | None) -> str:
    """A short span measured in milliseconds: ``850 ms``, ``12.3 s``, ``4.5 min``, ``2.0 h``."""
    ms = _finite(ms)
    if ms is None:
        return UNKNOWN
    if abs(ms) < 1000:
        return f"{round(ms)} ms"
    seconds = ms / 1000
    if abs(seconds) < 60:
        return f"{seconds:.1f} s"
    if abs(seconds) < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:,.1f} h"


def size(size_in_bytes: float | None) -> str:
    """Bytes in binary units: ``512 B``, ``1.5 KiB``, ``3.0 GiB``."""
    size_in_bytes = _finite(size_in_bytes)
    if size_in_bytes is None:
        return UNKNOWN
    if abs(size_in_bytes) < 1024:
        return f"{round(size_in_bytes)} B"
    scaled, step = size_in_bytes / 1024, 0
    while abs(scaled) >= 1024 and step < len(_BINARY_UNITS) - 1:
        scaled, step = scaled / 1024, step + 1
    return f"{scaled:,.1f} {_BINARY_UNITS[step]}"


def memory(megabytes: int | None) -> str:
    """A node's or a quota's memory: ``512 MB``, ``4 GB`` (whole gigabytes), ``0 MB``."""
    known = _finite(megabytes)
    if known is None:
        return UNKNOWN
    whole = int(known)
    if whole and whole % 1024 == 0:
        return f"{whole // 1024} GB"
    return f"{whole} MB"


def rate(rows_per_second: float | None) -> str:
    """Rows per second with one decimal and thousands separators: ``1,234.5``."""
    rows_per_second = _finite(rows_per_second)
    if rows_per_second is None:
        return UNKNOWN
    return f"{rows_per_second:,.1f}"


def count(value: float | None) -> str:
    """A whole number with thousands separators: ``12,345``."""
    value = _finite(value)
    if value is None:
        return UNKNOWN
    return f"{round(value):,}"


def _finite(value: float | None) -> float | None:
    """``value`` if it is a finite number; None for None, NaN, infinities (and bools)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None
