"""The Connections pages: every named connection with the jobs that use it, one connection's
details, creating and editing one as YAML, and deleting one.

The YAML goes to the connection service exactly as ``/api/v1/connections`` gives it, so the rules
and the permissions (reading for every signed-in person, changes for those who manage bundles)
are the API's; an error is shown at the line of the field it names, as on a job's YAML page.
A deletion the service refuses (jobs still use the connection) comes back as the page's alert.
That YAML and delete flow is ``web/manifest_pages.py``'s, shared with the Notifications pages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from streamjobs.domain.access import Actor
from streamjobs.domain.connections import ConnectionType
from streamjobs.services.connection_users import ConnectionUsers, connection_users
from streamjobs.services.connections import ConnectionQuery
from streamjobs.store.connections import ConnectionRecord
from streamjobs.web.manifest_pages import (
    ManifestPages,
    add_yaml_routes,
    jobs_in_words,
    manage_refusal,
)
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.settings_forms import notice_of
from streamjobs.web.yaml_text import dump_yaml, without_empty

router = APIRouter()

CONNECTIONS_PAGE = "/connections"
PAGES = ManifestPages(CONNECTIONS_PAGE, "connection_yaml.html", nav="connections")
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
            f"Used by {jobs_in_words(self.users)}; point them at another connection or delete "
            "them first"
        )


def connection_path(name: str) -> str:
    return PAGES.path(name)


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


add_yaml_routes(
    router,
    PAGES,
    noun="connection",
    service=lambda services: services.connections,
    new_manifest=NEW_CONNECTION,
    refused_page=lambda request, name, actor, reason: _detail_page(
        request, name, actor, error=reason, status_code=409
    ),
)


@router.get(CONNECTIONS_PAGE + "/{name}")
def connection_page(
    request: Request,
    name: str,
    done: Annotated[str, Query()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    return _detail_page(request, name, actor, notice=notice_of(OUTCOMES, done, name))


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
