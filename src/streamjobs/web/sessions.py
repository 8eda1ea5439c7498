"""Signed session cookies for the web UI, and the CSRF token each session carries.

A session is ``{user, csrf, expires}`` in a cookie signed with HMAC-SHA256 under a key kept in
``STREAMJOBS_HOME/session-key`` (created on first start, mode 600), so sessions survive a server
restart and nobody can forge one without the key. The cookie is HttpOnly and SameSite=Lax; every
form and every script request that changes something must also present the session's CSRF token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

COOKIE = "streamjobs_session"
LIFETIME = timedelta(hours=12)


@dataclass(frozen=True)
class Session:
    """A signed-in person: who, the token forms must echo, and when the session ends."""

    user: str
    csrf: str
    expires: datetime


class SessionCodec:
    """Turns sessions into cookie values and back, refusing any that was altered or expired."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def new(self, user: str, *, now: datetime) -> Session:
        return Session(user=user, csrf=secrets.token_urlsafe(24), expires=now + LIFETIME)

    def encode(self, session: Session) -> str:
        payload = json.dumps(
            {"user": session.user, "csrf": session.csrf, "expires": session.expires.isoformat()},
            separators=(",", ":"),
        ).encode()
        body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
        return f"{body}.{self._signature(body)}"

    def decode(self, value: str | None, *, now: datetime) -> Session | None:
        """The session in a cookie value; None when missing, altered, unreadable or expired."""
        if not value or "." not in value:
            return None
        body, signature = value.rsplit(".", 1)
        if not hmac.compare_digest(signature, self._signature(body)):
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
            session = Session(
                user=str(data["user"]),
                csrf=str(data["csrf"]),
                expires=datetime.fromisoformat(data["expires"]),
            )
        except (ValueError, KeyError, TypeError):
            return None
        return session if session.expires > now else None

    def _signature(self, body: str) -> str:
        digest = hmac.new(self._key, body.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def load_or_create_key(path: Path) -> bytes:
    """The signing key in ``path``, created (32 random bytes, mode 600) when there is none."""
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(32)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(key.hex())
        return key
