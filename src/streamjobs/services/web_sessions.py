"""Web sessions: started at sign-in, looked up on every request, ended at once when they must.

The cookie carries only a random secret; the store keeps its SHA-256 digest with the user's id,
the session's CSRF token and its times (``store.web_sessions``). A session ends when its lifetime
or idle timeout (both settings) has passed, at sign-out, when its user's password changes or the
user is deleted, and when someone signs the user out everywhere. Being looked up in the store on
every request is what makes ending it immediate, on every server sharing the database.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from streamjobs.domain.access import (
    Actor,
    DomainPermission,
    Principal,
    require_admin,
    require_domain_permission,
)
from streamjobs.domain.clock import Clock
from streamjobs.services.identity import principal_of
from streamjobs.store.db import Store

LAST_SEEN_RESOLUTION = timedelta(minutes=1)
"""A session's last use is recorded to the minute (to half the idle timeout when that is
shorter), so requests do not each cost a write; the idle timeout is as exact."""


@dataclass(frozen=True)
class NewSession:
    """A session just started: ``secret`` goes into the cookie and is never stored."""

    secret: str
    csrf: str
    expires_at: datetime


@dataclass(frozen=True)
class LiveSession:
    """A session found valid for this request: whose, and the token its forms must carry."""

    user_id: str
    principal: Principal
    csrf: str
    expires_at: datetime


def session_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class SessionService:
    """Starts, finds and ends web sessions."""

    def __init__(
        self, *, store: Store, clock: Clock, lifetime: timedelta, idle_timeout: timedelta
    ) -> None:
        self._store = store
        self._clock = clock
        self.lifetime = lifetime
        self._idle_timeout = idle_timeout
        self._last_seen_resolution = min(LAST_SEEN_RESOLUTION, idle_timeout / 2)

    def start(self, user_id: str) -> NewSession:
        """A new session of the user with this id (sessions that have run out are cleared)."""
        now = self._clock.now()
        secret = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(24)
        expires_at = now + self.lifetime
        with self._store.transaction() as repos:
            repos.web_sessions.end_stale(now=now, idle_since=now - self._idle_timeout)
            repos.web_sessions.add(
                id_digest=session_digest(secret),
                user_id=user_id,
                csrf=csrf,
                at=now,
                expires_at=expires_at,
            )
        return NewSession(secret=secret, csrf=csrf, expires_at=expires_at)

    def find(self, secret: str) -> LiveSession | None:
        """The live session ``secret`` opens; None when there is none, it ended or ran out."""
        now = self._clock.now()
        digest = session_digest(secret)
        with self._store.transaction() as repos:
            found = repos.web_sessions.find(digest)
            if found is None:
                return None
            session, user = found
            if session.expires_at <= now or now - session.last_seen_at >= self._idle_timeout:
                repos.web_sessions.end(digest)
                return None
            if now - session.last_seen_at >= self._last_seen_resolution:
                repos.web_sessions.touch(digest, now)
            return LiveSession(
                user_id=user.id,
                principal=principal_of(repos, user),
                csrf=session.csrf,
                expires_at=session.expires_at,
            )

    def end(self, secret: str) -> None:
        """End the session ``secret`` opens (sign-out); nothing when there is none."""
        with self._store.transaction() as repos:
            repos.web_sessions.end(session_digest(secret))

    def end_everywhere(self, name: str, *, actor: Actor) -> int:
        """End every session of the user ``name``; how many there were. Anyone may do it for
        themselves; for someone else it needs Manage users, and an admin for an admin."""
        someone_else = name != actor.name
        if someone_else:
            require_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        with self._store.transaction() as repos:
            user = repos.users.get(name)
            if someone_else and user.is_admin:
                require_admin(actor.principal, "signing an admin out")
            ended = repos.web_sessions.end_all_of(user.id)
            repos.audit.append(
                at=self._clock.now(),
                actor=actor.name,
                action="user.signed-out-everywhere",
                resource_kind="user",
                resource_name=name,
                detail={"sessions": ended},
                source=actor.source,
            )
        return ended
