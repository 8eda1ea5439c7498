"""The runner's HTTP reporter against a real HTTP receiver, and with nobody listening."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from streamjobs.launch.ports import free_loopback_port
from streamjobs.runner.reporting import HttpReporter


class Receiver(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), ReceiverHandler)
        self.batches: list[dict[str, Any]] = []
        self.tokens: list[str] = []


class ReceiverHandler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.batches.append(json.loads(body))
        self.server.tokens.append(self.headers["Authorization"])
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return None


@contextmanager
def serving(handler: type[ReceiverHandler]) -> Iterator[Receiver]:
    """A receiver whose posts ``handler`` answers, serving in a thread until the block ends."""
    server = Receiver()
    server.RequestHandlerClass = handler
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with serving(ReceiverHandler) as server:
        yield server


def test_events_arrive_in_order_with_the_token(receiver: Receiver) -> None:
    url = f"http://127.0.0.1:{receiver.server_address[1]}/events"
    reporter = HttpReporter(url, "app-token")
    for index in range(250):
        reporter.report({"type": "progress", "timestamp": "t", "index": index})
    reporter.close()
    received = [event["index"] for batch in receiver.batches for event in batch["events"]]
    assert received == list(range(250))
    assert set(receiver.tokens) == {"Bearer app-token"}


def test_with_the_server_away_the_oldest_events_are_dropped_and_nothing_blocks() -> None:
    reporter = HttpReporter(f"http://127.0.0.1:{free_loopback_port()}/events", "t", capacity=3)
    for index in range(10):
        reporter.report({"type": "progress", "timestamp": "t", "index": index})
    reporter.close(deadline_seconds=1)
    assert reporter.dropped >= 7


class SlowFirstHandler(ReceiverHandler):
    """Holds the first post until the test releases it."""

    server: SlowReceiver

    def do_POST(self) -> None:
        if not self.server.first_arrived.is_set():
            self.server.first_arrived.set()
            self.server.release.wait(10)
        super().do_POST()


class SlowReceiver(Receiver):
    def __init__(self) -> None:
        ThreadingHTTPServer.__init__(self, ("127.0.0.1", 0), SlowFirstHandler)
        self.batches = []
        self.tokens = []
        self.first_arrived = threading.Event()
        self.release = threading.Event()


def test_events_reported_while_a_post_is_in_flight_are_not_lost() -> None:
    receiver = SlowReceiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{receiver.server_address[1]}/events"
    reporter = HttpReporter(url, "t", capacity=5, batch_size=5)
    for index in range(5):
        reporter.report({"type": "progress", "index": index})
    assert receiver.first_arrived.wait(10)
    for index in range(5, 10):  # overflows the buffer: 0-4 leave it while being posted
        reporter.report({"type": "progress", "index": index})
    receiver.release.set()
    reporter.close()
    receiver.shutdown()
    received = [event["index"] for batch in receiver.batches for event in batch["events"]]
    assert received == list(range(10))
    sequences = [event["sequence"] for batch in receiver.batches for event in batch["events"]]
    assert sequences == list(range(10))


class SizeLimitedHandler(ReceiverHandler):
    """Answers 413 to a body past 2,000 bytes, as the server does past its report limit."""

    def do_POST(self) -> None:
        if int(self.headers["Content-Length"]) > 2000:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(413)
            self.end_headers()
            return
        super().do_POST()


def test_a_batch_too_large_goes_in_halves_and_an_event_too_large_is_dropped() -> None:
    with serving(SizeLimitedHandler) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/events"
        reporter = HttpReporter(url, "t", batch_size=100)
        for index in range(40):
            reporter.report({"type": "progress", "index": index, "note": "x" * 200})
        reporter.report({"type": "progress", "index": 40, "note": "x" * 5000})
        reporter.report({"type": "progress", "index": 41})
        reporter.close()
    received = [event["index"] for batch in server.batches for event in batch["events"]]
    assert received == [*range(40), 41]
    assert reporter.dropped == 1


def test_batches_stay_under_the_body_size_the_reporter_is_given(receiver: Receiver) -> None:
    url = f"http://127.0.0.1:{receiver.server_address[1]}/events"
    reporter = HttpReporter(url, "t", batch_size=100, max_body_bytes=1500)
    for index in range(30):
        reporter.report({"type": "progress", "index": index, "note": "x" * 200})
    reporter.report({"type": "progress", "index": 30, "note": "x" * 3000})
    reporter.close()
    received = [event["index"] for batch in receiver.batches for event in batch["events"]]
    assert received == list(range(31))
    sizes = [len(json.dumps(batch)) for batch in receiver.batches if len(batch["events"]) > 1]
    assert sizes
    assert max(sizes) <= 1500
    assert reporter.dropped == 0


class UnreadableRefusingHandler(ReceiverHandler):
    """Answers 422 to a batch holding an event that is no report, as the server does."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if any(event.get("type") == "unknown" for event in json.loads(body)["events"]):
            self.send_response(422)
            self.end_headers()
            return
        self.server.batches.append(json.loads(body))
        self.send_response(204)
        self.end_headers()


def test_an_event_the_server_cannot_read_is_dropped_and_the_others_delivered() -> None:
    with serving(UnreadableRefusingHandler) as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/events"
        reporter = HttpReporter(url, "t", batch_size=100, max_pause=0.1)
        for index in range(10):
            kind = "unknown" if index == 6 else "progress"
            reporter.report({"type": kind, "index": index})
        reporter.close()
    received = sorted(event["index"] for batch in server.batches for event in batch["events"])
    assert received == [0, 1, 2, 3, 4, 5, 7, 8, 9]
    assert reporter.dropped == 1
