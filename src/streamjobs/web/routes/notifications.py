"""Settings -> Notifications: the notification destinations (email, webhook, Slack) with their
health and last delivery, one destination's page with its recent deliveries and Send test,
creating and editing one as YAML, and deleting one.

As on the Connections pages (the flow is ``web/manifest_pages.py``'s), the YAML goes to the
destination service exactly as ``/api/v1/notification-destinations`` takes it, so the rules and
the permissions are the API's: every signed-in person may read destinations (a job's author
picks one by name), those who manage bundles change, test and delete them and see their
deliveries (which name jobs of every bundle). An error is shown at the line of the field it
names; a refused delete (jobs subscribe) or a failed test comes back as the page with the
reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import RedirectResponse, Response

from streamjobs.domain.access import Actor
from streamjobs.domain.destinations import DestinationType
from streamjobs.services.destination_users import Subscribers, destination_users
from streamjobs.services.destinations import DestinationTestFailed
from streamjobs.store.destinations import DestinationRecord
from streamjobs.store.notifications import OutboxRecord
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

DESTINATIONS_PAGE = "/settings/notifications"
PAGES = ManifestPages(DESTINATIONS_PAGE, "destination_yaml.html", nav="notifications")
DELIVERIES_SHOWN = 50
OUTCOMES = {
    "created": "Destination “{name}” created.",
    "saved": "Destination “{name}” saved.",
    "unchanged": "Destination “{name}” was already as written; nothing changed.",
    "deleted": "Destination “{name}” deleted.",
    "tested": "Test notification to “{name}” delivered: its answer is under Recent deliveries.",
}
NEW_DESTINATION = """\
apiVersion: streamjobs.io/v1
kind: NotificationDestination
metadata:
  name: ops-webhook
  description: Alerts for the operations team
spec:
  type: webhook                   # webhook | email | slack
  bundle: default                 # the bundle whose secrets the names below are
  url: https://hooks.example.com/streamjobs
  # signingSecret: ops-hook-key   # signs the body: X-Streamjobs-Signature: sha256=<hex>
  # headers: {X-Team: data}
  # headerSecrets: {Authorization: ops-hook-token}
  #
  # email:  host: smtp.example.com, port: 587, security: starttls | tls | none,
  #         user: alerts, passwordSecret: smtp-password,
  #         from: streamjobs@example.com, to: [ops@example.com]
  # slack:  urlSecret: slack-ops-url  (a secret holding the incoming-webhook URL)
"""
WHERE_FIELD = {
    DestinationType.EMAIL: "host",
    DestinationType.WEBHOOK: "url",
    DestinationType.SLACK: "urlSecret",
}
"""The field of each type that says where its notices go."""


@dataclass(frozen=True)
class DestinationRow:
    """One destination as the pages show it, with its newest delivery (None: none yet) and
    the jobs subscribed to it."""

    record: DestinationRecord
    last: OutboxRecord | None
    subscribers: Subscribers

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def path(self) -> str:
        return destination_path(self.record.name)

    @property
    def delete_refusal(self) -> str | None:
        """Why the destination cannot be deleted now (jobs subscribe to it); None if it can."""
        if not self.subscribers.count:
            return None
        jobs = jobs_in_words(self.subscribers)
        return f"Subscribed to by {jobs}; remove it from their notifications first"

    @property
    def where(self) -> str:
        """Where its notices go: the SMTP host and recipients, the webhook's URL, or the name
        of the secret holding the Slack URL."""
        config = self.record.config
        kind = DestinationType(self.record.kind)
        if kind is DestinationType.EMAIL:
            recipients = ", ".join(config.get("to") or [])
            return f"{config.get('host')}:{config.get('port')} → {recipients}"
        if kind is DestinationType.SLACK:
            return f"secret {config.get('urlSecret')}"
        return str(config.get(WHERE_FIELD[kind], ""))


def destination_path(name: str) -> str:
    return PAGES.path(name)


@router.get(DESTINATIONS_PAGE)
def destinations_page(
    request: Request,
    done: Annotated[str, Query()] = "",
    name: Annotated[str, Query()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    services = services_of(request)
    records = services.destinations.list()
    users = destination_users(services.store, actor, [record.name for record in records])
    rows = [
        DestinationRow(record, _newest(request, record.name), users[record.name])
        for record in records
    ]
    return render(
        request,
        "destinations.html",
        nav="notifications",
        rows=rows,
        create_refusal=manage_refusal(actor),
        notice=notice_of(OUTCOMES, done, name),
    )


add_yaml_routes(
    router,
    PAGES,
    noun="destination",
    service=lambda services: services.destinations,
    new_manifest=NEW_DESTINATION,
    refused_page=lambda request, name, actor, reason: _detail_page(
        request, name, actor, error=reason, status_code=409
    ),
)


@router.get(DESTINATIONS_PAGE + "/{name}")
def destination_page(
    request: Request,
    name: str,
    done: Annotated[str, Query()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    notice = notice_of(OUTCOMES, done, name)
    return _detail_page(request, name, actor, notice=notice)


@router.post(DESTINATIONS_PAGE + "/{name}/test")
def send_test(request: Request, name: str, actor: Actor = Depends(page_actor)) -> Response:
    """Send a test notice now; back to the page saying it was delivered (the delivery, with
    the receiver's answer, among the others), or the page with the reason it failed (409)."""
    try:
        services_of(request).destinations.send_test(name, actor=actor)
    except DestinationTestFailed as failure:
        return _detail_page(request, name, actor, test_failure=failure.reason, status_code=409)
    return RedirectResponse(f"{destination_path(name)}?done=tested", status_code=303)


def _detail_page(
    request: Request,
    name: str,
    actor: Actor,
    *,
    notice: str | None = None,
    error: str | None = None,
    test_failure: str | None = None,
    status_code: int = 200,
) -> Response:
    services = services_of(request)
    destinations = services.destinations
    record = destinations.get(name)
    users = destination_users(services.store, actor, [name])[name]
    refusal = manage_refusal(actor)
    deliveries = [] if refusal else destinations.deliveries(name, DELIVERIES_SHOWN, actor=actor)
    return render(
        request,
        "destination.html",
        status_code=status_code,
        nav="notifications",
        row=DestinationRow(record, deliveries[0] if deliveries else None, users),
        deliveries=deliveries,
        missing_secrets=destinations.missing_secrets(name),
        manifest_text=dump_yaml(without_empty(record.manifest)),
        manage_refusal=refusal,
        notice=notice,
        error=error,
        test_failure=test_failure,
    )


def _newest(request: Request, name: str) -> OutboxRecord | None:
    """The destination's newest delivery; the list shows its time and outcome, never its job
    (which only those who manage bundles see)."""
    newest = services_of(request).destinations.deliveries(name, 1)
    return newest[0] if newest else None
