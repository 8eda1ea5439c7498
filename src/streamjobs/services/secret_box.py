"""Seals secret values before they reach the store and opens them again for a driver's launch.

AES-256-GCM under one server key: ``STREAMJOBS_SECRET_KEY`` (the urlsafe base64 of 32 bytes)
when set, else the key file ``STREAMJOBS_HOME/secret.key``, created on first start with mode
600. Each value is sealed with a fresh nonce and bound to its bundle and name, so a ciphertext
copied onto another secret's row does not open. Losing the key loses every secret: back the key
file up with the database, but never in the same place.
"""

from __future__ import annotations

import base64
import binascii
import os
import secrets
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from streamjobs.domain.errors import StreamjobsError

KEY_BYTES = 32
NONCE_BYTES = 12
FORMAT_V1 = b"\x01"
"""First byte of every ciphertext: how the rest was sealed, so the scheme can change later."""


class SecretKeyError(StreamjobsError):
    """The server's secret key is unusable: the server does not start without a good one."""

    title = "Unusable secret key"


class SecretUnreadable(StreamjobsError):
    """A stored ciphertext does not open with this server's key."""

    title = "Secret unreadable"


class SecretBox:
    """Seals and opens secret values with one key."""

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise SecretKeyError(f"the secret key must be {KEY_BYTES} bytes, not {len(key)}")
        self._cipher = AESGCM(key)

    def seal(self, value: str, *, context: str) -> bytes:
        """``value`` encrypted and bound to ``context`` (e.g. ``bundle/name``)."""
        nonce = secrets.token_bytes(NONCE_BYTES)
        sealed = self._cipher.encrypt(nonce, value.encode("utf-8"), context.encode("utf-8"))
        return FORMAT_V1 + nonce + sealed

    def open(self, ciphertext: bytes, *, context: str) -> str:
        """The value ``seal`` was given with the same ``context``; ``SecretUnreadable`` when it
        was sealed under another key or context, or altered."""
        version, nonce = ciphertext[:1], ciphertext[1 : 1 + NONCE_BYTES]
        if version != FORMAT_V1 or len(nonce) != NONCE_BYTES:
            raise SecretUnreadable(f"secret {context!r} is stored in an unknown format")
        try:
            plain = self._cipher.decrypt(nonce, ciphertext[1 + NONCE_BYTES :], context.encode())
        except InvalidTag:
            raise SecretUnreadable(
                f"secret {context!r} does not open with this server's key: was the key "
                "(STREAMJOBS_SECRET_KEY or the key file) changed? Put the secret again"
            ) from None
        return plain.decode("utf-8")


def load_key(*, configured: str | None, key_file: Path) -> bytes:
    """The server's key: ``configured`` (urlsafe base64 of 32 bytes) when given, else the one in
    ``key_file``, which is created (mode 600) when it does not exist yet."""
    if configured is not None:
        return _decoded(configured, source="STREAMJOBS_SECRET_KEY")
    try:
        return _decoded(key_file.read_text(encoding="ascii"), source=str(key_file))
    except FileNotFoundError:
        pass
    key_file.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(KEY_BYTES)
    try:
        descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another server process made it first
        return _decoded(key_file.read_text(encoding="ascii"), source=str(key_file))
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        file.write(base64.urlsafe_b64encode(key).decode("ascii") + "\n")
    return key


def _decoded(text: str, *, source: str) -> bytes:
    hint = (
        f"it must be the urlsafe base64 of {KEY_BYTES} random bytes, e.g. from "
        "python -c 'import base64,os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())'"
    )
    try:
        key = base64.urlsafe_b64decode(text.strip().encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise SecretKeyError(f"{source} is not base64: {hint}") from None
    if len(key) != KEY_BYTES:
        raise SecretKeyError(f"{source} holds {len(key)} bytes, not {KEY_BYTES}: {hint}")
    return key
