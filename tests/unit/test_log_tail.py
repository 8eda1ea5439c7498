"""``tail_text``: the end of a driver's log read within a bound, whatever the file holds."""

from __future__ import annotations

from pathlib import Path

from streamjobs.launch.logs import tail_text


def test_only_the_last_bytes_are_read(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    log.write_bytes(b"a" * 100 + b"\nKeyError: 'x'\n")
    assert tail_text(log, 15) == "\nKeyError: 'x'\n"


def test_a_short_file_is_read_whole(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    log.write_text("one line\n")
    assert tail_text(log, 1024) == "one line\n"


def test_a_character_cut_at_the_start_is_replaced(tmp_path: Path) -> None:
    log = tmp_path / "stdout.log"
    log.write_bytes("é!".encode())
    assert tail_text(log, 2) == "\ufffd!"


def test_a_missing_or_unreadable_log_is_empty(tmp_path: Path) -> None:
    assert tail_text(tmp_path / "never-written.log") == ""
    assert tail_text(tmp_path) == ""  # a directory


def test_no_bytes_asked_is_nothing(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    log.write_text("something\n")
    assert tail_text(log, 0) == ""
    assert tail_text(log, -5) == ""
