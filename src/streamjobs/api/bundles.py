"""``/api/v1/bundles`` and ``/api/v1/node-types``: resource bundles with their quotas, data roots,
Spark setting policy and grants, and the node types jobs are sized with.

``PUT`` replaces a bundle's whole configuration: a quota left out is no limit, data roots left
out are none, a Spark setting list left out is empty. Read the bundle first and send back what
should stay (with ``If-Match``, so nobody's change in between is lost).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Header, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from streamjobs.api.auth import require_actor, services_of
from streamjobs.api.conventions import etag, expected_version, location
from streamjobs.domain.access import Actor, BundleGrant, Permission, Subject
from streamjobs.domain.bundle_policy import SparkConfPolicy
from streamjobs.domain.quotas import Quota
from streamjobs.services.bundles import BundleView
from streamjobs.store.catalog import NodeTypeRecord

BUNDLES = "/api/v1/bundles"
NODE_TYPES = "/api/v1/node-types"
router = APIRouter(tags=["bundles"])


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


class QuotaBody(Body):
    """Each limit is optional: null or absent means no limit."""

    max_running_applications: int | None = None
    max_cores: int | None = Field(None, description="Driver and executor cores, in all.")
    max_memory_mb: int | None = Field(None, description="Driver and executor memory, in all.")

    def quota(self) -> Quota:
        return Quota(self.max_running_applications, self.max_cores, self.max_memory_mb)


class SparkConfBody(Body):
    """Exceptions to the Spark settings this bundle's jobs may set; each entry a setting name
    (``spark.jars.repositories``) or a prefix pattern (``spark.hadoop.fs.s3a.*``)."""

    allowed: list[str] = Field(
        default_factory=list,
        description="Settings the bundle's jobs may set although they are restricted by default.",
    )
    refused: list[str] = Field(
        default_factory=list,
        description="Settings the bundle's jobs may not set, beyond those refused everywhere.",
    )

    def policy(self) -> SparkConfPolicy:
        return SparkConfPolicy(allowed=tuple(self.allowed), refused=tuple(self.refused))


class BundleChange(Body):
    description: str | None = None
    quota: QuotaBody = QuotaBody()
    data_roots: list[str] = Field(
        default_factory=list,
        description="Absolute paths or URIs (file:///data/payments, s3a://bucket/payments) under "
        "which the bundle's jobs' paths, datasets and checkpoints must fall. Not / itself, "
        "nor inside or around the server's home. Stored in normal form.",
    )
    spark_conf: SparkConfBody = SparkConfBody()


class NewBundle(BundleChange):
    name: str


class GrantBody(Body):
    subject: str = Field(description="'user:NAME' or 'group:NAME'.")
    permissions: list[Permission]


class Grants(Body):
    grants: list[GrantBody]


class NodeTypeBody(Body):
    cores: int
    memory_mb: int


@router.get(BUNDLES, summary="The bundles you manage or hold a grant on")
def list_bundles(request: Request, actor: Actor = Depends(require_actor)) -> dict[str, Any]:
    views = services_of(request).bundles.list(actor=actor)
    return {"items": [bundle_document(view) for view in views], "total": len(views)}


IF_MATCH = Header(
    None,
    description="Only if the bundle is at this version (its ETag): its quotas, data roots, Spark "
    "setting policy and grants alike.",
)


@router.post(BUNDLES, status_code=201, summary="Create a resource bundle")
def create_bundle(
    body: NewBundle, request: Request, response: Response, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    view = services_of(request).bundles.create(
        body.name,
        actor=actor,
        description=body.description,
        quota=body.quota.quota(),
        data_roots=body.data_roots,
        spark_conf=body.spark_conf.policy(),
    )
    response.headers["Location"] = location(BUNDLES, body.name)
    return versioned_document(view, response)


@router.get(
    BUNDLES + "/{name}",
    summary="A bundle: quotas, what is in use, data roots, Spark setting policy, grants",
)
def get_bundle(
    name: str, request: Request, response: Response, actor: Actor = Depends(require_actor)
) -> dict[str, Any]:
    return versioned_document(services_of(request).bundles.get(name, actor=actor), response)


@router.put(
    BUNDLES + "/{name}",
    summary="Set a bundle's description, quotas, data roots and Spark setting policy",
)
def update_bundle(
    name: str,
    body: BundleChange,
    request: Request,
    response: Response,
    if_match: str | None = IF_MATCH,
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    view = services_of(request).bundles.update(
        name,
        actor=actor,
        description=body.description,
        quota=body.quota.quota(),
        data_roots=body.data_roots,
        spark_conf=body.spark_conf.policy(),
        expected_version=expected_version(if_match),
    )
    return versioned_document(view, response)


@router.delete(BUNDLES + "/{name}", status_code=204, summary="Delete an empty bundle")
def delete_bundle(
    name: str,
    request: Request,
    if_match: str | None = IF_MATCH,
    actor: Actor = Depends(require_actor),
) -> Response:
    services_of(request).bundles.delete(
        name, actor=actor, expected_version=expected_version(if_match)
    )
    return Response(status_code=204)


@router.put(BUNDLES + "/{name}/grants", summary="Replace every permission grant of a bundle")
def set_grants(
    name: str,
    body: Grants,
    request: Request,
    response: Response,
    if_match: str | None = IF_MATCH,
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    grants = [
        BundleGrant(name, Subject.parse(grant.subject, path=f"body.grants[{index}].subject"), p)
        for index, grant in enumerate(body.grants)
        for p in grant.permissions
    ]
    view = services_of(request).bundles.set_grants(
        name, grants, actor=actor, expected_version=expected_version(if_match)
    )
    return versioned_document(view, response)


@router.get(NODE_TYPES, summary="Node types: the sizes of drivers and executors")
def list_node_types(request: Request) -> dict[str, Any]:
    node_types = services_of(request).bundles.node_types()
    return {"items": [node_type_document(n) for n in node_types], "total": len(node_types)}


@router.put(NODE_TYPES + "/{name}", summary="Create or resize a node type (admins)")
def put_node_type(
    name: str,
    body: NodeTypeBody,
    request: Request,
    response: Response,
    actor: Actor = Depends(require_actor),
) -> dict[str, Any]:
    record, created = services_of(request).bundles.put_node_type(
        name, cores=body.cores, memory_mb=body.memory_mb, actor=actor
    )
    if created:
        response.status_code = 201
        response.headers["Location"] = location(NODE_TYPES, name)
    return node_type_document(record)


@router.delete(NODE_TYPES + "/{name}", status_code=204, summary="Delete an unused node type")
def delete_node_type(
    name: str, request: Request, actor: Actor = Depends(require_actor)
) -> Response:
    services_of(request).bundles.delete_node_type(name, actor=actor)
    return Response(status_code=204)


def versioned_document(view: BundleView, response: Response) -> dict[str, Any]:
    """The bundle's document, its version in the ``ETag`` header too."""
    response.headers["ETag"] = etag(view.bundle.version)
    return bundle_document(view)


def bundle_document(view: BundleView) -> dict[str, Any]:
    """The bundle as the API shows it; ``dataRoots`` is null for a bundle never given any."""
    bundle = view.bundle
    quota = bundle.quota
    by_subject: dict[str, list[str]] = {}
    for grant in view.grants:
        by_subject.setdefault(str(grant.subject), []).append(str(grant.permission))
    return {
        "name": bundle.name,
        "description": bundle.description,
        "createdAt": bundle.created_at.isoformat(),
        "resourceVersion": str(bundle.version),
        "quota": {
            "maxRunningApplications": quota.max_running_applications,
            "maxCores": quota.max_cores,
            "maxMemoryMb": quota.max_memory_mb,
        },
        "dataRoots": None if bundle.data_roots is None else list(bundle.data_roots),
        "sparkConf": {
            "allowed": list(bundle.spark_conf_allowed),
            "refused": list(bundle.spark_conf_refused),
        },
        "inUse": {
            "runningApplications": view.in_use.applications,
            "cores": view.in_use.cores,
            "memoryMb": view.in_use.memory_mb,
        },
        "jobs": view.jobs,
        "grants": [
            {"subject": subject, "permissions": sorted(permissions)}
            for subject, permissions in sorted(by_subject.items())
        ],
        "yourPermissions": sorted(str(p) for p in view.held),
    }


def node_type_document(record: NodeTypeRecord) -> dict[str, Any]:
    return {"name": record.name, "cores": record.cores, "memoryMb": record.memory_mb}
