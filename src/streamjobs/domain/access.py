"""Who may do what: every permission decision streamjobs makes, as pure functions.

A decision is a function of (principal, grants, action, resource) and nothing else: the services
read the grants from the store, call these functions, and turn a refusal into an error. Nothing
else in the code base decides about permissions.

- Domain permissions (``DomainPermission``) are held by users directly or through their groups.
- Every job belongs to a resource bundle; a bundle grants ``Permission``s on its jobs to users and
  groups. RUN, UPDATE and DELETE each imply VIEW: what one may act on, one may see.
- A job the principal may not VIEW is hidden: it answers as if it did not exist (``NotFound``),
  so its existence is not disclosed. With VIEW but without the permission an action needs, the
  answer is ``Forbidden``, naming that permission.
- Admins may do everything.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum

from streamjobs.domain.errors import FieldError, Forbidden, InvalidInput, NotFound


class Permission(StrEnum):
    """What a bundle grants on its jobs."""

    VIEW = "VIEW"
    """See the job, its applications, logs, metrics and template at all."""
    RUN = "RUN"
    """Run, stop, abort and resume it."""
    UPDATE = "UPDATE"
    """Configure it (and create jobs in the bundle, with Create Spark Job)."""
    DELETE = "DELETE"


class DomainPermission(StrEnum):
    """What a user may do beyond any one bundle."""

    CREATE_JOB = "CREATE_JOB"
    """Create Spark Job: may create streaming jobs (in bundles where they hold UPDATE)."""
    MANAGE_BUNDLES = "MANAGE_BUNDLES"
    """Create, change and delete bundles, their quotas, grants and secrets; node types;
    connections."""
    MANAGE_USERS = "MANAGE_USERS"
    """Create users, service accounts and groups; grant domain permissions; issue tokens for
    service accounts."""


DOMAIN_PERMISSION_LABELS = {
    DomainPermission.CREATE_JOB: "Create Spark Job",
    DomainPermission.MANAGE_BUNDLES: "Manage bundles",
    DomainPermission.MANAGE_USERS: "Manage users",
}


class JobAction(StrEnum):
    """What one can do to a job or its applications, each needing one ``Permission``."""

    VIEW = "view"
    RUN = "run"
    STOP = "stop"
    ABORT = "abort"
    RESUME = "resume"
    SUSPEND = "suspend"
    SNAPSHOT = "snapshot"
    """Take a snapshot of a running application's checkpoint."""
    UPGRADE = "upgrade"
    """Move the running application to the job's current spec."""
    CONFIGURE = "configure"
    DELETE = "delete"


NEEDS: dict[JobAction, Permission] = {
    JobAction.VIEW: Permission.VIEW,
    JobAction.RUN: Permission.RUN,
    JobAction.STOP: Permission.RUN,
    JobAction.ABORT: Permission.RUN,
    JobAction.RESUME: Permission.RUN,
    JobAction.SUSPEND: Permission.RUN,
    JobAction.SNAPSHOT: Permission.RUN,
    JobAction.UPGRADE: Permission.RUN,
    JobAction.CONFIGURE: Permission.UPDATE,
    JobAction.DELETE: Permission.DELETE,
}
"""The permission each action needs; every action is here."""


class PrincipalKind(StrEnum):
    USER = "user"
    SERVICE_ACCOUNT = "serviceAccount"


class SubjectKind(StrEnum):
    """Whom a grant is given to."""

    USER = "user"
    """A user or a service account, by name."""
    GROUP = "group"


@dataclass(frozen=True)
class Subject:
    """The receiver of a grant, written ``user:NAME`` or ``group:NAME``."""

    kind: SubjectKind
    name: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"

    @classmethod
    def parse(cls, text: str, *, path: str = "subject") -> Subject:
        """``user:alice`` or ``group:payments``; ``InvalidInput`` at ``path`` otherwise."""
        kind, separator, name = text.partition(":")
        if not separator or kind not in SubjectKind.__members__.values() or not name.strip():
            raise InvalidInput([FieldError(path, f"{text!r} is not 'user:NAME' or 'group:NAME'")])
        return cls(SubjectKind(kind), name.strip())


@dataclass(frozen=True)
class Principal:
    """An authenticated user or service account: its groups and its domain permissions (held
    directly or through a group) come with it."""

    name: str
    is_admin: bool = False
    kind: PrincipalKind = PrincipalKind.USER
    groups: frozenset[str] = frozenset()
    permissions: frozenset[DomainPermission] = frozenset()

    def is_subject(self, subject: Subject) -> bool:
        """Whether a grant to ``subject`` is a grant to this principal."""
        if subject.kind is SubjectKind.USER:
            return subject.name == self.name
        return subject.name in self.groups


@dataclass(frozen=True)
class Actor:
    """A principal together with where the request came from, for the audit trail."""

    principal: Principal
    source: str | None = None

    @property
    def name(self) -> str:
        return self.principal.name


@dataclass(frozen=True)
class BundleGrant:
    """``bundle`` grants ``permission`` on its jobs to ``subject``."""

    bundle: str
    subject: Subject
    permission: Permission


@dataclass(frozen=True)
class JobRef:
    """What a permission decision needs to know of a job: its name and its bundle."""

    name: str
    bundle: str


ALL_PERMISSIONS = frozenset(Permission)


def has_domain_permission(principal: Principal, permission: DomainPermission) -> bool:
    return principal.is_admin or permission in principal.permissions


def bundle_permissions(
    principal: Principal, grants: Iterable[BundleGrant], bundle: str
) -> frozenset[Permission]:
    """What ``principal`` may do to the jobs of ``bundle`` (any other permission implies VIEW)."""
    if principal.is_admin:
        return ALL_PERMISSIONS
    held = {
        grant.permission
        for grant in grants
        if grant.bundle == bundle and principal.is_subject(grant.subject)
    }
    if held:
        held.add(Permission.VIEW)
    return frozenset(held)


def bundle_resource_permissions(
    principal: Principal, grants: Iterable[BundleGrant], bundle: str
) -> frozenset[Permission]:
    """What ``principal`` may do to a bundle's own resources (its secrets): what its grants
    give, or everything for those who manage bundles."""
    if has_domain_permission(principal, DomainPermission.MANAGE_BUNDLES):
        return ALL_PERMISSIONS
    return bundle_permissions(principal, grants, bundle)


def visible_bundles(principal: Principal, grants: Iterable[BundleGrant]) -> frozenset[str] | None:
    """The bundles whose jobs ``principal`` may see; None means every bundle (an admin)."""
    if principal.is_admin:
        return None
    return frozenset(grant.bundle for grant in grants if principal.is_subject(grant.subject))


def require_job_action(
    principal: Principal, grants: Iterable[BundleGrant], action: JobAction, job: JobRef
) -> None:
    """Allow ``action`` on ``job``, or refuse it: ``NotFound`` when the job may not even be seen
    (its existence is not disclosed), ``Forbidden`` naming the missing permission otherwise."""
    held = bundle_permissions(principal, grants, job.bundle)
    if Permission.VIEW not in held:
        raise NotFound("job", job.name)
    needed = NEEDS[action]
    if needed not in held:
        raise Forbidden(missing_permission_message(needed, action, job))


def missing_permission_message(needed: Permission, action: JobAction, job: JobRef) -> str:
    return (
        f"{action} job {job.name!r} needs the {needed} permission on resource bundle {job.bundle!r}"
    )


def job_actions(
    principal: Principal, grants: Iterable[BundleGrant], job: JobRef
) -> dict[JobAction, Permission | None]:
    """For each action, None if ``principal`` may take it on ``job``, else the permission it
    lacks (what the web UI disables a button with)."""
    held = bundle_permissions(principal, grants, job.bundle)
    return {action: None if NEEDS[action] in held else NEEDS[action] for action in JobAction}


def require_create_job(principal: Principal, grants: Iterable[BundleGrant], bundle: str) -> None:
    """Creating a job needs Create Spark Job, and UPDATE on the bundle it is created in."""
    if not has_domain_permission(principal, DomainPermission.CREATE_JOB):
        raise Forbidden(
            f"creating a streaming job needs the "
            f"{DOMAIN_PERMISSION_LABELS[DomainPermission.CREATE_JOB]!r} permission"
        )
    if Permission.UPDATE not in bundle_permissions(principal, grants, bundle):
        raise Forbidden(
            f"creating a job in resource bundle {bundle!r} needs the UPDATE permission on it"
        )


def require_move_to_bundle(
    principal: Principal, grants: Iterable[BundleGrant], job: JobRef, bundle: str
) -> None:
    """Moving a job into another bundle needs UPDATE on the bundle it moves to as well."""
    if bundle != job.bundle and Permission.UPDATE not in bundle_permissions(
        principal, grants, bundle
    ):
        raise Forbidden(
            f"moving job {job.name!r} into resource bundle {bundle!r} needs the UPDATE "
            "permission on that bundle"
        )


def require_domain_permission(principal: Principal, permission: DomainPermission) -> None:
    if not has_domain_permission(principal, permission):
        raise Forbidden(f"this needs the {DOMAIN_PERMISSION_LABELS[permission]!r} permission")


def require_admin(principal: Principal, what: str) -> None:
    if not principal.is_admin:
        raise Forbidden(f"{what} is for admins only")


def require_run_as(
    principal: Principal,
    run_as: str,
    *,
    service_accounts: Collection[str],
    service_account_grants: Iterable[tuple[str, Subject]],
) -> None:
    """A job may run as its author or as a service account the author holds a grant on
    (``service_account_grants`` holds (service account, subject) pairs); admins may pick any
    service account or user."""
    if run_as == principal.name:
        return
    if principal.is_admin:
        return
    granted = any(
        account == run_as and principal.is_subject(subject)
        for account, subject in service_account_grants
    )
    if run_as in service_accounts and granted:
        return
    raise Forbidden(
        f"spec.runAs: {principal.name!r} may not run jobs as {run_as!r}; choose yourself or a "
        "service account you hold a grant on"
    )


NAME_RULE = "1-255 letters, digits, '.', '_', '@' or '-', starting with a letter or digit"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,254}")


def name_errors(name: object, path: str) -> list[FieldError]:
    """The name of a user, service account, group, bundle or node type: ``NAME_RULE``."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        return [FieldError(path, f"{name!r} is not a valid name: {NAME_RULE}")]
    return []
