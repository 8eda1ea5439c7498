"""The notification destination use cases: create, apply, delete, list, show, "send test" and
the recent deliveries of named destinations (Settings -> Notifications, the API, the CLI).

Managing destinations takes the "Manage bundles" permission, as connections do; reading them
does not, so whoever writes a job can see which destinations to name. Beyond the manifest's own
rules (``domain.destinations``), the store keeps jobs and destinations consistent: a destination
a job's ``spec.notifications`` names cannot be deleted (a ``Conflict`` naming the jobs), and a
job cannot name one that does not exist (``destination_references``, checked where a job is
written). "Send test" sends a notice at once, within a short timeout, records it in the outbox
as delivered or failed (so it shows among the destination's deliveries), and raises
``DestinationTestFailed`` with the reason when it fails.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

from streamjobs.domain.access import Actor, DomainPermission, require_domain_permission
from streamjobs.domain.alerts import NotificationEvent
from streamjobs.domain.clock import Clock
from streamjobs.domain.destinations import (
    DestinationType,
    NotificationDestination,
    parse_destination,
)
from streamjobs.domain.errors import Conflict, FieldConflict, FieldError, InvalidInput
from streamjobs.domain.notices import Notice
from streamjobs.domain.spec import split_server_fields
from streamjobs.notify.senders import DeliveryFailed, Sender, sender_for
from streamjobs.services.destination_references import jobs_naming
from streamjobs.services.resources import (
    ApplyOutcome,
    audit,
    decided_on_content,
    iso_time,
    require_same_name,
)
from streamjobs.store.db import Repositories, Store
from streamjobs.store.destinations import DestinationRecord
from streamjobs.store.notifications import OutboxRecord

KIND = "notification-destination"
TEST_EVENT = NotificationEvent.TEST
"""The outbox's ``event`` of a "send test" row, and its notice's."""
TEST_JOB = "(test)"
"""The job a test notice names: no job can be called that (parentheses are not allowed)."""
DEFAULT_TEST_TIMEOUT_SECONDS = 10.0
TEST_LEASE = timedelta(hours=1)
"""How long a test's outbox row is kept from the delivery worker: the test settles it within
seconds; only a server that died meanwhile leaves it to the worker, which sends it then."""
MAX_DELIVERIES = 500


class SecretResolver(Protocol):
    """Gives the values of a bundle's secrets (``services.secrets.SecretService``).

    Contract: ``resolve`` returns the values of those of ``names`` the bundle has, by name; a
    name it lacks is left out."""

    def resolve(self, bundle: str, names: Iterable[str]) -> dict[str, str]: ...


class DestinationTestFailed(FieldConflict):
    """A "send test" that did not deliver: HTTP 409, with the reason at the manifest field it
    points at (``spec.host``: could not connect to smtp.invalid:25: Name or service not known).

    409, not 422: the request is well formed and the destination valid; what it names (a host,
    a URL, a secret of its bundle) does not work now, as a Run refused for a missing secret is
    (``CannotRun``). Not 5xx: the server itself did not fail.
    """

    title = "Test delivery failed"

    def __init__(self, name: str, failure: DeliveryFailed, delivery: OutboxRecord) -> None:
        path = f"spec.{failure.field}" if failure.field else "spec"
        super().__init__(
            [FieldError(path, failure.reason)],
            prefix=f"the test notification to destination {name!r} failed: ",
        )
        self.reason = failure.reason
        self.delivery = delivery


class DestinationService:
    """Creates, changes, reads and tests notification destinations on behalf of an actor.

    ``senders`` gives the sender of a destination kind (``notify.senders.sender_for``; tests may
    give one trusting their own TLS certificates); ``test_timeout_seconds`` bounds each network
    step of a "send test"."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        secrets: SecretResolver,
        senders: Callable[..., Sender] = sender_for,
        test_timeout_seconds: float = DEFAULT_TEST_TIMEOUT_SECONDS,
    ) -> None:
        self._store = store
        self._clock = clock
        self._secrets = secrets
        self._senders = senders
        self._test_timeout = test_timeout_seconds

    def validate(self, document: Any, *, source: str | None = None) -> NotificationDestination:
        """Check a NotificationDestination manifest (``InvalidInput`` at each field path); the
        fields the server owns (as printed) are ignored."""
        manifest, _ = split_server_fields(document)
        return parse_destination(manifest, source=source)

    def create(self, document: Any, *, actor: Actor) -> DestinationRecord:
        """Store a new destination; ``AlreadyExists`` if the name is taken, ``InvalidInput``
        (422) for a bad manifest or a bundle that does not exist."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        destination = self.validate(document)
        with self._store.transaction() as repos:
            return self._add(destination, repos, actor=actor)

    def apply(
        self, name: str, document: Any, *, actor: Actor
    ) -> tuple[DestinationRecord, ApplyOutcome]:
        """Create the destination, or bring it to the manifest; the same manifest twice changes
        nothing. A ``metadata.resourceVersion`` in the manifest must still be the current one
        (else a ``Conflict``). Its health is kept across changes."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        destination = self.validate(document)
        require_same_name(
            "notification destination",
            name,
            destination.name,
            instead="create one under the new name, point the jobs at it, then delete this one",
        )
        _, expected_version = split_server_fields(document)
        return decided_on_content(
            lambda: self._apply(name, destination, actor, expected_version),
            expected_version=expected_version,
        )

    def delete(self, name: str, *, actor: Actor, expected_version: int | None = None) -> None:
        """Delete the destination and its outbox rows; a ``Conflict`` (409) naming the jobs
        whose ``spec.notifications`` name it."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        with self._store.transaction() as repos:
            record = repos.destinations.get(name)
            repos.destinations.delete(name, expected_version=expected_version)
            users = jobs_naming(repos, name)
            if users:
                quoted = ", ".join(repr(job) for job in users)
                which = "job" if len(users) == 1 else "jobs"
                raise Conflict(
                    f"notification destination {name!r} is named in spec.notifications of "
                    f"{which} {quoted}; remove it from them first"
                )
            forgotten = repos.notifications.delete_for_destination(name)
            self._audit(
                repos, actor, "notification-destination.deleted", record, forgotten=forgotten
            )

    def exists(self, name: str) -> bool:
        with self._store.reading() as repos:
            return repos.destinations.find(name) is not None

    def get(self, name: str) -> DestinationRecord:
        """The destination called ``name``; ``NotFound`` (404) if there is none."""
        with self._store.reading() as repos:
            return repos.destinations.get(name)

    def list(
        self, *, bundle: str | None = None, kind: str | None = None
    ) -> builtins.list[DestinationRecord]:
        """Every destination (of ``bundle``, of ``kind``), by name; ``InvalidInput`` at
        ``query.type`` for a kind that does not exist."""
        if kind is not None and kind not in set(DestinationType):
            known = ", ".join(DestinationType)
            raise InvalidInput([FieldError("query.type", f"must be one of: {known}")])
        with self._store.reading() as repos:
            return repos.destinations.list(bundle=bundle, kind=kind)

    def names(self) -> builtins.list[str]:
        """The names of every destination, sorted (for a job form's choices)."""
        return [record.name for record in self.list()]

    def missing_secrets(self, name: str) -> builtins.list[str]:
        """The secret names the destination uses that its bundle does not hold (yet), sorted;
        a delivery would fail on the first of them."""
        record = self.get(name)
        found = self._secrets.resolve(record.bundle, record.secret_names)
        return sorted(set(record.secret_names) - set(found))

    def deliveries(
        self, name: str, limit: int = 50, *, actor: Actor | None = None
    ) -> builtins.list[OutboxRecord]:
        """The destination's ``limit`` (1-500) newest outbox rows, newest first: what was sent
        or is waiting, and how each delivery went (tests included, with event ``test``).
        ``NotFound`` for a destination that does not exist. They name jobs of every bundle, so
        they are for those who manage bundles: given an ``actor``, that is checked here (a
        caller that gives none has checked it)."""
        if actor is not None:
            require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        if not 1 <= limit <= MAX_DELIVERIES:
            raise InvalidInput(
                [FieldError("query.limit", f"must be between 1 and {MAX_DELIVERIES}")]
            )
        with self._store.reading() as repos:
            repos.destinations.get(name)
            return repos.notifications.for_destination(name, limit)

    def send_test(self, name: str, *, actor: Actor) -> OutboxRecord:
        """Send a test notice to the destination now (each network step within the test
        timeout) and give its outbox row, delivered. A delivery that fails is recorded as failed
        (never retried) and raises ``DestinationTestFailed`` (409) carrying the reason; a
        success marks the destination healthy again."""
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        now = self._clock.now()
        with self._store.transaction() as repos:
            destination = repos.destinations.get(name)
            notice = notice_for_test(destination, actor=actor.name, at=now)
            row = repos.notifications.add(
                destination=name,
                job_name=None,
                application_id=None,
                event=TEST_EVENT,
                notice=notice.to_json(),
                at=now,
            )
            # taken at once, in the same transaction: the delivery worker must not send it too
            repos.notifications.claim(row.id, now=now, until=now + TEST_LEASE)
        try:
            secrets = self._secrets.resolve(destination.bundle, destination.secret_names)
            sender = self._senders(destination.kind, timeout_seconds=self._test_timeout)
            status = sender.send(destination, notice, secrets, delivery_id=row.id)
        except DeliveryFailed as failure:
            failed = self._test_failed(row, destination, actor, failure)
            raise DestinationTestFailed(name, failure, failed) from None
        except Exception as error:  # a sender's bug: the row is settled all the same
            self._test_failed(
                row, destination, actor, DeliveryFailed(f"{type(error).__name__}: {error}")
            )
            raise
        with self._store.transaction() as repos:
            delivered = repos.notifications.mark_delivered(
                row.id, at=self._clock.now(), response_status=status
            )
            if repos.destinations.find(name) is not None:
                repos.destinations.record_outcome(name, delivered=True, unhealthy_after=1)
            self._audit(repos, actor, "notification-destination.tested", destination)
        return delivered

    def _test_failed(
        self,
        row: OutboxRecord,
        destination: DestinationRecord,
        actor: Actor,
        failure: DeliveryFailed,
    ) -> OutboxRecord:
        """Record a test that did not deliver: failed for good (a test is never retried)."""
        with self._store.transaction() as repos:
            failed = repos.notifications.mark_failed(
                row.id, error=failure.reason, retry_at=None, response_status=failure.response_status
            )
            self._audit(
                repos,
                actor,
                "notification-destination.test-failed",
                destination,
                error=failure.reason,
            )
        return failed

    def _apply(
        self,
        name: str,
        destination: NotificationDestination,
        actor: Actor,
        expected_version: int | None,
    ) -> tuple[DestinationRecord, ApplyOutcome]:
        with self._store.transaction() as repos:
            current = repos.destinations.find(name)
            if current is None:
                return self._add(destination, repos, actor=actor), ApplyOutcome.CREATED
            if current.manifest == _stored_form(destination) and expected_version in (
                None,
                current.version,
            ):
                return current, ApplyOutcome.UNCHANGED
            _require_bundle(repos, destination)
            record = repos.destinations.update(
                name,
                expected_version=expected_version or current.version,
                **_fields(destination),
                actor=actor.name,
                at=self._clock.now(),
            )
            self._audit(repos, actor, "notification-destination.configured", record)
        return record, ApplyOutcome.CONFIGURED

    def _add(
        self, destination: NotificationDestination, repos: Repositories, *, actor: Actor
    ) -> DestinationRecord:
        _require_bundle(repos, destination)
        record = repos.destinations.add(
            name=destination.name, **_fields(destination), actor=actor.name, at=self._clock.now()
        )
        self._audit(repos, actor, "notification-destination.created", record)
        return record

    def _audit(
        self,
        repos: Repositories,
        actor: Actor,
        action: str,
        record: DestinationRecord,
        **extra: Any,
    ) -> None:
        detail = {"version": record.version, "type": record.kind, "bundle": record.bundle, **extra}
        audit(repos, self._clock, actor, action, kind=KIND, name=record.name, detail=detail)


def notice_for_test(destination: DestinationRecord, *, actor: str, at: datetime) -> Notice:
    """The notice a "send test" sends: about no job and no application (``job`` is
    ``TEST_JOB``, which no job can be called), saying who asked for it."""
    return Notice(
        event=NotificationEvent.TEST,
        job=TEST_JOB,
        at=at,
        message=(
            f"Test notification from streamjobs to destination {destination.name!r}, sent by "
            f"{actor}: if you can read this, the destination works."
        ),
        bundle=destination.bundle,
    )


def destination_document(record: DestinationRecord) -> dict[str, Any]:
    """The destination as clients see it: its manifest (secrets by name only), the metadata
    the server owns, and its status (healthy, consecutive failures, the secret names it uses).
    ``split_server_fields`` drops the server's fields again when it is applied back."""
    document = dict(record.manifest)
    document["metadata"] = dict(
        record.manifest["metadata"],
        resourceVersion=str(record.version),
        creationTimestamp=iso_time(record.created_at),
        createdBy=record.created_by,
        updateTimestamp=iso_time(record.updated_at),
        updatedBy=record.updated_by,
    )
    document["status"] = {
        "healthy": record.healthy,
        "consecutiveFailures": record.consecutive_failures,
        "secretNames": list(record.secret_names),
    }
    return document


def delivery_document(row: OutboxRecord) -> dict[str, Any]:
    """One outbox row as clients see it (camelCase, times in ISO 8601)."""
    return {
        "id": row.id,
        "destination": row.destination,
        "job": row.job_name,
        "application": row.application_id,
        "event": row.event,
        "state": str(row.state),
        "attempts": row.attempts,
        "createdAt": iso_time(row.created_at),
        "nextAttemptAt": None if row.next_attempt_at is None else iso_time(row.next_attempt_at),
        "deliveredAt": None if row.delivered_at is None else iso_time(row.delivered_at),
        "lastError": row.last_error,
        "responseStatus": row.response_status,
        "notice": row.notice,
    }


def _require_bundle(repos: Repositories, destination: NotificationDestination) -> None:
    bundle = destination.spec.bundle
    if not repos.bundles.exists(bundle):
        known = ", ".join(sorted(b.name for b in repos.bundles.list())) or "none"
        raise InvalidInput(
            [
                FieldError(
                    "spec.bundle", f"resource bundle {bundle!r} does not exist (known: {known})"
                )
            ]
        )


def _fields(destination: NotificationDestination) -> dict[str, Any]:
    return {
        "kind": destination.spec.type.value,
        "bundle": destination.spec.bundle,
        "description": destination.metadata.description,
        "manifest": _stored_form(destination),
        "config": destination.config(),
        "secret_names": destination.secret_names(),
    }


def _stored_form(destination: NotificationDestination) -> dict[str, Any]:
    """The manifest as the store keeps it: JSON data, camelCase keys, only the fields given or
    defaulted to a value (a Slack destination prints no ``host: null``)."""
    return destination.model_dump(by_alias=True, mode="json", exclude_none=True)
