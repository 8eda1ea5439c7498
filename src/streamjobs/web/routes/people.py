"""Settings → Users & groups: who is who, on one page.

Users and service accounts (kind, admin, groups, domain permissions; who may run jobs as a
service account), groups and their members, and the domain permissions held by users and groups;
creating, deleting, granting and revoking all of them. It mirrors ``/api/v1/users``, ``/groups``
and ``/permissions``; the people service decides who may see (Manage users or Manage bundles) and
change (Manage users) any of it, and its refusals are the page's 403.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import Response

from streamjobs.domain.access import (
    DOMAIN_PERMISSION_LABELS,
    Actor,
    DomainPermission,
    PrincipalKind,
    Subject,
    has_domain_permission,
)
from streamjobs.domain.errors import AlreadyExists, Conflict, FieldError, InvalidInput, NotFound
from streamjobs.services.identity import MIN_PASSWORD_LENGTH
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.settings_forms import Failed, back_to, failed, notice_of, refused

router = APIRouter()
USERS_PAGE = "/settings/users"
GROUPS = "/settings/groups"
PERMISSIONS = "/settings/permissions"
OUTCOMES = {
    "user-created": "“{name}” created.",
    "user-deleted": "“{name}” deleted.",
    "user-unlocked": "“{name}” may sign in again.",
    "user-signed-out": "Every web session of “{name}” has ended.",
    "run-as-granted": "“{name}” may now be run as by the new grantee.",
    "run-as-revoked": "Grant to run as “{name}” revoked.",
    "group-created": "Group “{name}” created.",
    "group-deleted": "Group “{name}” deleted.",
    "member-added": "Member added to group “{name}”.",
    "member-removed": "Member taken out of group “{name}”.",
    "granted": "Permission granted to {name}.",
    "revoked": "Permission revoked from {name}.",
}


@router.get(USERS_PAGE)
def people_page(
    request: Request,
    done: Annotated[str, Query()] = "",
    name: Annotated[str, Query()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    return _people_page(request, actor, notice=notice_of(OUTCOMES, done, name))


@router.post(USERS_PAGE)
def create_user(
    request: Request,
    name: Annotated[str, Form()] = "",
    kind: Annotated[str, Form()] = "user",
    password: Annotated[str, Form()] = "",
    admin: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Create a user (with a password, or tokens only) or a service account."""
    name = name.strip()
    values = {"name": name, "kind": kind, "admin": admin}
    fields = ("name", "kind", "password")
    try:
        if kind not in PrincipalKind.__members__.values():
            message = f"{kind!r} is neither a user nor a service account"
            raise InvalidInput([FieldError("kind", message)])
        services_of(request).people.create_user(
            name,
            actor=actor,
            kind=PrincipalKind(kind),
            password=password or None,
            is_admin=bool(admin),
        )
    except (InvalidInput, AlreadyExists) as error:
        form, status = refused("user", values, error, fields)
        return _people_page(request, actor, failed=form, status_code=status)
    return back_to(USERS_PAGE, "users", done="user-created", name=name)


@router.post(USERS_PAGE + "/{name}/delete")
def delete_user(
    request: Request,
    name: str,
    actor: Actor = Depends(page_actor),
) -> Response:
    try:
        services_of(request).people.delete_user(name, actor=actor)
    except Conflict as error:
        return _people_page(request, actor, error=error.detail, status_code=409)
    return back_to(USERS_PAGE, "users", done="user-deleted", name=name)


@router.post(USERS_PAGE + "/{name}/run-as")
def grant_run_as(
    request: Request,
    name: str,
    subject: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Let a user or group run jobs as the service account ``name``."""
    return _set_run_as(request, name, subject, actor, granted=True)


@router.post(USERS_PAGE + "/{name}/run-as/revoke")
def revoke_run_as(
    request: Request,
    name: str,
    subject: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    return _set_run_as(request, name, subject, actor, granted=False)


@router.post(GROUPS)
def create_group(
    request: Request,
    name: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    name = name.strip()
    try:
        services_of(request).people.create_group(name, actor=actor)
    except (InvalidInput, AlreadyExists) as error:
        form, status = refused("group", {"name": name}, error, ("name",))
        return _people_page(request, actor, failed=form, status_code=status)
    return back_to(USERS_PAGE, "groups", done="group-created", name=name)


@router.post(GROUPS + "/{name}/delete")
def delete_group(
    request: Request,
    name: str,
    actor: Actor = Depends(page_actor),
) -> Response:
    services_of(request).people.delete_group(name, actor=actor)
    return back_to(USERS_PAGE, "groups", done="group-deleted", name=name)


@router.post(GROUPS + "/{name}/members")
def add_member(
    request: Request,
    name: str,
    user: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    user = user.strip()
    try:
        if not user:
            raise InvalidInput([FieldError("user", "choose a user to add")])
        try:
            services_of(request).people.set_membership(name, user, member=True, actor=actor)
        except NotFound as error:
            if error.kind != "user":
                raise
            raise InvalidInput([FieldError("user", f"no user is called {user!r}")]) from None
    except InvalidInput as error:
        sent_back = failed(f"member:{name}", {"user": user}, error.errors, ("user",))
        return _people_page(request, actor, failed=sent_back, status_code=422)
    return back_to(USERS_PAGE, "groups", done="member-added", name=name)


@router.post(GROUPS + "/{name}/members/{user}/remove")
def remove_member(
    request: Request,
    name: str,
    user: str,
    actor: Actor = Depends(page_actor),
) -> Response:
    services_of(request).people.set_membership(name, user, member=False, actor=actor)
    return back_to(USERS_PAGE, "groups", done="member-removed", name=name)


@router.post(PERMISSIONS)
def grant_permission(
    request: Request,
    subject: Annotated[str, Form()] = "",
    permission: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Grant a domain permission to a user or group."""
    return _set_domain_grant(request, subject, permission, actor, granted=True)


@router.post(PERMISSIONS + "/revoke")
def revoke_permission(
    request: Request,
    subject: Annotated[str, Form()] = "",
    permission: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    return _set_domain_grant(request, subject, permission, actor, granted=False)


def _set_run_as(
    request: Request, name: str, subject: str, actor: Actor, *, granted: bool
) -> Response:
    subject = subject.strip()
    try:
        parsed = Subject.parse(subject)
        services_of(request).people.set_service_account_grant(
            name, parsed, granted=granted, actor=actor
        )
    except InvalidInput as error:
        sent_back = failed(f"run-as:{name}", {"subject": subject}, error.errors, ("subject",))
        return _people_page(request, actor, failed=sent_back, status_code=422)
    done = "run-as-granted" if granted else "run-as-revoked"
    return back_to(USERS_PAGE, "users", done=done, name=name)


def _set_domain_grant(
    request: Request, subject: str, permission: str, actor: Actor, *, granted: bool
) -> Response:
    subject = subject.strip()
    values = {"subject": subject, "permission": permission}
    try:
        errors = []
        if permission not in DomainPermission.__members__.values():
            errors.append(FieldError("permission", "choose one of the domain permissions"))
        try:
            parsed = Subject.parse(subject)
        except InvalidInput as error:
            errors.extend(error.errors)
        if errors:
            raise InvalidInput(errors)
        services_of(request).people.set_domain_grant(
            parsed, DomainPermission(permission), granted=granted, actor=actor
        )
    except InvalidInput as error:
        sent_back = failed("grant", values, error.errors, ("subject", "permission"))
        return _people_page(request, actor, failed=sent_back, status_code=422)
    return back_to(
        USERS_PAGE, "permissions", done="granted" if granted else "revoked", name=subject
    )


def _people_page(
    request: Request,
    actor: Actor,
    *,
    failed: Failed | None = None,
    notice: str | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    people = services_of(request).people
    users = people.list_users(actor=actor)
    groups = people.list_groups(actor=actor)
    grants = sorted(people.domain_grants(actor=actor), key=lambda g: (str(g.subject), g.permission))
    subjects = [f"user:{person.user.name}" for person in users]
    subjects += [f"group:{group.name}" for group in groups]
    response = render(
        request,
        "people.html",
        status_code=status_code,
        nav="users",
        users=users,
        groups=groups,
        grants=grants,
        subjects=subjects,
        user_names=[person.user.name for person in users],
        locked=services_of(request).sign_in.locked_accounts(),
        labels=DOMAIN_PERMISSION_LABELS,
        may_manage=has_domain_permission(actor.principal, DomainPermission.MANAGE_USERS),
        is_admin=actor.principal.is_admin,
        me=actor.name,
        failed=failed,
        notice=notice,
        error=error,
        min_password=MIN_PASSWORD_LENGTH,
    )
    response.headers["Cache-Control"] = "no-store"
    return response
