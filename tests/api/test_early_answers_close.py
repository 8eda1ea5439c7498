"""An answer given before the request's body has all come in closes the connection (issue 20,
item 2): after a 413 or a 401 the server must not go on reading, and dropping, whatever the client
still sends. Raw sockets against a real uvicorn server: the client keeps writing after the answer
and must be cut off within a few MiB (the sockets' buffers), not read for as long as it sends."""

from __future__ import annotations

import select
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest

from tests.conftest import RunningServer

MIB = 1024 * 1024
GIB = 1024 * MIB
BUDGET = 64 * MIB
"""How much body the client offers after the answer; a server that closes takes far less."""
PIECE = b"x" * 65536
CHUNK = b"%x\r\n" % len(PIECE) + PIECE + b"\r\n"


@dataclass
class Exchange:
    answer: bytes
    """What the server answered (at least its status line and headers)."""
    sent: int
    """Bytes of body the client managed to write before the server cut it off."""
    cut_off: bool


def send_past_the_answer(url: str, head: str, *, chunked: bool) -> Exchange:
    """Send ``head`` then body for as long as the server takes it, up to ``BUDGET`` bytes,
    reading its answer as it comes."""
    address = urlsplit(url)
    assert address.hostname is not None
    assert address.port is not None
    piece = CHUNK if chunked else PIECE
    answer, sent = b"", 0
    with socket.create_connection((address.hostname, address.port), timeout=30) as connection:
        connection.sendall(head.replace("\n", "\r\n").encode() + b"\r\n")
        while sent < BUDGET:
            try:
                connection.sendall(piece)
                sent += len(piece)
                while select.select([connection], [], [], 0)[0]:
                    data = connection.recv(65536)
                    if not data:
                        return Exchange(answer, sent, cut_off=True)
                    answer += data
            except (BrokenPipeError, ConnectionResetError):
                return Exchange(answer + rest_of_answer(connection), sent, cut_off=True)
    return Exchange(answer, sent, cut_off=False)


def rest_of_answer(connection: socket.socket) -> bytes:
    """What of the answer is still to be read on a connection the server has closed."""
    rest = b""
    try:
        while data := connection.recv(65536):
            rest += data
    except ConnectionResetError:
        pass
    return rest


def assert_cut_off_after(exchange: Exchange, status: int) -> None:
    assert exchange.answer.startswith(b"HTTP/1.1 %d " % status), exchange.answer[:200]
    head = exchange.answer.split(b"\r\n\r\n")[0].lower()
    assert b"\r\nconnection: close" in head, head
    assert b"application/problem+json" in head, head
    assert exchange.cut_off, f"the server read all {exchange.sent} bytes sent after its answer"
    assert exchange.sent < BUDGET // 2


@pytest.fixture
def token_header(running_server: RunningServer) -> str:
    return f"Authorization: Bearer {running_server.admin_token}\n"


def test_a_body_announced_too_large_is_cut_off(
    running_server: RunningServer, token_header: str
) -> None:
    head = (
        "POST /api/v1/jobs HTTP/1.1\nHost: test\nContent-Type: application/json\n"
        f"{token_header}Content-Length: {GIB}\n"
    )
    assert_cut_off_after(send_past_the_answer(running_server.url, head, chunked=False), 413)


def test_a_chunked_body_past_the_limit_is_cut_off(
    running_server: RunningServer, token_header: str
) -> None:
    head = (
        "POST /api/v1/jobs HTTP/1.1\nHost: test\nContent-Type: application/json\n"
        f"{token_header}Transfer-Encoding: chunked\n"
    )
    assert_cut_off_after(send_past_the_answer(running_server.url, head, chunked=True), 413)


def test_a_body_without_credentials_is_cut_off(running_server: RunningServer) -> None:
    head = "PUT /api/v1/jobs/anything HTTP/1.1\nHost: test\nTransfer-Encoding: chunked\n"
    assert_cut_off_after(send_past_the_answer(running_server.url, head, chunked=True), 401)


def test_a_route_that_answers_before_reading_the_body_cuts_it_off(
    running_server: RunningServer,
) -> None:
    head = (
        "POST /api/v1/applications/no-such-application/reports HTTP/1.1\nHost: test\n"
        "Authorization: Bearer not-a-report-token\nTransfer-Encoding: chunked\n"
    )
    assert_cut_off_after(send_past_the_answer(running_server.url, head, chunked=True), 401)


def test_an_answer_after_the_whole_body_keeps_the_connection(
    running_server: RunningServer, token_header: str
) -> None:
    body = b'{"kind": "nothing"}'
    head = (
        "POST /api/v1/jobs HTTP/1.1\nHost: test\nContent-Type: application/json\n"
        f"{token_header}Content-Length: {len(body)}\n\n"
    ).replace("\n", "\r\n")
    address = urlsplit(running_server.url)
    assert address.hostname is not None
    assert address.port is not None
    with socket.create_connection((address.hostname, address.port), timeout=30) as connection:
        for _ in range(2):  # the same connection serves a second request
            connection.sendall(head.encode() + body)
            answer = connection.recv(65536)
            assert answer.startswith(b"HTTP/1.1 422 "), answer[:200]
            assert b"connection: close" not in answer.lower()


@pytest.mark.parametrize("route", ["POST /api/v1/bundles", "PUT /api/v1/jobs/anything"])
def test_a_body_with_a_token_that_is_no_token_is_cut_off(
    running_server: RunningServer, route: str
) -> None:
    """Refused before any of it is read, whichever route (a FastAPI model route reads its body
    before its dependencies run): 401, not the 413 of a body read up to its limit."""
    head = (
        f"{route} HTTP/1.1\nHost: test\nContent-Type: application/json\n"
        "Authorization: Bearer not-a-token\nTransfer-Encoding: chunked\n"
    )
    assert_cut_off_after(send_past_the_answer(running_server.url, head, chunked=True), 401)
