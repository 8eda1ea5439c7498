"""Reading drivers' and executors' log files, which can grow to gigabytes, a piece at a time.

The UI and the API show the last lines of a log, a byte range of it, or follow it as it grows;
none of these reads the whole file.
"""

from __future__ import annotations

import os
from pathlib import Path

BLOCK_SIZE = 64 * 1024
FOLLOW_LIMIT = 1024 * 1024
"""The most bytes one ``follow`` call returns; the next call goes on from there."""


def tail_lines(path: Path, n: int) -> list[str]:
    """The last ``n`` lines of the file, without their line ends, read backwards from its end.

    Bytes that are not UTF-8 are replaced, so a line cut anywhere still reads.
    """
    if n <= 0:
        return []
    with path.open("rb") as log:
        end = log.seek(0, os.SEEK_END)
        position = end
        data = b""
        # n line ends plus the one before the first wanted line, beyond a final line end.
        while position > 0 and data.count(b"\n") <= n:
            step = min(BLOCK_SIZE, position)
            position -= step
            log.seek(position)
            data = log.read(step) + data
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if position > 0:
        lines = lines[1:]  # the first one may be cut
    return [line.decode("utf-8", errors="replace") for line in lines[-n:]]


def tail_text(path: Path, limit: int = BLOCK_SIZE) -> str:
    """The file's last ``limit`` bytes as text ("" when it cannot be read); bytes that are not
    UTF-8, such as a character cut at the start, are replaced."""
    if limit <= 0:
        return ""
    try:
        with path.open("rb") as log:
            end = log.seek(0, os.SEEK_END)
            log.seek(max(end - limit, 0))
            data = log.read(limit)
    except OSError:  # not there (a launch that failed), or not readable
        return ""
    return data.decode("utf-8", errors="replace")


def read_range(path: Path, start: int, end: int | None = None) -> bytes:
    """Bytes ``start`` up to (not including) ``end`` of the file; ``end`` None means to its end.
    A range beyond the end gives what there is, possibly nothing."""
    with path.open("rb") as log:
        length = log.seek(0, os.SEEK_END)
        start = min(max(start, 0), length)  # a file system refuses to seek far beyond its end
        log.seek(start)
        if end is None:
            return log.read()
        return log.read(max(min(end, length) - start, 0))


def size(path: Path) -> int:
    """The file's size in bytes; 0 when it does not exist (yet)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def follow(path: Path, offset: int, limit: int = FOLLOW_LIMIT) -> tuple[bytes, int]:
    """What was written to the file since ``offset``, at most ``limit`` bytes, and the offset to
    continue from. A file not there yet gives nothing; a file that shrank (rewritten) is read
    again from its start."""
    current_size = size(path)
    if current_size < offset:
        offset = 0
    if current_size == offset:
        return b"", offset
    try:
        with path.open("rb") as log:
            log.seek(offset)
            data = log.read(min(limit, current_size - offset))
    except FileNotFoundError:
        return b"", offset
    return data, offset + len(data)
