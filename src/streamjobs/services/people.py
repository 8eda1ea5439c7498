"""Who is who: users, service accounts and groups, their domain permissions, who may run jobs
as which service account, and access tokens issued for someone else.

Every change needs Manage users (admins hold every permission), is audited in its transaction,
and makes the identity service check tokens again, so it takes effect on the next request.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass

from streamjobs.domain.access import (
    Actor,
    DomainPermission,
    PrincipalKind,
    Subject,
    SubjectKind,
    has_domain_permission,
    name_errors,
    require_admin,
    require_domain_permission,
)
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import Conflict, FieldError, Forbidden, InvalidInput
from streamjobs.services.identity import IdentityService
from streamjobs.services.resources import audit
from streamjobs.store.access import DomainGrant, GroupRecord
from streamjobs.store.db import Repositories, Store
from streamjobs.store.identity import UserRecord
from streamjobs.store.sign_in_throttles import ACCOUNT


@dataclass(frozen=True)
class Person:
    """A user or service account with its groups, its domain permissions and (for a service
    account) who may run jobs as it."""

    user: UserRecord
    groups: frozenset[str]
    permissions: frozenset[DomainPermission]
    runners: tuple[Subject, ...]


class PeopleService:
    """Manages users, service accounts, groups and domain grants on behalf of an actor."""

    def __init__(self, *, store: Store, clock: Clock, identity: IdentityService) -> None:
        self._store = store
        self._clock = clock
        self._identity = identity

    def list_users(self, *, actor: Actor) -> builtins.list[Person]:
        """Every user and service account (for those who manage users or bundles' grants)."""
        _require_directory_reader(actor)
        with self._store.transaction() as repos:
            return [_person(repos, user) for user in repos.users.list()]

    def get_user(self, name: str, *, actor: Actor) -> Person:
        if name != actor.name:
            _require_directory_reader(actor)
        with self._store.transaction() as repos:
            return _person(repos, repos.users.get(name))

    def create_user(
        self,
        name: str,
        *,
        actor: Actor,
        kind: PrincipalKind = PrincipalKind.USER,
        password: str | None = None,
        is_admin: bool = False,
    ) -> Person:
        """A user (who signs in with ``password``, if given, or tokens) or a service account
        (tokens only: it has no password)."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        if is_admin:
            require_admin(actor.principal, "creating an admin")
        errors = name_errors(name, "name")
        if kind is PrincipalKind.SERVICE_ACCOUNT and password is not None:
            errors.append(FieldError("password", "a service account has no password"))
        if errors:
            raise InvalidInput(errors)
        password_hash = None if password is None else self._identity.password_hash(password)
        with self._store.transaction() as repos:
            repos.users.add(
                name,
                is_admin=is_admin,
                password_hash=password_hash,
                at=self._clock.now(),
                kind=kind,
            )
            # Failures counted against the name before it was anyone's are not the new user's.
            repos.sign_in_throttles.forget(ACCOUNT, name)
            what = "service-account" if kind is PrincipalKind.SERVICE_ACCOUNT else "user"
            self._audit(repos, actor, f"{what}.created", "user", name, {"admin": is_admin})
        return self.get_user(name, actor=actor)

    def delete_user(self, name: str, *, actor: Actor) -> None:
        """Delete a user or service account, its tokens, sessions, memberships and every grant
        to it."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        if name == actor.name:
            raise Conflict("you cannot delete yourself; ask another user manager")
        with self._store.transaction() as repos:
            user = repos.users.get(name)
            if user.is_admin:
                require_admin(actor.principal, "deleting an admin")
            repos.grants.forget_subject(Subject(SubjectKind.USER, name))
            # A user created later under this name starts with no session and no failures.
            repos.web_sessions.end_all_of(user.id)
            repos.sign_in_throttles.forget(ACCOUNT, name)
            repos.users.delete(name)
            self._audit(repos, actor, "user.deleted", "user", name, {})
        self._identity.forget_verified()

    def list_groups(self, *, actor: Actor) -> builtins.list[GroupRecord]:
        _require_directory_reader(actor)
        with self._store.transaction() as repos:
            return repos.groups.list()

    def create_group(self, name: str, *, actor: Actor) -> GroupRecord:
        require_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        if errors := name_errors(name, "name"):
            raise InvalidInput(errors)
        with self._store.transaction() as repos:
            group = repos.groups.add(name, self._clock.now())
            self._audit(repos, actor, "group.created", "group", name, {})
            return group

    def delete_group(self, name: str, *, actor: Actor) -> None:
        require_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        with self._store.transaction() as repos:
            repos.groups.delete(name)
            repos.grants.forget_subject(Subject(SubjectKind.GROUP, name))
            self._audit(repos, actor, "group.deleted", "group", name, {})
        self._identity.forget_verified()

    def set_membership(self, group: str, user: str, *, member: bool, actor: Actor) -> GroupRecord:
        """Add ``user`` to ``group`` (``member``) or take them out of it."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        with self._store.transaction() as repos:
            repos.users.get(user)
            if member:
                changed = repos.groups.add_member(group, user)
            else:
                repos.groups.remove_member(group, user)
                changed = True
            if changed:
                action = "group.member-added" if member else "group.member-removed"
                self._audit(repos, actor, action, "group", group, {"user": user})
            record = repos.groups.get(group)
        self._identity.forget_verified()
        return record

    def domain_grants(self, *, actor: Actor) -> builtins.list[DomainGrant]:
        _require_directory_reader(actor)
        with self._store.transaction() as repos:
            return repos.grants.domain_grants()

    def set_domain_grant(
        self, subject: Subject, permission: DomainPermission, *, granted: bool, actor: Actor
    ) -> None:
        """Grant ``permission`` to ``subject`` (``granted``) or take it back."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        with self._store.transaction() as repos:
            require_subject(repos, subject, "subject")
            if granted:
                changed = repos.grants.grant_domain(subject, permission)
            else:
                changed = repos.grants.revoke_domain(subject, permission)
            if changed:
                action = "permission.granted" if granted else "permission.revoked"
                detail = {"permission": str(permission)}
                self._audit(repos, actor, action, "subject", str(subject), detail)
        self._identity.forget_verified()

    def set_service_account_grant(
        self, service_account: str, subject: Subject, *, granted: bool, actor: Actor
    ) -> None:
        """Let ``subject`` run jobs as ``service_account`` (``granted``), or no longer."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        with self._store.transaction() as repos:
            account = repos.users.get(service_account)
            if account.kind is not PrincipalKind.SERVICE_ACCOUNT:
                raise InvalidInput(
                    [FieldError("path.name", f"{service_account!r} is not a service account")]
                )
            require_subject(repos, subject, "subject")
            if granted:
                changed = repos.grants.grant_service_account(service_account, subject)
            else:
                changed = repos.grants.revoke_service_account(service_account, subject)
            if changed:
                action = "run-as.granted" if granted else "run-as.revoked"
                detail = {"subject": str(subject)}
                self._audit(repos, actor, action, "user", service_account, detail)

    def require_token_issuer(self, user: str, *, actor: Actor) -> None:
        """Anyone may manage their own tokens; someone else's need Manage users, and an
        admin's need an admin."""
        if user == actor.name:
            return
        require_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        with self._store.transaction() as repos:
            if repos.users.get(user).is_admin:
                require_admin(actor.principal, "managing an admin's tokens")

    def _audit(
        self,
        repos: Repositories,
        actor: Actor,
        action: str,
        kind: str,
        name: str,
        detail: Mapping[str, object],
    ) -> None:
        audit(repos, self._clock, actor, action, kind=kind, name=name, detail=dict(detail))


def require_subject(repos: Repositories, subject: Subject, path: str) -> None:
    """``InvalidInput`` at ``path`` unless the user or group ``subject`` names exists."""
    exists = (
        repos.users.find(subject.name) is not None
        if subject.kind is SubjectKind.USER
        else repos.groups.exists(subject.name)
    )
    if not exists:
        raise InvalidInput([FieldError(path, f"no {subject.kind} is called {subject.name!r}")])


def _require_directory_reader(actor: Actor) -> None:
    if not (
        has_domain_permission(actor.principal, DomainPermission.MANAGE_USERS)
        or has_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
    ):
        raise Forbidden("listing users and groups needs 'Manage users' or 'Manage bundles'")


def _person(repos: Repositories, user: UserRecord) -> Person:
    groups = repos.groups.groups_of(user.name)
    runners = (
        tuple(
            subject for _, subject in repos.grants.service_account_grants(service_account=user.name)
        )
        if user.kind is PrincipalKind.SERVICE_ACCOUNT
        else ()
    )
    return Person(
        user=user,
        groups=groups,
        permissions=repos.grants.domain_permissions(user.name, groups),
        runners=runners,
    )


__all__ = ["PeopleService", "Person", "require_subject"]
