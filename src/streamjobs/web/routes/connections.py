"""The Connections pages: every named connection with the jobs that use it, one connection's
details, creating and editing one as YAML, and deleting one.

The YAML goes to the connection service exactly as ``/api/v1/connections`` gives it, so the rules
and the permissions (reading for every signed-in person, changes for those who manage bundles)
are the API's; an error is shown at the line of the field it names, as on a job's YAML page.
A deletion the service refuses (jobs still use the connection) comes back as the page's alert.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from streamjobs.domain.access import (
    DOMAIN_PERMISSION_LABELS,
    Actor,
    DomainPermission,
    has_domain_permission,
    require_domain_permission,
)
from streamjobs.domain.connections import ConnectionType
from streamjobs.domain.errors import AlreadyExists, Conflict, FieldError, InvalidInput
from streamjobs.domain.versions import resource_version
from streamjobs.services.connection_users import ConnectionUsers, connection_users
from streamjobs.services.connections import ConnectionQuery
from streamjobs.store.connections import ConnectionRecord
from streamjobs.web.job_form_errors import FormErrors, yaml_errors
from streamjobs.web.job_forms import ControlError
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.settings_forms import notice_of
from streamjobs.web.yaml_text import dump_yaml, read_mapping_text, without_empty

router = APIRouter()

CONNECTIONS_PAGE = "/connections"
PAGE_SIZE = 50
OUTCOMES = {
    "created": "Connection “{name}” created.",
    "saved": "Connection “{name}” saved.",
    "unchanged": "Connection “{name}” was already as written; nothing changed.",
    "deleted": "Connection “{name}” deleted.",
}
ADDRESS_FIELD = {
    ConnectionType.KAFKA: "bootstrapServers",
    ConnectionType.LAKEHOUSE: "warehouse",
    ConnectionType.FILES: "root",
    ConnectionType.JDBC: "url",
}
"""The field of each type that says where its data system is."""
NEW_CONNECTION = """\
apiVersion: streamjobs.io/v1
kind: Connection
metadata:
  name: landing-files
  description: Files dropped by the ingest team
spec:
  type: files                     # kafka | lakehouse | files | jdbc
  root: file:///data/landing      # files: root; kafka: bootstrapServers: 127.0.0.1:9092;
                                  # lakehouse: warehouse: file:///var/lib/lakehouse;
                                  # jdbc: url: jdbc:postgresql://127.0.0.1:5432/db and user
  options: {}                     # given to every reader and writer of the connection
  secretOptions: {}               # option -> name of a secret of the job's bundle
"""
SaveManifest = Callable[[dict[str, Any]], tuple[ConnectionRecord, str]]
"""The service's create or apply, answering the record and the outcome's word."""
STALE_ADVICE = "Nothing was saved; what you typed is still below."


@dataclass(frozen=True)
class ConnectionRow:
    """One connection as the pages show it."""

    record: ConnectionRecord
    users: ConnectionUsers

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def path(self) -> str:
        return connection_path(self.record.name)

    @property
    def address(self) -> str:
        """Where the data system is (its bootstrap servers, warehouse, root or URL)."""
        field = ADDRESS_FIELD.get(ConnectionType(self.record.type), "")
        return str(self.spec.get(field, ""))

    @property
    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.record.manifest.get("spec", {})
        return spec

    @property
    def delete_refusal(self) -> str | None:
        """Why the connection cannot be deleted now (jobs use it); None if it can."""
        if not self.users.count:
            return None
        return (
            f"Used by {_jobs_in_words(self.users)}; point them at another connection or delete "
            "them first"
        )


def connection_path(name: str) -> str:
    return f"{CONNECTIONS_PAGE}/{quote(name, safe='')}"


@router.get(CONNECTIONS_PAGE)
def connections_page(
    request: Request,
    connection_type: Annotated[str, Query(alias="type")] = "",
    search: Annotated[str, Query()] = "",
    offset: Annotated[int, Query(ge=0)] = 0,
    done: Annotated[str, Query()] = "",
    name: Annotated[str, Query()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    services = services_of(request)
    query = ConnectionQuery(
        type=connection_type or None, search=search or None, limit=PAGE_SIZE, offset=offset
    )
    page = services.connections.list(query)
    users = connection_users(services.store, actor, [record.name for record in page.items])
    return render(
        request,
        "connections.html",
        nav="connections",
        rows=[ConnectionRow(record, users[record.name]) for record in page.items],
        total=page.total,
        offset=page.offset,
        page_size=PAGE_SIZE,
        connection_type=connection_type,
        types=list(ConnectionType),
        search=search,
        create_refusal=manage_refusal(actor),
        notice=notice_of(OUTCOMES, done, name),
    )


@router.get(CONNECTIONS_PAGE + "/new")
def new_connection_page(request: Request, actor: Actor = Depends(page_actor)) -> Response:
    require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
    return _yaml_page(request, None, NEW_CONNECTION)


@router.post(CONNECTIONS_PAGE + "/new")
def create_connection(
    request: Request,
    manifest: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    connections = services_of(request).connections
    return _save_yaml(
        request,
        None,
        manifest,
        save=lambda document: (connections.create(document, actor=actor), "created"),
    )


@router.get(CONNECTIONS_PAGE + "/{name}")
def connection_page(
    request: Request,
    name: str,
    done: Annotated[str, Query()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    return _detail_page(request, name, actor, notice=notice_of(OUTCOMES, done, name))


@router.get(CONNECTIONS_PAGE + "/{name}/yaml")
def connection_yaml_page(
    request: Request, name: str, actor: Actor = Depends(page_actor)
) -> Response:
    require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
    record = services_of(request).connections.get(name)
    return _yaml_page(request, name, dump_yaml(without_empty(_versioned(record))))


@router.post(CONNECTIONS_PAGE + "/{name}/yaml")
def apply_connection_yaml(
    request: Request,
    name: str,
    manifest: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    connections = services_of(request).connections

    def save(document: dict[str, Any]) -> tuple[ConnectionRecord, str]:
        record, outcome = connections.apply(name, document, actor=actor)
        return record, "unchanged" if str(outcome) == "unchanged" else "saved"

    return _save_yaml(request, name, manifest, save=save)


@router.post(CONNECTIONS_PAGE + "/{name}/delete")
def delete_connection(
    request: Request,
    name: str,
    version: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    expected = resource_version(version, path="version") if version.strip() else None
    try:
        services_of(request).connections.delete(name, actor=actor, expected_version=expected)
    except Conflict as refusal:
        return _detail_page(request, name, actor, error=refusal.detail, status_code=409)
    return RedirectResponse(
        f"{CONNECTIONS_PAGE}?done=deleted&name={quote(name, safe='')}", status_code=303
    )


def manage_refusal(actor: Actor) -> str | None:
    """Why ``actor`` may not create, change or delete connections; None if they may."""
    if has_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES):
        return None
    return f"Needs the “{DOMAIN_PERMISSION_LABELS[DomainPermission.MANAGE_BUNDLES]}” permission"


def _detail_page(
    request: Request,
    name: str,
    actor: Actor,
    *,
    notice: str | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    services = services_of(request)
    record = services.connections.get(name)
    users = connection_users(services.store, actor, [name])[name]
    return render(
        request,
        "connection.html",
        status_code=status_code,
        nav="connections",
        row=ConnectionRow(record, users),
        manifest_text=dump_yaml(without_empty(record.manifest)),
        manage_refusal=manage_refusal(actor),
        notice=notice,
        error=error,
    )


def _save_yaml(
    request: Request,
    name: str | None,
    text: str,
    *,
    save: SaveManifest,
) -> Response:
    """Give the YAML to ``save`` (the service's create or apply); the page again with every
    error at its line when it is refused, the connection's page when it is saved."""
    read = read_mapping_text(text, what="the manifest")
    if read.mapping is None:
        errors = FormErrors(
            tuple(ControlError("manifest", p.message, line=p.line) for p in read.problems)
        )
        return _yaml_page(request, name, text, errors=errors, status_code=422)
    try:
        record, outcome = save(read.mapping)
    except InvalidInput as invalid:
        errors = yaml_errors(read.lines, invalid.errors)
        return _yaml_page(request, name, text, errors=errors, status_code=422)
    except AlreadyExists as exists:
        errors = yaml_errors(read.lines, [FieldError("metadata.name", exists.detail)])
        return _yaml_page(request, name, text, errors=errors, status_code=409)
    except Conflict as conflict:
        notice = f"{conflict.detail}. {STALE_ADVICE}"
        return _yaml_page(request, name, text, notice=notice, status_code=409)
    target = f"{connection_path(record.name)}?done={outcome}"
    return RedirectResponse(target, status_code=303)


def _yaml_page(
    request: Request,
    name: str | None,
    text: str,
    *,
    errors: FormErrors | None = None,
    notice: str | None = None,
    status_code: int = 200,
) -> Response:
    action = f"{CONNECTIONS_PAGE}/new" if name is None else f"{connection_path(name)}/yaml"
    return render(
        request,
        "connection_yaml.html",
        status_code=status_code,
        nav="connections",
        name=name,
        action=action,
        cancel=CONNECTIONS_PAGE if name is None else connection_path(name),
        text=text,
        errors=errors or FormErrors(),
        notice=notice,
    )


def _versioned(record: ConnectionRecord) -> dict[str, Any]:
    """The manifest with its resourceVersion, so an edit of it conflicts with another."""
    manifest = copy.deepcopy(record.manifest)
    manifest["metadata"]["resourceVersion"] = str(record.version)
    return manifest


def _jobs_in_words(users: ConnectionUsers) -> str:
    """``3 jobs: 'a', 'b', 1 you cannot see``."""
    named = [repr(job) for job in users.visible]
    if users.hidden:
        named.append(f"{users.hidden} you cannot see")
    return f"{users.count} job{'' if users.count == 1 else 's'}: {', '.join(named)}"
