"""Reading logs a piece at a time: the last lines, a byte range, what was added since."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.launch.logs import BLOCK_SIZE, follow, read_range, tail_lines


def test_the_last_lines_of_a_file_larger_than_a_block(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    lines = [f"line {i} " + "x" * 50 for i in range(5 * BLOCK_SIZE // 50)]
    log.write_text("\n".join(lines) + "\n")

    assert tail_lines(log, 3) == lines[-3:]
    assert tail_lines(log, 2000) == lines[-2000:]
    assert tail_lines(log, 0) == []


def test_the_last_lines_of_a_small_file_without_a_final_line_end(tmp_path: Path) -> None:
    log = tmp_path / "small.log"
    log.write_bytes(b"one\ntwo\nthr\xffee")

    assert tail_lines(log, 2) == ["two", "thr\ufffdee"]
    assert tail_lines(log, 10) == ["one", "two", "thr\ufffdee"]
    (tmp_path / "empty.log").write_bytes(b"")
    assert tail_lines(tmp_path / "empty.log", 5) == []


def test_a_byte_range(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"0123456789")

    assert read_range(log, 2, 5) == b"234"
    assert read_range(log, 7) == b"789"
    assert read_range(log, 8, 100) == b"89"
    assert read_range(log, 20, 30) == b""
    assert read_range(log, 5, 2**70) == b"56789"  # no buffer the size of the range
    assert read_range(log, 2**62, 2**63) == b""  # no seek far beyond the end
    with pytest.raises(FileNotFoundError):
        read_range(tmp_path / "missing.log", 0, 1)


def test_following_a_growing_file(tmp_path: Path) -> None:
    log = tmp_path / "driver.log"
    assert follow(log, 0) == (b"", 0)

    log.write_bytes(b"first\n")
    data, offset = follow(log, 0)
    assert (data, offset) == (b"first\n", 6)
    assert follow(log, offset) == (b"", 6)

    with log.open("ab") as appending:
        appending.write(b"second\nthird\n")
    assert follow(log, offset, limit=7) == (b"second\n", 13)
    assert follow(log, 13) == (b"third\n", 19)

    log.write_bytes(b"new\n")
    assert follow(log, 19) == (b"new\n", 4)
