"""The secret box and its keys: values open only under their key and context, the first key seals
and every key opens, and the keys come from STREAMJOBS_SECRET_KEY or a private key file made
once and replaced whole."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from streamjobs.services.secret_box import (
    SecretBox,
    SecretKeyError,
    SecretUnreadable,
    load_keys,
    new_key,
    read_key_file,
    write_key_file,
)

KEY = bytes(range(32))
OLD_KEY = bytes(range(32, 64))


def test_a_sealed_value_opens_only_under_its_key_and_context() -> None:
    box = SecretBox([KEY])
    sealed = box.seal("hunter2 ✓", context="payments/db")
    assert b"hunter2" not in sealed
    assert box.open(sealed, context="payments/db") == "hunter2 ✓"
    assert box.seal("hunter2 ✓", context="payments/db") != sealed  # a fresh nonce each time
    with pytest.raises(SecretUnreadable, match="does not open"):
        box.open(sealed, context="other/db")
    with pytest.raises(SecretUnreadable, match="does not open"):
        SecretBox([bytes(32)]).open(sealed, context="payments/db")
    tampered = sealed[:-1] + bytes([sealed[-1] ^ 1])
    with pytest.raises(SecretUnreadable):
        box.open(tampered, context="payments/db")
    with pytest.raises(SecretUnreadable, match="unknown format"):
        box.open(b"\x02" + sealed[1:], context="payments/db")


def test_the_key_file_is_made_once_readable_by_its_owner_only(tmp_path: Path) -> None:
    key_file = tmp_path / "home" / "secret.key"
    (key,) = load_keys(configured=None, key_file=key_file)
    assert len(key) == 32
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert load_keys(configured=None, key_file=key_file) == [key]
    assert base64.urlsafe_b64decode(key_file.read_text().strip()) == key


def test_a_configured_key_wins_and_makes_no_file(tmp_path: Path) -> None:
    text = base64.urlsafe_b64encode(KEY).decode()
    assert load_keys(configured=text, key_file=tmp_path / "secret.key") == [KEY]
    assert not (tmp_path / "secret.key").exists()


@pytest.mark.parametrize(
    ("configured", "message"),
    [
        ("not base64 at all!", "STREAMJOBS_SECRET_KEY is not base64"),
        (base64.urlsafe_b64encode(bytes(range(16))).decode(), "holds 16 bytes, not 32"),
        ("", "STREAMJOBS_SECRET_KEY holds no key"),
        (
            base64.urlsafe_b64encode(KEY).decode()
            + ","
            + base64.urlsafe_b64encode(bytes(16)).decode(),
            r"STREAMJOBS_SECRET_KEY \(key 2\) holds 16 bytes, not 32",
        ),
    ],
)
def test_a_wrong_key_says_what_it_must_be(tmp_path: Path, configured: str, message: str) -> None:
    with pytest.raises(SecretKeyError, match=message) as refused:
        load_keys(configured=configured, key_file=tmp_path / "secret.key")
    assert "urlsafe base64 of 32 random bytes" in refused.value.detail
    assert configured not in refused.value.detail or not configured


def test_a_damaged_key_file_is_refused(tmp_path: Path) -> None:
    key_file = tmp_path / "secret.key"
    key_file.write_text("short\n")
    with pytest.raises(SecretKeyError, match=str(key_file)):
        load_keys(configured=None, key_file=key_file)


def test_the_first_key_seals_and_every_key_opens() -> None:
    under_old = SecretBox([OLD_KEY]).seal("hunter2", context="payments/db")
    ring = SecretBox([KEY, OLD_KEY])

    under_new = ring.seal("hunter2", context="payments/db")

    assert ring.open(under_old, context="payments/db") == "hunter2"
    assert SecretBox([KEY]).open(under_new, context="payments/db") == "hunter2"
    assert not ring.opens_with_first_key(under_old, context="payments/db")
    assert ring.opens_with_first_key(under_new, context="payments/db")
    assert not ring.opens_with_first_key(under_new, context="other/db")


def test_configured_keys_are_comma_separated_the_sealing_one_first(tmp_path: Path) -> None:
    text = ",".join(base64.urlsafe_b64encode(key).decode() for key in (KEY, OLD_KEY))

    assert load_keys(configured=text, key_file=tmp_path / "secret.key") == [KEY, OLD_KEY]


def test_a_key_file_is_replaced_whole_and_private(tmp_path: Path) -> None:
    key_file = tmp_path / "secret.key"
    write_key_file(key_file, [KEY])

    write_key_file(key_file, [OLD_KEY, KEY])

    assert read_key_file(key_file) == [OLD_KEY, KEY]
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert [path.name for path in tmp_path.iterdir()] == ["secret.key"]


def test_a_box_reads_its_key_file_again_for_a_secret_sealed_under_a_newer_key(
    tmp_path: Path,
) -> None:
    key_file = tmp_path / "secret.key"
    write_key_file(key_file, [OLD_KEY])
    running = SecretBox(read_key_file(key_file), reload=lambda: read_key_file(key_file))
    rotated = new_key()
    write_key_file(key_file, [rotated, OLD_KEY])
    sealed = SecretBox([rotated]).seal("hunter2", context="payments/db")

    assert running.open(sealed, context="payments/db") == "hunter2"
    with pytest.raises(SecretUnreadable, match="does not open with this server's keys"):
        running.open(SecretBox([bytes(32)]).seal("x", context="a/b"), context="a/b")


def test_a_key_file_that_cannot_be_read_again_keeps_the_keys_held(tmp_path: Path) -> None:
    key_file = tmp_path / "secret.key"
    write_key_file(key_file, [KEY])
    running = SecretBox([KEY], reload=lambda: read_key_file(key_file))
    sealed = running.seal("hunter2", context="payments/db")
    key_file.unlink()

    with pytest.raises(SecretUnreadable, match="does not open with this server's keys"):
        running.open(SecretBox([OLD_KEY]).seal("x", context="a/b"), context="a/b")
    assert running.open(sealed, context="payments/db") == "hunter2"
