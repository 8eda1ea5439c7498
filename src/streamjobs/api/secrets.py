"""``/api/v1/bundles/{bundle}/secrets``: put, list and delete the named secrets of a bundle.

A value goes in and never comes out: every answer names secrets and says when and by whom they
changed, and nothing here can read a value back (only a driver's launch does).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from streamjobs.api.auth import require_actor, services_of
from streamjobs.api.conventions import etag, location
from streamjobs.domain.access import Actor
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.secrets import MAX_NAME_LENGTH, MAX_VALUE_BYTES
from streamjobs.services.secrets import PutOutcome
from streamjobs.store.secrets import SecretRecord

BUNDLES = "/api/v1/bundles"
router = APIRouter(prefix=BUNDLES + "/{bundle}/secrets", tags=["secrets"])

BundleName = Path(description="The resource bundle the secrets belong to.")
SecretName = Path(
    description=f"The secret's name: lowercase letters, digits and '-', at most {MAX_NAME_LENGTH}."
)
PROBLEM = {"content": {"application/problem+json": {}}}


class SecretValue(BaseModel):
    """The body of a put: the secret's value."""

    model_config = ConfigDict(extra="forbid")

    value: str = Field(
        description=f"The value: non-empty text of at most {MAX_VALUE_BYTES} bytes (UTF-8). "
        "It is stored encrypted and never returned."
    )


class SecretMetadata(BaseModel):
    """A secret as the API shows it: never its value."""

    model_config = ConfigDict(alias_generator=to_camel)

    name: str
    bundle: str
    version: int
    created_at: str
    created_by: str
    updated_at: str
    updated_by: str


class SecretList(BaseModel):
    items: list[SecretMetadata]
    total: int


class PutAnswer(BaseModel):
    result: PutOutcome
    secret: SecretMetadata


@router.get(
    "",
    summary="List a bundle's secrets (names and metadata, never values)",
    response_model=SecretList,
    responses={404: {"description": "No such bundle", **PROBLEM}},
)
def list_secrets(
    request: Request, bundle: str = BundleName, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    records = services_of(request).secrets.list(bundle, actor=actor)
    return {"items": [secret_document(record) for record in records], "total": len(records)}


@router.put(
    "/{name}",
    summary="Create a secret or replace its value",
    response_model=PutAnswer,
    responses={
        201: {"description": "Created", "model": PutAnswer},
        200: {"description": "Replaced"},
        404: {"description": "No such bundle", **PROBLEM},
        422: {"description": "A bad name or value", **PROBLEM},
    },
)
def put_secret(
    request: Request,
    response: Response,
    body: SecretValue,
    bundle: str = BundleName,
    name: str = SecretName,
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    try:
        record, outcome = services_of(request).secrets.put(bundle, name, body.value, actor=actor)
    except InvalidInput as error:
        raise _located(error) from None
    if outcome is PutOutcome.CREATED:
        response.status_code = 201
        response.headers["Location"] = location(f"{BUNDLES}/{bundle}/secrets", name)
    response.headers["ETag"] = etag(record.version)
    return {"result": str(outcome), "secret": secret_document(record)}


@router.delete(
    "/{name}",
    status_code=204,
    summary="Delete a secret",
    responses={404: {"description": "No such bundle or secret", **PROBLEM}},
)
def delete_secret(
    request: Request,
    bundle: str = BundleName,
    name: str = SecretName,
    actor: Actor = Depends(require_actor),
) -> Response:
    services_of(request).secrets.delete(bundle, name, actor=actor)
    return Response(status_code=204)


def secret_document(record: SecretRecord) -> dict[str, Any]:
    return {
        "name": record.name,
        "bundle": record.bundle,
        "version": record.version,
        "createdAt": record.created_at.isoformat(),
        "createdBy": record.created_by,
        "updatedAt": record.updated_at.isoformat(),
        "updatedBy": record.updated_by,
    }


def _located(error: InvalidInput) -> InvalidInput:
    """The service's field paths as the request has them: the name in the path, the value in
    the body."""
    where = {"name": "path.name", "value": "body.value"}
    return InvalidInput([FieldError(where.get(e.path, e.path), e.message) for e in error.errors])
