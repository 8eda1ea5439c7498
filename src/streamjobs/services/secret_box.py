"""Seals secret values before they reach the store and opens them again for a driver's launch.

AES-256-GCM under the server's keys: ``STREAMJOBS_SECRET_KEY`` (the urlsafe base64 of 32 bytes;
several, comma-separated) when set, else the key file ``STREAMJOBS_HOME/secret.key`` (one key a
line), created on first start with mode 600. The first key seals; every key opens, so a key can
be rotated: ``streamjobs admin rotate-secret-key`` puts a new key first, keeps the old ones after
it and reseals every stored secret under the new one. A server that meets a secret none of its
keys opens reads the key file again, so servers running through a rotation keep working. Each
value is sealed with a fresh nonce and bound to its bundle and name, so a ciphertext copied onto
another secret's row does not open. Losing the keys loses every secret: back the key file up
with the database, but never in the same place.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from streamjobs.domain.errors import StreamjobsError

KEY_BYTES = 32
NONCE_BYTES = 12
FORMAT_V1 = b"\x01"
"""First byte of every ciphertext: how the rest was sealed, so the scheme can change later."""


KEY_HINT = (
    f"a key is the urlsafe base64 of {KEY_BYTES} random bytes, e.g. from "
    "python -c 'import base64,os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())'"
)


class SecretKeyError(StreamjobsError):
    """The server's secret key is unusable: the server does not start without a good one."""

    title = "Unusable secret key"


class SecretUnreadable(StreamjobsError):
    """A stored ciphertext does not open with this server's key."""

    title = "Secret unreadable"


class SecretBox:
    """Seals with the first of its keys and opens with any of them."""

    def __init__(self, keys: Sequence[bytes], *, reload: KeyLoader | None = None) -> None:
        """``reload`` reads the keys again, for a ciphertext none of ``keys`` opens."""
        self._ciphers = _ciphers(keys)
        self._reload = reload

    def seal(self, value: str, *, context: str) -> bytes:
        """``value`` encrypted and bound to ``context`` (e.g. ``bundle/name``)."""
        nonce = secrets.token_bytes(NONCE_BYTES)
        sealed = self._ciphers[0].encrypt(nonce, value.encode("utf-8"), context.encode("utf-8"))
        return FORMAT_V1 + nonce + sealed

    def open(self, ciphertext: bytes, *, context: str) -> str:
        """The value ``seal`` was given with the same ``context``; ``SecretUnreadable`` when it
        was sealed under a key this server does not hold or another context, or altered."""
        version, nonce = ciphertext[:1], ciphertext[1 : 1 + NONCE_BYTES]
        if version != FORMAT_V1 or len(nonce) != NONCE_BYTES:
            raise SecretUnreadable(f"secret {context!r} is stored in an unknown format")
        plain = self._opened(ciphertext, context)
        if plain is None and self._reload is not None:
            with contextlib.suppress(OSError, SecretKeyError):  # keep the keys it has
                self._ciphers = _ciphers(self._reload())
            plain = self._opened(ciphertext, context)
        if plain is None:
            raise SecretUnreadable(
                f"secret {context!r} does not open with this server's keys: was the key "
                "(STREAMJOBS_SECRET_KEY or the key file) changed? Put the secret again"
            )
        return plain

    def opens_with_first_key(self, ciphertext: bytes, *, context: str) -> bool:
        """Whether ``ciphertext`` is sealed under the key that seals now."""
        return self._opened(ciphertext, context, self._ciphers[:1]) is not None

    def _opened(
        self, ciphertext: bytes, context: str, ciphers: Sequence[AESGCM] | None = None
    ) -> str | None:
        nonce, sealed = ciphertext[1 : 1 + NONCE_BYTES], ciphertext[1 + NONCE_BYTES :]
        for cipher in self._ciphers if ciphers is None else ciphers:
            try:
                return cipher.decrypt(nonce, sealed, context.encode("utf-8")).decode("utf-8")
            except InvalidTag:
                continue
        return None


KeyLoader = Callable[[], list[bytes]]


def load_keys(*, configured: str | None, key_file: Path) -> list[bytes]:
    """The server's keys, the sealing one first: ``configured`` (comma-separated urlsafe base64
    of 32 bytes each) when given, else those in ``key_file``, one a line, which is created (mode
    600, one new key) when it does not exist yet."""
    if configured is not None:
        return _decoded_keys(configured.split(","), source="STREAMJOBS_SECRET_KEY")
    try:
        return read_key_file(key_file)
    except FileNotFoundError:
        pass
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key = new_key()
    try:
        descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another server process made it first
        return read_key_file(key_file)
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        file.write(_encoded(key))
    return [key]


def read_key_file(key_file: Path) -> list[bytes]:
    """The keys in ``key_file``, one a line, the sealing one first."""
    return _decoded_keys(key_file.read_text(encoding="ascii").splitlines(), source=str(key_file))


def write_key_file(key_file: Path, keys: Sequence[bytes]) -> None:
    """Replace ``key_file`` with ``keys`` at once and durably: a reader sees the old file or the
    new one, never a part, and the new one keeps the old one's owner (mode 600)."""
    owner = key_file.stat() if key_file.exists() else None
    staging = key_file.with_name(f".{key_file.name}.{secrets.token_hex(4)}")
    descriptor = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as file:
            file.write("".join(_encoded(key) for key in keys))
            file.flush()
            if owner and (owner.st_uid, owner.st_gid) != (os.getuid(), os.getgid()):
                os.fchown(file.fileno(), owner.st_uid, owner.st_gid)
            os.fsync(file.fileno())
        os.replace(staging, key_file)
    finally:
        staging.unlink(missing_ok=True)
    directory = os.open(key_file.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def _ciphers(keys: Sequence[bytes]) -> list[AESGCM]:
    if not keys:
        raise SecretKeyError("the server has no secret key")
    for key in keys:
        if len(key) != KEY_BYTES:
            raise SecretKeyError(f"the secret key must be {KEY_BYTES} bytes, not {len(key)}")
    return [AESGCM(key) for key in keys]


def _encoded(key: bytes) -> str:
    return base64.urlsafe_b64encode(key).decode("ascii") + "\n"


def _decoded_keys(texts: Sequence[str], *, source: str) -> list[bytes]:
    given = [text for text in texts if text.strip()]
    keys = [
        _decoded(text, source=source if len(given) == 1 else f"{source} (key {number})")
        for number, text in enumerate(given, start=1)
    ]
    if not keys:
        raise SecretKeyError(f"{source} holds no key: {KEY_HINT}")
    return keys


def _decoded(text: str, *, source: str) -> bytes:
    try:
        key = base64.urlsafe_b64decode(text.strip().encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise SecretKeyError(f"{source} is not base64: {KEY_HINT}") from None
    if len(key) != KEY_BYTES:
        raise SecretKeyError(f"{source} holds {len(key)} bytes, not {KEY_BYTES}: {KEY_HINT}")
    return key
