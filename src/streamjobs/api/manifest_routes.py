"""The create, get, apply and delete routes every named manifest resource of the API has
(connections, notification destinations), written once so that they keep one convention.

The body is a manifest as JSON or YAML (``read_document``). Create answers 201 with the
document, ``Location`` and ``ETag``; get answers the document and its ``ETag``; apply (PUT)
answers ``{"result": ..., "<noun>": document}``, 201 and ``Location`` when it created the
resource; delete answers 204 and honours ``If-Match``. Each route keeps the name (and so the
OpenAPI operation id) it would have had written out by hand: ``create_<noun>`` and so on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from fastapi import APIRouter, Depends, Header, Request, Response

from streamjobs.api.auth import require_actor, services_of
from streamjobs.api.bodies import read_document
from streamjobs.api.conventions import etag, expected_version, location, manifest_body
from streamjobs.domain.access import Actor
from streamjobs.services.container import Services


class Versioned(Protocol):
    """A stored resource: its name and version."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> int: ...


class ManifestService(Protocol):
    """What the routes need of a resource's service (``ConnectionService``,
    ``DestinationService``); permissions and validation are the service's."""

    def get(self, name: str) -> Any: ...

    def create(self, document: Any, *, actor: Actor) -> Any: ...

    def apply(self, name: str, document: Any, *, actor: Actor) -> tuple[Any, Any]: ...

    def delete(self, name: str, *, actor: Actor, expected_version: int | None = None) -> Any: ...


@dataclass(frozen=True)
class ManifestResource:
    """One kind's collection: its path, manifest kind, how people name it, where its service is
    and how a record becomes the API's document."""

    collection: str
    kind: str
    noun: str
    """One word, the routes' names and apply's key: ``connection``, ``destination``."""
    title: str
    """How summaries name it: ``connection``, ``notification destination``."""
    service: Callable[[Services], ManifestService]
    document: Callable[[Any], dict[str, Any]]
    delete_refused_when: str
    """When delete answers 409, for its summary: ``while a job's dataset uses it``."""


def add_manifest_routes(router: APIRouter, resource: ManifestResource) -> None:
    """Add POST ``""``, GET, PUT and DELETE ``/{name}`` for ``resource`` to ``router`` (whose
    prefix is the collection)."""
    body = manifest_body(resource.kind)
    collection, noun, document_of = resource.collection, resource.noun, resource.document

    def service(request: Request) -> ManifestService:
        return resource.service(services_of(request))

    def create(
        request: Request,
        response: Response,
        document: Any = Depends(read_document),
        actor: Actor = Depends(require_actor),
    ) -> dict[str, Any]:
        record = service(request).create(document, actor=actor)
        response.headers["Location"] = location(collection, record.name)
        response.headers["ETag"] = etag(record.version)
        return document_of(record)

    def get(name: str, request: Request, response: Response) -> dict[str, Any]:
        record = service(request).get(name)
        response.headers["ETag"] = etag(record.version)
        return document_of(record)

    def apply(
        name: str,
        request: Request,
        response: Response,
        document: Any = Depends(read_document),
        actor: Actor = Depends(require_actor),
    ) -> dict[str, Any]:
        record, outcome = service(request).apply(name, document, actor=actor)
        if outcome == "created":
            response.status_code = 201
            response.headers["Location"] = location(collection, record.name)
        response.headers["ETag"] = etag(record.version)
        return {"result": str(outcome), noun: document_of(record)}

    def delete(
        name: str,
        request: Request,
        if_match: str | None = Header(None, description=f"Only if the {noun} is at this version."),
        actor: Actor = Depends(require_actor),
    ) -> Response:
        service(request).delete(name, actor=actor, expected_version=expected_version(if_match))
        return Response(status_code=204)

    title = resource.title
    router.add_api_route(
        "",
        create,
        methods=["POST"],
        status_code=201,
        summary=f"Create a {title}",
        openapi_extra=body,
        name=f"create_{noun}",
    )
    router.add_api_route(
        "/{name}", get, methods=["GET"], summary=f"Get a {title}", name=f"get_{noun}"
    )
    router.add_api_route(
        "/{name}",
        apply,
        methods=["PUT"],
        summary=f"Apply a {title}: create it or bring it to the manifest",
        openapi_extra=body,
        responses={
            201: {"description": "Created"},
            200: {"description": "Configured or unchanged"},
        },
        name=f"apply_{noun}",
    )
    router.add_api_route(
        "/{name}",
        delete,
        methods=["DELETE"],
        status_code=204,
        summary=f"Delete a {title} (409 {resource.delete_refused_when})",
        name=f"delete_{noun}",
    )
