"""A lean keep-alive HTTP/1.1 client for the load generator, so that it is never what is timed."""

from __future__ import annotations

import asyncio
from typing import cast
from urllib.parse import urlsplit

import httptools


class HttpError(Exception):
    """No answer: the connection failed, closed early, or the answer could not be parsed."""


class _Connection(asyncio.Protocol):
    """One keep-alive connection: ``send`` writes a request and waits for its status code."""

    def __init__(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.WriteTransport | None = None
        self._answer: asyncio.Future[int] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.WriteTransport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(HttpError(f"unparsable answer: {error}"))
            self.close()

    def on_message_complete(self) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(self._parser.get_status_code())
        if not self._parser.should_keep_alive():
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(HttpError(f"connection lost: {exc or 'closed by the server'}"))

    async def send(self, request: bytes) -> int:
        if self.closed or self._transport is None:
            raise HttpError("connection closed")
        self._answer = asyncio.get_running_loop().create_future()
        self._transport.write(request)
        try:
            return await self._answer
        except asyncio.CancelledError:
            self.close()  # its answer may still come, and would pass for the next request's
            raise

    def close(self) -> None:
        self.closed = True
        if self._transport is not None:
            self._transport.close()

    def _fail(self, error: HttpError) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(error)


class Client:
    """At most ``connections`` keep-alive connections to ``url``'s host; ``request`` borrows a
    free one (waiting for one in turn), opening or reopening it as needed."""

    def __init__(self, url: str, *, connections: int, headers: dict[str, str]) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"an http:// URL with a host, not {url!r}")
        self._host = parts.hostname
        self._port = parts.port or 80
        fixed = {"Host": parts.netloc, **headers}
        self._headers = "".join(f"{name}: {value}\r\n" for name, value in fixed.items())
        self._free: asyncio.LifoQueue[_Connection | None] = asyncio.LifoQueue()
        for _ in range(connections):
            self._free.put_nowait(None)  # a slot with no connection opened yet

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *_: object) -> None:
        while not self._free.empty():
            connection = self._free.get_nowait()
            if connection is not None:
                connection.close()

    def prepare(self, method: str, path: str, body: bytes | None = None) -> bytes:
        """The bytes of a request, to send with ``request`` as often as wanted."""
        length = f"Content-Length: {len(body)}\r\n" if body is not None else ""
        head = f"{method} {path} HTTP/1.1\r\n{self._headers}{length}\r\n".encode("latin-1")
        return head + (body or b"")

    async def request(self, prepared: bytes) -> int:
        """Send a request made by ``prepare``; its status code. ``HttpError`` if none came."""
        connection = await self._free.get()
        try:
            if connection is None or connection.closed:
                connection = await self._open()
            return await connection.send(prepared)
        finally:
            self._free.put_nowait(connection if connection and not connection.closed else None)

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, connection = await loop.create_connection(_Connection, self._host, self._port)
        except OSError as error:
            raise HttpError(f"cannot connect to {self._host}:{self._port}: {error}") from error
        return connection
