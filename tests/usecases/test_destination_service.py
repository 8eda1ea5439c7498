"""The notification destination use cases on each backend: apply outcomes and audit entries,
who may manage them, missing secrets, "send test" over STARTTLS with a login to a real SMTP
server (and what it records), and deleting a destination with its deliveries."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.destinations import destination_manifest
from streamjobs.domain.errors import Conflict, Forbidden, InvalidInput
from streamjobs.notify.senders import EmailSender, Sender
from streamjobs.services.container import Services
from streamjobs.services.destinations import DestinationService, DestinationTestFailed
from streamjobs.store.notifications import DeliveryState
from tests.factories import console_manifest
from tests.notify_receivers import Certificate, self_signed_certificate, smtp_receiver

ANA = Actor(Principal("ana", is_admin=True), source="10.0.0.7")
BOB = Actor(Principal("bob"), source="10.0.0.8")
"""Bob has no domain permission: he may read destinations, not manage them."""


def slack(name: str, **extra: Any) -> dict[str, Any]:
    return destination_manifest(name, {"type": "slack", "urlSecret": "slack-url", **extra})


def audit_trail(services: Services) -> list[str]:
    with services.store.reading() as repos:
        entries = repos.audit.list(limit=100)
    return [entry.action for entry in reversed(entries) if entry.resource_kind != "secret"]


def test_apply_creates_then_leaves_alone_then_configures_and_audits(services: Services) -> None:
    destinations = services.destinations
    record, outcome = destinations.apply("ops", slack("ops"), actor=ANA)
    assert (outcome, record.version, record.kind, record.secret_names) == (
        "created",
        1,
        "slack",
        ("slack-url",),
    )
    assert destinations.apply("ops", slack("ops"), actor=ANA)[1] == "unchanged"
    changed, outcome = destinations.apply("ops", slack("ops", urlSecret="other"), actor=ANA)
    assert (outcome, changed.version, changed.config) == ("configured", 2, {"urlSecret": "other"})
    assert destinations.exists("ops")
    assert destinations.names() == ["ops"]
    destinations.delete("ops", actor=ANA)
    assert not destinations.exists("ops")
    assert audit_trail(services) == [
        "notification-destination.created",
        "notification-destination.configured",
        "notification-destination.deleted",
    ]


def test_a_printed_stale_version_is_a_conflict(services: Services) -> None:
    services.destinations.create(slack("ops"), actor=ANA)
    printed = slack("ops", urlSecret="a")
    printed["metadata"]["resourceVersion"] = "1"
    services.destinations.apply("ops", printed, actor=ANA)
    with pytest.raises(Conflict):
        services.destinations.apply(
            "ops", slack("ops", urlSecret="b") | {"metadata": printed["metadata"]}, actor=ANA
        )


def test_only_bundle_managers_change_or_test_but_anyone_reads(services: Services) -> None:
    services.destinations.create(slack("ops"), actor=ANA)
    for attempt in (
        lambda: services.destinations.create(slack("mine"), actor=BOB),
        lambda: services.destinations.apply("ops", slack("ops", urlSecret="x"), actor=BOB),
        lambda: services.destinations.delete("ops", actor=BOB),
        lambda: services.destinations.send_test("ops", actor=BOB),
        lambda: services.destinations.deliveries("ops", actor=BOB),
    ):
        with pytest.raises(Forbidden):
            attempt()
    assert services.destinations.get("ops").name == "ops"
    assert [record.name for record in services.destinations.list()] == ["ops"]


def test_a_bundle_that_does_not_exist_is_refused_at_spec_bundle(services: Services) -> None:
    with pytest.raises(InvalidInput) as refused:
        services.destinations.create(slack("ops", bundle="nowhere"), actor=ANA)
    assert [error.path for error in refused.value.errors] == ["spec.bundle"]
    assert not services.destinations.exists("ops")


def test_missing_secrets_are_those_the_bundle_lacks(services: Services) -> None:
    services.destinations.create(slack("ops"), actor=ANA)
    assert services.destinations.missing_secrets("ops") == ["slack-url"]
    services.secrets.put("default", "slack-url", "https://hooks.example/x", actor=ANA)
    assert services.destinations.missing_secrets("ops") == []


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


def trusting(certificate: Certificate) -> Any:
    """Senders that trust the test's certificate (the server's trust the system's)."""

    def sender(kind: str, *, timeout_seconds: float) -> Sender:
        assert kind == "email"
        return EmailSender(
            timeout_seconds=timeout_seconds, tls_context=certificate.client_context()
        )

    return sender


def test_send_test_over_starttls_with_a_login_records_the_delivery_and_heals(
    services: Services, certificate: Certificate
) -> None:
    destinations = DestinationService(
        store=services.store,
        clock=services.clock,
        secrets=services.secrets,
        senders=trusting(certificate),
        test_timeout_seconds=5,
    )
    services.secrets.put("default", "smtp-password", "s3cret", actor=ANA)
    with smtp_receiver(starttls=certificate, logins={"alerts": "s3cret"}) as receiver:
        spec = {
            "type": "email",
            "host": "localhost",
            "port": receiver.port,
            "security": "starttls",
            "user": "alerts",
            "passwordSecret": "smtp-password",
            "from": "streamjobs@example.com",
            "to": ["ops@example.com"],
        }
        destinations.create(destination_manifest("mail", spec), actor=ANA)
        with services.store.transaction() as repos:
            repos.destinations.record_outcome("mail", delivered=False, unhealthy_after=1)
        assert not destinations.get("mail").healthy
        delivered = destinations.send_test("mail", actor=ANA)
    [mail] = receiver.messages
    assert mail.login == "alerts"
    assert mail.message["X-Streamjobs-Delivery"] == str(delivered.id)
    assert "sent by ana" in mail.message.get_content()
    assert (delivered.state, delivered.event, delivered.job_name) == (
        DeliveryState.DELIVERED,
        "test",
        None,
    )
    assert destinations.get("mail").healthy
    assert [row.id for row in destinations.deliveries("mail", actor=ANA)] == [delivered.id]
    assert audit_trail(services)[-1] == "notification-destination.tested"


def test_a_failed_test_is_recorded_failed_and_never_retried(services: Services) -> None:
    services.destinations.create(slack("ops"), actor=ANA)
    with pytest.raises(DestinationTestFailed) as failed:
        services.destinations.send_test("ops", actor=ANA)
    assert failed.value.reason == "secret 'slack-url' (spec.urlSecret) is not in bundle 'default'"
    assert [error.path for error in failed.value.errors] == ["spec.urlSecret"]
    assert failed.value.delivery.state is DeliveryState.FAILED
    with services.store.reading() as repos:
        assert repos.notifications.depth() == 0
    assert audit_trail(services)[-1] == "notification-destination.test-failed"


def test_deleting_a_destination_forgets_its_deliveries(services: Services) -> None:
    services.destinations.create(slack("ops"), actor=ANA)
    with pytest.raises(DestinationTestFailed):
        services.destinations.send_test("ops", actor=ANA)
    services.destinations.delete("ops", actor=ANA)
    with services.store.reading() as repos:
        assert repos.notifications.for_destination("ops", 10) == []
    with pytest.raises(InvalidInput):
        services.destinations.deliveries("ops", 0)


def test_a_named_destination_cannot_go_and_a_missing_one_cannot_be_named(
    services: Services,
) -> None:
    subscribed = console_manifest(
        "orders", notifications=[{"destination": "ops", "events": ["failed"]}]
    )
    with pytest.raises(InvalidInput) as refused:
        services.jobs.create(subscribed, actor=ANA)
    assert [error.path for error in refused.value.errors] == ["spec.notifications[0].destination"]
    services.destinations.create(slack("ops"), actor=ANA)
    services.jobs.create(subscribed, actor=ANA)
    with pytest.raises(Conflict, match="'orders'"):
        services.destinations.delete("ops", actor=ANA)
    assert services.destinations.exists("ops")
    services.destinations.create(slack("ops-2"), actor=ANA)
    services.destinations.delete("ops-2", actor=ANA)


class StoreWatchingSender:
    """A sender that looks at what the delivery worker would see while a test is being sent,
    then fails the way it is told to (or not at all)."""

    def __init__(self, services: Services, failure: Exception | None = None) -> None:
        self.services = services
        self.failure = failure
        self.due_while_sending: list[Any] = []

    def __call__(self, kind: str, *, timeout_seconds: float) -> Sender:
        return self

    def send(self, destination: Any, notice: Any, secrets: Any, *, delivery_id: Any = None) -> int:
        with self.services.store.reading() as repos:
            self.due_while_sending = repos.notifications.due(self.services.clock.now(), 10)
        if self.failure is not None:
            raise self.failure
        return 204


def test_a_test_in_flight_is_not_due_for_the_delivery_worker(services: Services) -> None:
    sender = StoreWatchingSender(services)
    destinations = DestinationService(
        store=services.store, clock=services.clock, secrets=services.secrets, senders=sender
    )
    destinations.create(slack("ops"), actor=ANA)
    delivered = destinations.send_test("ops", actor=ANA)
    assert sender.due_while_sending == []
    assert (delivered.state, delivered.response_status) == (DeliveryState.DELIVERED, 204)


def test_a_sender_that_breaks_leaves_its_test_failed_not_pending(services: Services) -> None:
    sender = StoreWatchingSender(services, failure=RuntimeError("a bug"))
    destinations = DestinationService(
        store=services.store, clock=services.clock, secrets=services.secrets, senders=sender
    )
    destinations.create(slack("ops"), actor=ANA)
    with pytest.raises(RuntimeError):
        destinations.send_test("ops", actor=ANA)
    [row] = destinations.deliveries("ops")
    assert (row.state, row.last_error) == (DeliveryState.FAILED, "RuntimeError: a bug")
