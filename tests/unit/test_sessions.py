"""Web UI session cookies: what is signed comes back, anything altered or expired does not."""

from __future__ import annotations

import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamjobs.web.sessions import LIFETIME, SessionCodec, load_or_create_key

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def test_a_session_round_trips() -> None:
    codec = SessionCodec(b"k" * 32)
    session = codec.new("alice", now=NOW)
    assert codec.decode(codec.encode(session), now=NOW) == session
    assert session.expires == NOW + LIFETIME


def test_an_altered_or_foreign_cookie_is_refused() -> None:
    codec = SessionCodec(b"k" * 32)
    value = codec.encode(codec.new("alice", now=NOW))
    body, _ = value.rsplit(".", 1)
    forged = SessionCodec(b"x" * 32).encode(codec.new("admin", now=NOW))
    for bad in [forged, body + ".AAAA", "x" + value, "", None, "no-dot", value + "="]:
        assert codec.decode(bad, now=NOW) is None, bad


def test_an_expired_session_is_refused() -> None:
    codec = SessionCodec(b"k" * 32)
    value = codec.encode(codec.new("alice", now=NOW))
    assert codec.decode(value, now=NOW + LIFETIME + timedelta(seconds=1)) is None


def test_the_key_is_created_once_with_mode_600(tmp_path: Path) -> None:
    path = tmp_path / "home" / "session-key"
    key = load_or_create_key(path)
    assert len(key) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_key(path) == key
