"""The load generator's HTTP client against a real HTTP/1.1 server: status codes, bodies sent and
read (``Content-Length`` and chunked), keep-alive, a server that closes, a request given up."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from bench.load_generator import Client, HttpError

from streamjobs.launch.ports import free_loopback_port
from tests.event_loops import run_apart


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    connections: ClassVar[set[int]] = set()
    bodies: ClassVar[list[bytes]] = []

    def do_GET(self) -> None:
        Handler.connections.add(self.client_address[1])  # the client port: one a connection
        if self.path == "/slow":
            threading.Event().wait(0.5)
        if self.path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in (b"hello ", b"world"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        status = 404 if self.path == "/missing" else 200
        body = b"x" * 100_000 if self.path == "/big" else b"ok"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        if self.path == "/close":
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self) -> None:
        Handler.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_loopback_port()
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}"
    server.shutdown()
    server.server_close()


def run(url: str, *requests: tuple[str, str, bytes | None], connections: int = 1) -> list[int]:
    async def send() -> list[int]:
        async with Client(url, connections=connections, headers={"X-Test": "1"}) as client:
            return [await client.request(client.prepare(*request)) for request in requests]

    return run_apart(send())


def test_status_codes_and_bodies_of_any_length(url: str) -> None:
    assert run(url, ("GET", "/", None), ("GET", "/missing", None), ("GET", "/big", None)) == [
        200,
        404,
        200,
    ]
    assert run(url, ("GET", "/chunked", None), ("GET", "/", None)) == [200, 200]


def test_a_body_is_sent_whole(url: str) -> None:
    assert run(url, ("PUT", "/job", b'{"a": 1}')) == [201]
    assert Handler.bodies[-1] == b'{"a": 1}'


def test_requests_share_a_keep_alive_connection(url: str) -> None:
    Handler.connections.clear()
    run(url, *[("GET", "/", None)] * 5)
    assert len(Handler.connections) == 1


def test_a_connection_the_server_closes_is_opened_again(url: str) -> None:
    Handler.connections.clear()
    assert run(url, ("GET", "/close", None), ("GET", "/", None)) == [200, 200]
    assert len(Handler.connections) == 2


def test_a_request_given_up_closes_its_connection(url: str) -> None:
    async def give_up_then_ask() -> int:
        async with Client(url, connections=1, headers={}) as client:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.request(client.prepare("GET", "/slow")), 0.1)
            return await client.request(client.prepare("GET", "/"))

    assert run_apart(give_up_then_ask()) == 200


def test_no_server_is_an_http_error() -> None:
    with pytest.raises(HttpError, match="cannot connect"):
        run(f"http://127.0.0.1:{free_loopback_port()}", ("GET", "/", None))


def test_only_plain_http_urls() -> None:
    with pytest.raises(ValueError, match="http://"):
        Client("https://example.org", connections=1, headers={})
