"""``/api/v1/users``, ``/api/v1/groups``, ``/api/v1/permissions`` and ``/api/v1/whoami``: users,
service accounts, groups, domain permissions, who may run as a service account, access tokens."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from streamjobs.api.auth import require_actor, services_of
from streamjobs.api.conventions import location
from streamjobs.domain.access import (
    DOMAIN_PERMISSION_LABELS,
    Actor,
    DomainPermission,
    Principal,
    PrincipalKind,
    Subject,
)
from streamjobs.services.people import Person
from streamjobs.store.access import GroupRecord
from streamjobs.store.identity import TokenRecord

USERS = "/api/v1/users"
GROUPS = "/api/v1/groups"
router = APIRouter(tags=["users and groups"])

SubjectPath = Path(description="'user:NAME' (a user or service account) or 'group:NAME'.")


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


class NewUser(Body):
    name: str
    kind: PrincipalKind = PrincipalKind.USER
    password: str | None = Field(None, description="Users only; at least 12 characters.")
    admin: bool = False


class NewGroup(Body):
    name: str


class NewToken(Body):
    name: str
    expires_in_days: int | None = Field(None, description="1 to 3650; none: until revoked.")


@router.get("/api/v1/whoami", summary="Who the caller is: groups and domain permissions")
def whoami(actor: Actor = Depends(require_actor)) -> dict[str, Any]:
    return principal_document(actor.principal)


@router.get(USERS, summary="List users and service accounts")
def list_users(request: Request, actor: Actor = Depends(require_actor)) -> dict[str, Any]:
    people = services_of(request).people.list_users(actor=actor)
    return {"items": [person_document(person) for person in people], "total": len(people)}


@router.post(USERS, status_code=201, summary="Create a user or a service account")
def create_user(
    body: NewUser, request: Request, response: Response, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    person = services_of(request).people.create_user(
        body.name, actor=actor, kind=body.kind, password=body.password, is_admin=body.admin
    )
    response.headers["Location"] = location(USERS, body.name)
    return person_document(person)


@router.get(USERS + "/{name}", summary="A user or service account")
def get_user(name: str, request: Request, actor: Actor = Depends(require_actor)) -> dict[str, Any]:
    return person_document(services_of(request).people.get_user(name, actor=actor))


@router.delete(USERS + "/{name}", status_code=204, summary="Delete a user or service account")
def delete_user(name: str, request: Request, actor: Actor = Depends(require_actor)) -> Response:
    services_of(request).people.delete_user(name, actor=actor)
    return Response(status_code=204)


@router.put(
    USERS + "/{name}/run-as/{subject}",
    status_code=204,
    summary="Let a user or group run jobs as this service account",
)
def grant_run_as(
    name: str, request: Request, subject: str = SubjectPath, actor: Actor = Depends(require_actor)
) -> Response:
    return _set_run_as(request, name, subject, granted=True, actor=actor)


@router.delete(
    USERS + "/{name}/run-as/{subject}",
    status_code=204,
    summary="No longer let a user or group run jobs as this service account",
)
def revoke_run_as(
    name: str, request: Request, subject: str = SubjectPath, actor: Actor = Depends(require_actor)
) -> Response:
    return _set_run_as(request, name, subject, granted=False, actor=actor)


@router.get(USERS + "/{name}/tokens", summary="A user's access tokens (never their secrets)")
def list_tokens(
    name: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    services = services_of(request)
    services.people.require_token_issuer(name, actor=actor)
    tokens = services.identity.list_tokens(name)
    return {"items": [token_document(token) for token in tokens], "total": len(tokens)}


@router.post(
    USERS + "/{name}/tokens",
    status_code=201,
    summary="Issue an access token: its secret is in this answer only",
)
def create_token(
    name: str, body: NewToken, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    services = services_of(request)
    services.people.require_token_issuer(name, actor=actor)
    secret = services.identity.create_token(
        name, body.name, actor=actor, expires_in_days=body.expires_in_days
    )
    issued = next(t for t in services.identity.list_tokens(name) if t.name == body.name.strip())
    return {"token": secret, **token_document(issued)}


@router.delete(USERS + "/{name}/tokens/{token_id}", summary="Revoke an access token")
def revoke_token(
    name: str, token_id: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    services = services_of(request)
    services.people.require_token_issuer(name, actor=actor)
    return token_document(services.identity.revoke_token(name, token_id, actor=actor))


@router.get(GROUPS, summary="List groups and their members")
def list_groups(request: Request, actor: Actor = Depends(require_actor)) -> dict[str, Any]:
    groups = services_of(request).people.list_groups(actor=actor)
    return {"items": [group_document(group) for group in groups], "total": len(groups)}


@router.post(GROUPS, status_code=201, summary="Create a group")
def create_group(
    body: NewGroup, request: Request, response: Response, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    group = services_of(request).people.create_group(body.name, actor=actor)
    response.headers["Location"] = location(GROUPS, group.name)
    return group_document(group)


@router.delete(GROUPS + "/{name}", status_code=204, summary="Delete a group")
def delete_group(name: str, request: Request, actor: Actor = Depends(require_actor)) -> Response:
    services_of(request).people.delete_group(name, actor=actor)
    return Response(status_code=204)


@router.put(GROUPS + "/{name}/members/{user}", summary="Add a user to a group")
def add_member(
    name: str, user: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    people = services_of(request).people
    return group_document(people.set_membership(name, user, member=True, actor=actor))


@router.delete(GROUPS + "/{name}/members/{user}", summary="Take a user out of a group")
def remove_member(
    name: str, user: str, request: Request, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    people = services_of(request).people
    return group_document(people.set_membership(name, user, member=False, actor=actor))


@router.get("/api/v1/permissions", summary="Who holds which domain permission")
def list_permissions(request: Request, actor: Actor = Depends(require_actor)) -> dict[str, Any]:
    grants = services_of(request).people.domain_grants(actor=actor)
    return {
        "items": [
            {"subject": str(grant.subject), "permission": str(grant.permission)} for grant in grants
        ],
        "permissions": {str(p): label for p, label in DOMAIN_PERMISSION_LABELS.items()},
    }


@router.put(
    "/api/v1/permissions/{permission}/{subject}",
    status_code=204,
    summary="Grant a domain permission to a user or group",
)
def grant_permission(
    permission: DomainPermission,
    request: Request,
    subject: str = SubjectPath,
    actor: Actor = Depends(require_actor),
) -> Response:
    return _set_domain_grant(request, permission, subject, granted=True, actor=actor)


@router.delete(
    "/api/v1/permissions/{permission}/{subject}",
    status_code=204,
    summary="Take a domain permission back",
)
def revoke_permission(
    permission: DomainPermission,
    request: Request,
    subject: str = SubjectPath,
    actor: Actor = Depends(require_actor),
) -> Response:
    return _set_domain_grant(request, permission, subject, granted=False, actor=actor)


def _set_run_as(
    request: Request, name: str, subject: str, *, granted: bool, actor: Actor
) -> Response:
    services_of(request).people.set_service_account_grant(
        name, Subject.parse(subject, path="path.subject"), granted=granted, actor=actor
    )
    return Response(status_code=204)


def _set_domain_grant(
    request: Request, permission: DomainPermission, subject: str, *, granted: bool, actor: Actor
) -> Response:
    services_of(request).people.set_domain_grant(
        Subject.parse(subject, path="path.subject"), permission, granted=granted, actor=actor
    )
    return Response(status_code=204)


def principal_document(principal: Principal) -> dict[str, Any]:
    return {
        "name": principal.name,
        "kind": str(principal.kind),
        "admin": principal.is_admin,
        "groups": sorted(principal.groups),
        "permissions": sorted(str(p) for p in principal.permissions),
    }


def person_document(person: Person) -> dict[str, Any]:
    return {
        "name": person.user.name,
        "kind": str(person.user.kind),
        "admin": person.user.is_admin,
        "createdAt": person.user.created_at.isoformat(),
        "signsInWithPassword": person.user.password_hash is not None,
        "groups": sorted(person.groups),
        "permissions": sorted(str(p) for p in person.permissions),
        "runAsGrantees": [str(subject) for subject in person.runners],
    }


def group_document(group: GroupRecord) -> dict[str, Any]:
    return {
        "name": group.name,
        "createdAt": group.created_at.isoformat(),
        "members": list(group.members),
    }


def token_document(token: TokenRecord) -> dict[str, Any]:
    def when(moment: Any) -> str | None:
        return None if moment is None else moment.isoformat()

    return {
        "id": token.id,
        "name": token.name,
        "user": token.user_name,
        "createdAt": when(token.created_at),
        "expiresAt": when(token.expires_at),
        "revokedAt": when(token.revoked_at),
        "lastUsedAt": when(token.last_used_at),
    }
