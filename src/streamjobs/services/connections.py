"""The connection use cases: create, apply, delete, list and show named connections.

Beyond the manifest's own rules (``domain.connections``), the store keeps jobs and connections
consistent: a connection that a job's dataset names cannot be deleted, nor changed to a type that
job's formats do not fit (both are a ``Conflict`` naming the jobs). A change first writes and
then looks for such jobs in the same transaction, and job writes read the connections they use
locked for share (see ``JobService``), so a job and a change of its connection racing each other
cannot both land.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from streamjobs.domain.access import Actor, DomainPermission, require_domain_permission
from streamjobs.domain.clock import Clock
from streamjobs.domain.connections import (
    Connection,
    ConnectionType,
    connections_used,
    dataset_errors,
    parse_connection,
)
from streamjobs.domain.errors import Conflict, FieldError, InvalidInput
from streamjobs.domain.spec import StreamingJob, split_server_fields
from streamjobs.services.resources import (
    ApplyOutcome,
    Page,
    audit,
    check_page,
    decided_on_content,
    require_same_name,
    stored_form,
    with_server_metadata,
)
from streamjobs.store.connections import ConnectionRecord
from streamjobs.store.db import Repositories, Store

KIND = "connection"


@dataclass(frozen=True)
class ConnectionQuery:
    """Which connections to list: ``type`` is a connection type, ``search`` part of a name."""

    type: str | None = None
    search: str | None = None
    limit: int = 50
    offset: int = 0


class ConnectionService:
    """Creates, changes and reads connections on behalf of an actor."""

    def __init__(self, *, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def validate(self, document: Any, *, source: str | None = None) -> Connection:
        """Check a Connection manifest; the fields the server owns (as printed) are ignored."""
        manifest, _ = split_server_fields(document)
        return parse_connection(manifest, source=source)

    def create(self, document: Any, *, actor: Actor) -> ConnectionRecord:
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        connection = self.validate(document)
        with self._store.transaction() as repos:
            return self._add(connection, repos, actor=actor)

    def apply(
        self, name: str, document: Any, *, actor: Actor
    ) -> tuple[ConnectionRecord, ApplyOutcome]:
        """Create the connection, or bring it to the manifest; the same manifest twice changes
        nothing. A ``metadata.resourceVersion`` in the manifest must still be the current one."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        connection = self.validate(document)
        require_same_name(
            KIND,
            name,
            connection.name,
            instead="create a connection under the new name, point the jobs at it, then delete "
            "this one",
        )
        _, expected_version = split_server_fields(document)
        return decided_on_content(
            lambda: self._apply(name, connection, actor=actor, expected_version=expected_version),
            expected_version=expected_version,
        )

    def _apply(
        self, name: str, connection: Connection, *, actor: Actor, expected_version: int | None
    ) -> tuple[ConnectionRecord, ApplyOutcome]:
        with self._store.transaction() as repos:
            current = repos.connections.locked(name)
            if current is None:
                return self._add(connection, repos, actor=actor), ApplyOutcome.CREATED
            if current.manifest == stored_form(connection):
                return current, ApplyOutcome.UNCHANGED
            record = repos.connections.update(
                name,
                expected_version=expected_version or current.version,
                manifest=stored_form(connection),
                connection_type=connection.spec.type,
                description=connection.metadata.description,
                tags=dict(connection.metadata.tags),
                actor=actor.name,
                at=self._clock.now(),
            )
            if connection.spec.type != current.type:
                previous = Connection.model_validate(current.manifest)
                _refuse_breaking_jobs(repos, previous=previous, changed=connection)
            self._audit(repos, actor, "connection.configured", record)
        return record, ApplyOutcome.CONFIGURED

    def delete(self, name: str, *, actor: Actor, expected_version: int | None = None) -> None:
        """Delete the connection; a ``Conflict`` naming the jobs if any job's dataset uses it."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        with self._store.transaction() as repos:
            record = repos.connections.get(name)
            repos.connections.delete(name, expected_version=expected_version)
            users = sorted(jobs_using(repos, name))
            if users:
                raise Conflict(
                    f"connection {name!r} is used by the datasets of {_jobs(users)}; point them "
                    "at another connection or delete them first"
                )
            self._audit(repos, actor, "connection.deleted", record)

    def exists(self, name: str) -> bool:
        with self._store.transaction() as repos:
            return repos.connections.find(name) is not None

    def get(self, name: str) -> ConnectionRecord:
        with self._store.transaction() as repos:
            return repos.connections.get(name)

    def list(self, query: ConnectionQuery) -> Page[ConnectionRecord]:
        check_page(query.limit, query.offset)
        if query.type is not None and query.type not in set(ConnectionType):
            known = ", ".join(ConnectionType)
            raise InvalidInput([FieldError("query.type", f"must be one of: {known}")])
        with self._store.transaction() as repos:
            items, total = repos.connections.list(
                connection_type=query.type,
                search=query.search,
                limit=query.limit,
                offset=query.offset,
            )
        return Page(items=items, total=total, limit=query.limit, offset=query.offset)

    def _add(
        self, connection: Connection, repos: Repositories, *, actor: Actor
    ) -> ConnectionRecord:
        record = repos.connections.add(
            name=connection.name,
            namespace=connection.metadata.namespace,
            connection_type=connection.spec.type,
            description=connection.metadata.description,
            manifest=stored_form(connection),
            tags=dict(connection.metadata.tags),
            actor=actor.name,
            at=self._clock.now(),
        )
        self._audit(repos, actor, "connection.created", record)
        return record

    def _audit(
        self, repos: Repositories, actor: Actor, action: str, record: ConnectionRecord
    ) -> None:
        detail = {"version": record.version, "type": record.type}
        audit(repos, self._clock, actor, action, kind=KIND, name=record.name, detail=detail)


def connection_document(record: ConnectionRecord) -> dict[str, Any]:
    """The connection as clients see it: its manifest (secrets by name only) and the metadata
    the server owns."""
    return with_server_metadata(record)


def stored_connections(
    repos: Repositories, *, lock_for_share: bool = False
) -> dict[str, Connection]:
    """Every stored connection, parsed, by name; ``lock_for_share`` keeps them from changing
    until the transaction ends."""
    records, _ = repos.connections.list(lock_for_share=lock_for_share)
    return {record.name: Connection.model_validate(record.manifest) for record in records}


def jobs_using(repos: Repositories, connection: str) -> dict[str, StreamingJob | None]:
    """The jobs whose datasets name ``connection``, by name, parsed (None for a stored manifest
    that no longer parses, which counts as using it: better kept than broken)."""
    users: dict[str, StreamingJob | None] = {}
    for name, manifest in repos.jobs.manifests_mentioning(f'"{connection}:').items():
        try:
            job = StreamingJob.model_validate(manifest)
        except ValidationError:
            users[name] = None
            continue
        if connection in connections_used(job):
            users[name] = job
    return users


def _refuse_breaking_jobs(
    repos: Repositories, *, previous: Connection, changed: Connection
) -> None:
    """``Conflict`` if a job that uses the connection breaks a dataset rule with its ``changed``
    version that it did not break with the ``previous`` one."""
    after = {**stored_connections(repos), changed.name: changed}
    before = {**after, previous.name: previous}
    broken = []
    for name, job in sorted(jobs_using(repos, changed.name).items()):
        if job is None:
            continue
        new_errors = set(dataset_errors(job, after)) - set(dataset_errors(job, before))
        broken += [f"job {name!r} {error}" for error in sorted(new_errors, key=str)]
    if broken:
        raise Conflict(
            f"connection {changed.name!r} cannot become a {changed.spec.type} connection while "
            f"jobs use it as a {previous.spec.type} one: {'; '.join(broken)}"
        )


def _jobs(names: list[str]) -> str:
    quoted = ", ".join(repr(name) for name in names)
    return f"job {quoted}" if len(names) == 1 else f"jobs {quoted}"
