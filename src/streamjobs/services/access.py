"""The services' side of permission checks: read the grants a decision needs, in the caller's
transaction, and ask ``domain.access`` for it.

Every use case that touches a job, an application or a bundle's secrets goes through these, so the
web UI and the REST API get the same answers: a job the caller may not see does not exist for
them, and an action they may not take is ``Forbidden``, naming the missing permission.
"""

from __future__ import annotations

from streamjobs.domain.access import (
    Actor,
    BundleGrant,
    JobAction,
    JobRef,
    Permission,
    bundle_resource_permissions,
    job_actions,
    require_job_action,
    visible_bundles,
)
from streamjobs.domain.errors import Forbidden, NotFound
from streamjobs.store.db import Repositories


def grants_for(repos: Repositories, actor: Actor) -> list[BundleGrant]:
    """The bundle grants that concern ``actor`` (to them or to one of their groups)."""
    if actor.principal.is_admin:
        return []
    principal = actor.principal
    return repos.grants.bundle_grants(user=principal.name, groups=principal.groups)


def require_job(
    repos: Repositories, actor: Actor, name: str, bundle: str, action: JobAction
) -> None:
    """Allow ``action`` on the job ``name`` of ``bundle`` or raise ``NotFound`` / ``Forbidden``."""
    require_job_action(actor.principal, grants_for(repos, actor), action, JobRef(name, bundle))


def allowed_actions(
    repos: Repositories, actor: Actor, name: str, bundle: str
) -> dict[JobAction, Permission | None]:
    """For each action on the job, None if ``actor`` may take it, else the permission missing."""
    return job_actions(actor.principal, grants_for(repos, actor), JobRef(name, bundle))


def visible_to(repos: Repositories, actor: Actor) -> frozenset[str] | None:
    """The bundles whose jobs ``actor`` may see; None: all of them."""
    return visible_bundles(actor.principal, grants_for(repos, actor))


def require_bundle_permission(
    repos: Repositories, actor: Actor, bundle: str, permission: Permission, what: str
) -> None:
    """``NotFound`` for a bundle ``actor`` holds nothing on (or that does not exist),
    ``Forbidden`` when they hold something on it but not ``permission``. Those who manage
    bundles hold every permission here (a bundle's secrets are theirs to keep)."""
    held = bundle_resource_permissions(actor.principal, grants_for(repos, actor), bundle)
    if "\x00" in bundle or not repos.bundles.exists(bundle) or Permission.VIEW not in held:
        raise NotFound("resource bundle", bundle)
    if permission not in held:
        raise Forbidden(f"{what} needs the {permission} permission on resource bundle {bundle!r}")


__all__ = [
    "allowed_actions",
    "grants_for",
    "require_bundle_permission",
    "require_job",
    "visible_to",
]
