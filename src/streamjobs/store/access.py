"""Groups, their members, and the grants that say who may do what.

Three kinds of grant, each a row naming a subject (a user or a group): domain permissions, bundle
permissions on a bundle's jobs, and the right to run jobs as a service account. The store keeps
them; ``domain.access`` decides what they allow.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, delete, or_, select

from streamjobs.domain.access import (
    BundleGrant,
    DomainPermission,
    Permission,
    Subject,
    SubjectKind,
)
from streamjobs.domain.errors import AlreadyExists, NotFound
from streamjobs.store.base import Repository
from streamjobs.store.tables import (
    BundleGrantRow,
    DomainGrantRow,
    GroupMemberRow,
    GroupRow,
    ServiceAccountGrantRow,
)


@dataclass(frozen=True)
class GroupRecord:
    name: str
    created_at: datetime
    members: tuple[str, ...]


@dataclass(frozen=True)
class DomainGrant:
    subject: Subject
    permission: DomainPermission


class GroupRepository(Repository):
    """Adds, reads and deletes groups and their members."""

    def add(self, name: str, at: datetime) -> GroupRecord:
        if self._session.get(GroupRow, name) is not None:
            raise AlreadyExists("group", name)
        self._insert_unique(GroupRow(name=name, created_at=at), kind="group", name=name)
        return GroupRecord(name=name, created_at=at, members=())

    def exists(self, name: str) -> bool:
        return self._session.get(GroupRow, name) is not None

    def get(self, name: str) -> GroupRecord:
        row = self._session.get(GroupRow, name)
        if row is None:
            raise NotFound("group", name)
        return GroupRecord(name=row.name, created_at=row.created_at, members=self._members(name))

    def list(self) -> builtins.list[GroupRecord]:
        rows = self._session.scalars(select(GroupRow).order_by(GroupRow.name)).all()
        members: dict[str, builtins.list[str]] = {row.name: [] for row in rows}
        for group, user in self._session.execute(
            select(GroupMemberRow.group_name, GroupMemberRow.user_name).order_by(
                GroupMemberRow.user_name
            )
        ):
            members.setdefault(group, []).append(user)
        return [GroupRecord(row.name, row.created_at, tuple(members[row.name])) for row in rows]

    def delete(self, name: str) -> None:
        self.get(name)
        self._session.execute(delete(GroupMemberRow).where(GroupMemberRow.group_name == name))
        self._session.execute(delete(GroupRow).where(GroupRow.name == name))

    def add_member(self, group: str, user: str) -> bool:
        """Add ``user`` to ``group``; False if they were a member already."""
        self.get(group)
        if self._session.get(GroupMemberRow, (group, user)) is not None:
            return False
        self._insert(GroupMemberRow(group_name=group, user_name=user))
        return True

    def remove_member(self, group: str, user: str) -> None:
        """``NotFound`` if ``user`` is not a member of ``group``."""
        self.get(group)
        statement = delete(GroupMemberRow).where(
            GroupMemberRow.group_name == group, GroupMemberRow.user_name == user
        )
        if not self._rows_changed(statement):
            raise NotFound(f"member of group {group!r}", user)

    def groups_of(self, user: str) -> frozenset[str]:
        names = self._session.scalars(
            select(GroupMemberRow.group_name).where(GroupMemberRow.user_name == user)
        )
        return frozenset(names)

    def _members(self, group: str) -> tuple[str, ...]:
        return tuple(
            self._session.scalars(
                select(GroupMemberRow.user_name)
                .where(GroupMemberRow.group_name == group)
                .order_by(GroupMemberRow.user_name)
            )
        )


class GrantRepository(Repository):
    """Domain, bundle and service account grants; granting twice is the same as once."""

    def domain_permissions(self, user: str, groups: Collection[str]) -> frozenset[DomainPermission]:
        """The domain permissions ``user`` holds directly or through ``groups``."""
        rows = self._session.scalars(
            select(DomainGrantRow.permission).where(_subject_filter(DomainGrantRow, user, groups))
        )
        return frozenset(DomainPermission(permission) for permission in rows)

    def domain_grants(self) -> builtins.list[DomainGrant]:
        rows = self._session.scalars(
            select(DomainGrantRow).order_by(
                DomainGrantRow.subject_kind, DomainGrantRow.subject_name, DomainGrantRow.permission
            )
        )
        return [
            DomainGrant(
                _subject(row.subject_kind, row.subject_name), DomainPermission(row.permission)
            )
            for row in rows
        ]

    def grant_domain(self, subject: Subject, permission: DomainPermission) -> bool:
        """Grant; False if ``subject`` held it already."""
        key = (str(subject.kind), subject.name, str(permission))
        if self._session.get(DomainGrantRow, key) is not None:
            return False
        self._insert(
            DomainGrantRow(subject_kind=key[0], subject_name=subject.name, permission=key[2])
        )
        return True

    def revoke_domain(self, subject: Subject, permission: DomainPermission) -> bool:
        return bool(
            self._rows_changed(
                delete(DomainGrantRow).where(
                    DomainGrantRow.subject_kind == str(subject.kind),
                    DomainGrantRow.subject_name == subject.name,
                    DomainGrantRow.permission == str(permission),
                )
            )
        )

    def bundle_grants(
        self, *, bundle: str | None = None, user: str | None = None, groups: Collection[str] = ()
    ) -> builtins.list[BundleGrant]:
        """Bundle grants: of one bundle, or to ``user`` and ``groups``, or both; all if neither."""
        statement = select(BundleGrantRow).order_by(
            BundleGrantRow.bundle,
            BundleGrantRow.subject_kind,
            BundleGrantRow.subject_name,
            BundleGrantRow.permission,
        )
        if bundle is not None:
            statement = statement.where(BundleGrantRow.bundle == bundle)
        if user is not None:
            statement = statement.where(_subject_filter(BundleGrantRow, user, groups))
        return [
            BundleGrant(
                row.bundle, _subject(row.subject_kind, row.subject_name), Permission(row.permission)
            )
            for row in self._session.scalars(statement)
        ]

    def set_bundle_grants(self, bundle: str, grants: Collection[BundleGrant]) -> None:
        """Replace every grant of ``bundle`` with ``grants``."""
        self._session.execute(delete(BundleGrantRow).where(BundleGrantRow.bundle == bundle))
        for grant in set(grants):
            self._session.add(
                BundleGrantRow(
                    bundle=bundle,
                    subject_kind=str(grant.subject.kind),
                    subject_name=grant.subject.name,
                    permission=str(grant.permission),
                )
            )
        self._session.flush()

    def service_account_grants(
        self, *, service_account: str | None = None
    ) -> builtins.list[tuple[str, Subject]]:
        statement = select(ServiceAccountGrantRow).order_by(
            ServiceAccountGrantRow.service_account,
            ServiceAccountGrantRow.subject_kind,
            ServiceAccountGrantRow.subject_name,
        )
        if service_account is not None:
            statement = statement.where(ServiceAccountGrantRow.service_account == service_account)
        return [
            (row.service_account, _subject(row.subject_kind, row.subject_name))
            for row in self._session.scalars(statement)
        ]

    def grant_service_account(self, service_account: str, subject: Subject) -> bool:
        key = (service_account, str(subject.kind), subject.name)
        if self._session.get(ServiceAccountGrantRow, key) is not None:
            return False
        self._insert(
            ServiceAccountGrantRow(
                service_account=service_account, subject_kind=key[1], subject_name=subject.name
            )
        )
        return True

    def revoke_service_account(self, service_account: str, subject: Subject) -> bool:
        return bool(
            self._rows_changed(
                delete(ServiceAccountGrantRow).where(
                    ServiceAccountGrantRow.service_account == service_account,
                    ServiceAccountGrantRow.subject_kind == str(subject.kind),
                    ServiceAccountGrantRow.subject_name == subject.name,
                )
            )
        )

    def forget_subject(self, subject: Subject) -> None:
        """Remove every grant to ``subject`` (when its user or group is deleted)."""
        for table in (DomainGrantRow, BundleGrantRow, ServiceAccountGrantRow):
            self._session.execute(
                delete(table).where(
                    table.subject_kind == str(subject.kind), table.subject_name == subject.name
                )
            )


GrantTable = type[DomainGrantRow] | type[BundleGrantRow] | type[ServiceAccountGrantRow]


def _subject_filter(table: GrantTable, user: str, groups: Collection[str]) -> ColumnElement[bool]:
    to_user = (table.subject_kind == str(SubjectKind.USER)) & (table.subject_name == user)
    if not groups:
        return to_user
    to_group = (table.subject_kind == str(SubjectKind.GROUP)) & table.subject_name.in_(
        sorted(groups)
    )
    return or_(to_user, to_group)


def _subject(kind: str, name: str) -> Subject:
    return Subject(SubjectKind(kind), name)


__all__ = ["DomainGrant", "GrantRepository", "GroupRecord", "GroupRepository"]
