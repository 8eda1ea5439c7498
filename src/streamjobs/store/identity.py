"""Users and their access tokens.

The store never sees a token's secret: callers hash it (with a well-kept library) and the store
keeps and looks up only that hash. A token found by its hash comes with its user's name and admin
flag, so a request can be authenticated with one query.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from datetime import datetime
from uuid import uuid4

from sqlalchemy import Select, delete, func, literal, select, update

from streamjobs.domain.access import PrincipalKind
from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.store.base import Repository
from streamjobs.store.column_types import UtcDateTime
from streamjobs.store.tables import AccessTokenRow, UserRow


@dataclass(frozen=True)
class UserRecord:
    """A user; ``password_hash`` is None for users that sign in with tokens only."""

    id: str
    name: str
    is_admin: bool
    created_at: datetime
    password_hash: str | None = field(default=None, repr=False)
    kind: PrincipalKind = PrincipalKind.USER


@dataclass(frozen=True)
class TokenRecord:
    """An access token (never its secret or hash) and the user it belongs to."""

    id: str
    name: str
    user_id: str
    user_name: str
    user_is_admin: bool
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None

    def is_valid_at(self, moment: datetime) -> bool:
        """Whether the token may be used at ``moment``: not revoked and not yet expired."""
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or moment < self.expires_at


class UserRepository(Repository):
    """Adds and reads users."""

    def add(
        self,
        name: str,
        *,
        is_admin: bool,
        password_hash: str | None = None,
        at: datetime,
        kind: PrincipalKind = PrincipalKind.USER,
    ) -> UserRecord:
        """Store a new user or service account; ``AlreadyExists`` if the name is taken."""
        if self.find(name) is not None:
            raise AlreadyExists("user", name)
        row = UserRow(
            id=str(uuid4()),
            name=name,
            is_admin=is_admin,
            password_hash=password_hash,
            created_at=at,
            kind=str(kind),
        )
        self._insert_unique(row, kind="user", name=name)
        return _user_record(row)

    def set_password_hash(self, name: str, password_hash: str) -> None:
        """Replace the user's password hash."""
        self._session.execute(
            update(UserRow).where(UserRow.name == name).values(password_hash=password_hash)
        )

    def get(self, name: str) -> UserRecord:
        """The user called ``name``; ``NotFound`` if there is none."""
        user = self.find(name)
        if user is None:
            raise NotFound("user", name)
        return user

    def find(self, name: str) -> UserRecord | None:
        """The user called ``name``, or None."""
        row = self._session.scalars(select(UserRow).where(UserRow.name == name)).one_or_none()
        return None if row is None else _user_record(row)

    def list(self) -> builtins.list[UserRecord]:
        """Every user and service account, by name."""
        rows = self._session.scalars(select(UserRow).order_by(UserRow.name))
        return [_user_record(row) for row in rows]

    def set_admin(self, name: str, is_admin: bool) -> None:
        self.get(name)
        self._session.execute(update(UserRow).where(UserRow.name == name).values(is_admin=is_admin))

    def delete(self, name: str) -> None:
        """Delete the user and (by cascade) their tokens; ``NotFound`` if there is none."""
        if not self._rows_changed(delete(UserRow).where(UserRow.name == name)):
            raise NotFound("user", name)


class TokenRepository(Repository):
    """Adds, finds, uses and revokes access tokens."""

    def add(
        self,
        *,
        user_name: str,
        name: str,
        token_hash: str,
        at: datetime,
        expires_at: datetime | None = None,
    ) -> TokenRecord:
        """Store a new token of ``user_name`` (``NotFound`` if no such user).

        ``AlreadyExists`` if the user already has a token called ``name``.
        """
        user = UserRepository(self._session).get(user_name)
        taken = select(AccessTokenRow.id).where(
            AccessTokenRow.user_id == user.id, AccessTokenRow.name == name
        )
        if self._session.scalar(taken) is not None:
            raise AlreadyExists("access token", name)
        row = AccessTokenRow(
            id=str(uuid4()),
            user_id=user.id,
            name=name,
            token_hash=token_hash,
            created_at=at,
            expires_at=expires_at,
        )
        self._insert_unique(row, kind="access token", name=name)
        return _token_record(row, user)

    def find_by_hash(self, token_hash: str) -> TokenRecord | None:
        """The token whose secret hashes to ``token_hash`` (even if revoked or expired), or None."""
        found = self._session.execute(
            _select_tokens().where(AccessTokenRow.token_hash == token_hash)
        ).one_or_none()
        return None if found is None else _token_record(*found)

    def list_for_user(self, user_name: str) -> builtins.list[TokenRecord]:
        """The tokens of ``user_name``, oldest first; ``NotFound`` if no such user."""
        UserRepository(self._session).get(user_name)
        found = self._session.execute(
            _select_tokens()
            .where(UserRow.name == user_name)
            .order_by(AccessTokenRow.created_at, AccessTokenRow.name)
        )
        return [_token_record(token, user) for token, user in found]

    def touch(self, token_id: str, at: datetime) -> None:
        """Record that the token was used at ``at``."""
        self._change(token_id, last_used_at=at)

    def revoke(self, token_id: str, at: datetime) -> None:
        """Revoke the token from ``at`` on; revoking it again keeps the first time."""
        first_revocation = func.coalesce(AccessTokenRow.revoked_at, literal(at, UtcDateTime()))
        self._change(token_id, revoked_at=first_revocation)

    def _change(self, token_id: str, **values: object) -> None:
        statement = update(AccessTokenRow).where(AccessTokenRow.id == token_id).values(**values)
        if not self._rows_changed(statement.execution_options(synchronize_session=False)):
            raise NotFound("access token", token_id)


def _select_tokens() -> Select[AccessTokenRow, UserRow]:
    return (
        select(AccessTokenRow, UserRow)
        .join(UserRow, AccessTokenRow.user_id == UserRow.id)
        .execution_options(populate_existing=True)
    )


def _user_record(row: UserRow) -> UserRecord:
    return UserRecord(
        id=row.id,
        name=row.name,
        is_admin=row.is_admin,
        created_at=row.created_at,
        password_hash=row.password_hash,
        kind=PrincipalKind(row.kind),
    )


def _token_record(token: AccessTokenRow, user: UserRow | UserRecord) -> TokenRecord:
    return TokenRecord(
        id=token.id,
        name=token.name,
        user_id=user.id,
        user_name=user.name,
        user_is_admin=user.is_admin,
        created_at=token.created_at,
        expires_at=token.expires_at,
        revoked_at=token.revoked_at,
        last_used_at=token.last_used_at,
    )
