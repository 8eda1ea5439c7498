"""The delivery worker against a real SMTP server and a real HTTP receiver, over a real store
on SQLite and PostgreSQL, with a fake clock: what it sends, its retries and their backoff, a row
failed for good, a destination's health and the audit trail, and the lease that keeps two
workers from sending one row."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from streamjobs.domain.alerts import NotificationEvent
from streamjobs.notify.worker import DeliveryTerms, retry_delay
from streamjobs.store.notifications import DeliveryState
from tests.delivery.conftest import JITTER, PUBLIC_URL, TERMS, Post
from tests.supervisor.conftest import ALICE

BOTH = [
    {"destination": "ops-hook", "events": ["failed"]},
    {"destination": "ops-mail", "events": ["failed"]},
]
HOOK_ONLY = [{"destination": "ops-hook", "events": ["failed", "running"]}]


def test_a_due_notice_is_delivered_once_to_each_destination(post: Post) -> None:
    post.job("orders", BOTH)
    assert post.enqueue("orders") == 2
    assert post.worker.run_once() == 2
    (request,) = post.hook.requests
    assert request.json()["event"] == "failed"
    assert request.json()["job"] == "orders"
    assert request.json()["message"] == "attempt 1 failed: boom"
    assert request.json()["link"] == f"{PUBLIC_URL}/applications/app-1"
    assert request.json()["figures"] == {"inputRowsPerSecond": 5.0}
    (hook_row,) = post.rows("ops-hook")
    assert request.delivery == str(hook_row.id)
    assert (hook_row.state, hook_row.attempts, hook_row.response_status) == (
        DeliveryState.DELIVERED,
        1,
        200,
    )
    assert hook_row.delivered_at == post.clock.now()
    assert post.mail.subjects() == ["[streamjobs] orders: failed"]
    (mail_row,) = post.rows("ops-mail")
    assert post.mail.messages[0].message["X-Streamjobs-Delivery"] == str(mail_row.id)
    assert "attempt 1 failed: boom" in post.mail.texts()[0]
    assert (mail_row.state, mail_row.response_status) == (DeliveryState.DELIVERED, None)
    assert post.worker.run_once() == 0  # nothing is sent twice
    assert len(post.hook.requests) == 1
    assert len(post.mail.messages) == 1


def test_a_failed_send_is_retried_with_exponential_backoff_and_jitter(post: Post) -> None:
    post.job("orders", HOOK_ONLY)
    post.enqueue("orders")
    post.hook.answer(503, 500)
    start = post.clock.now()
    assert post.worker.run_once() == 0
    (row,) = post.rows("ops-hook")
    first_wait = TERMS.retry_base_seconds * (1 + 0.2 * JITTER)
    assert (row.state, row.attempts, row.response_status) == (DeliveryState.PENDING, 1, 503)
    assert row.next_attempt_at == start + timedelta(seconds=first_wait)
    assert "answered HTTP 503" in (row.last_error or "")
    post.clock.advance(first_wait - 1)
    assert post.worker.run_once() == 0
    assert len(post.hook.requests) == 1  # not due yet
    post.clock.advance(1)
    post.worker.run_once()
    (row,) = post.rows("ops-hook")
    assert (row.attempts, row.response_status) == (2, 500)
    assert row.next_attempt_at == post.clock.now() + timedelta(seconds=2 * first_wait)
    post.clock.advance(2 * first_wait)
    assert post.worker.run_once() == 1
    (row,) = post.rows("ops-hook")
    assert (row.state, row.attempts, row.response_status) == (DeliveryState.DELIVERED, 3, 200)
    assert [request.delivery for request in post.hook.requests] == [str(row.id)] * 3
    failures = post.audit("notification.failed")
    assert [entry.detail["attempt"] for entry in failures] == [1, 2]
    assert failures[0].resource_name == "ops-hook"
    assert "HTTP 503" in failures[0].detail["error"]


def test_after_the_last_attempt_a_row_is_failed_for_good(post: Post) -> None:
    post.job("orders", HOOK_ONLY)
    post.enqueue("orders")
    post.hook.answer(*[500] * 10)
    for _ in range(TERMS.max_attempts):
        post.worker.run_once()
        post.clock.advance(TERMS.retry_max_seconds * 2)
    (row,) = post.rows("ops-hook")
    assert (row.state, row.attempts, row.next_attempt_at) == (
        DeliveryState.FAILED,
        TERMS.max_attempts,
        None,
    )
    post.clock.advance(86400)
    post.worker.run_once()
    assert len(post.hook.requests) == TERMS.max_attempts
    last = post.audit("notification.failed")[-1]
    assert last.detail["retryAt"] is None


def test_a_destination_failing_in_a_row_is_unhealthy_until_its_next_success(post: Post) -> None:
    post.job("orders", BOTH)
    post.mail.refuse = True
    post.enqueue("orders")
    post.worker.run_once()
    assert post.healthy("ops-mail")  # one failure: not yet
    post.clock.advance(TERMS.retry_max_seconds)
    post.worker.run_once()
    assert not post.healthy("ops-mail")
    assert post.healthy("ops-hook")
    (row,) = post.rows("ops-mail")
    assert "451" in (row.last_error or "")
    post.mail.refuse = False
    post.clock.advance(TERMS.retry_max_seconds)
    post.worker.run_once()
    assert post.healthy("ops-mail")
    assert len(post.mail.messages) == 1
    changes = [
        (entry.action, entry.resource_name, entry.detail.get("consecutiveFailures"))
        for entry in post.audit("notification-destination.")
    ]
    assert changes == [
        ("notification-destination.unhealthy", "ops-mail", 2),
        ("notification-destination.healthy", "ops-mail", 0),
    ]
    assert len(post.audit("notification.failed")) == 2


def test_a_row_another_worker_claimed_is_left_alone_until_its_lease_ends(post: Post) -> None:
    post.job("orders", HOOK_ONLY)
    post.enqueue("orders")
    (row,) = post.rows("ops-hook")
    lease_end = post.clock.now() + timedelta(seconds=TERMS.lease_seconds)
    with post.services.store.transaction() as repos:  # a worker that died while sending
        assert repos.notifications.claim(row.id, now=post.clock.now(), until=lease_end)
    other = post.worker_with()
    assert other.run_once() == 0
    assert post.hook.requests == []
    post.clock.advance(TERMS.lease_seconds)
    assert other.run_once() == 1
    assert len(post.hook.requests) == 1


def test_a_secret_missing_from_the_bundle_fails_the_row_with_its_name(post: Post) -> None:
    post.services.destinations.apply(
        "ops-hook",
        {
            "apiVersion": "streamjobs.io/v1",
            "kind": "NotificationDestination",
            "metadata": {"name": "ops-hook"},
            "spec": {"type": "webhook", "url": post.hook.url, "signingSecret": "hook-key"},
        },
        actor=ALICE,
    )
    post.job("orders", HOOK_ONLY)
    post.enqueue("orders")
    post.worker.run_once()
    (row,) = post.rows("ops-hook")
    assert row.state is DeliveryState.PENDING
    assert "'hook-key'" in (row.last_error or "")
    assert post.hook.requests == []
    post.services.secrets.put("default", "hook-key", "k3y", actor=ALICE)
    post.clock.advance(TERMS.retry_max_seconds)
    assert post.worker.run_once() == 1
    assert post.hook.requests[0].headers["x-streamjobs-signature"].startswith("sha256=")


def test_the_worker_thread_delivers_until_stopped(post: Post) -> None:
    post.job("orders", HOOK_ONLY)
    post.enqueue("orders")
    post.worker.start()
    try:
        deadline = time.monotonic() + 20
        while not post.hook.requests and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        post.worker.stop()
    assert len(post.hook.requests) == 1
    post.enqueue("orders", NotificationEvent.RUNNING)
    time.sleep(0.2)  # stopped: nothing more is sent
    assert len(post.hook.requests) == 1


@pytest.mark.parametrize(
    ("failures", "jitter", "seconds"),
    [(1, 0.0, 10), (2, 0.0, 20), (3, 0.5, 44), (4, 0.99, 60), (30, 0.0, 60)],
)
def test_retry_delay_doubles_stretches_by_jitter_and_is_capped(
    failures: int, jitter: float, seconds: float
) -> None:
    terms = DeliveryTerms(retry_base_seconds=10, retry_max_seconds=60)
    assert retry_delay(failures, terms, jitter) == pytest.approx(seconds)


def test_a_send_test_in_flight_is_left_to_the_request_that_sends_it(post: Post) -> None:
    with post.services.store.transaction() as repos:
        repos.notifications.add(
            destination="ops-hook",
            job_name=None,
            application_id=None,
            event="test",
            notice={"event": "test"},
            at=post.clock.now(),
        )
    assert post.worker.run_once() == 0
    assert post.hook.requests == []


def test_two_workers_at_once_send_each_row_once(post: Post) -> None:
    post.job("orders", HOOK_ONLY)
    for _ in range(12):
        post.enqueue("orders")
    workers = [post.worker_with(), post.worker_with()]
    threads = [threading.Thread(target=worker.run_once) for worker in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    deliveries = [request.delivery for request in post.hook.requests]
    assert sorted(deliveries) == sorted({str(row.id) for row in post.rows("ops-hook")})
    assert all(row.state is DeliveryState.DELIVERED for row in post.rows("ops-hook"))
