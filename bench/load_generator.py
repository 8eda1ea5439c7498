"""An open-loop HTTP load generator for figure 4, run in its own process against a real server,
and the lean keep-alive HTTP/1.1 client it sends with, so that the client is never what is
timed."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import httptools
import uvloop

LIST_JOBS = "list jobs"
GET_JOB = "get job"
JOB_APPLICATIONS = "list a job's applications"
ALL_APPLICATIONS = "list all applications"
APPLY = "apply (unchanged)"
PAGE = 50
REQUESTS = {  # route: method, path of the job ``name``
    LIST_JOBS: ("GET", f"/api/v1/jobs?limit={PAGE}"),
    GET_JOB: ("GET", "/api/v1/jobs/{name}"),
    JOB_APPLICATIONS: ("GET", f"/api/v1/jobs/{{name}}/applications?limit={PAGE}"),
    ALL_APPLICATIONS: ("GET", f"/api/v1/applications?limit={PAGE}"),
    APPLY: ("PUT", "/api/v1/jobs/{name}"),
}
ROUTES = tuple(REQUESTS)
CONNECTIONS = 32
DRAIN_SECONDS = 5.0
now = time.perf_counter

Call = tuple[str, str, str, bytes | None]


@dataclass(frozen=True)
class Plan:
    url: str
    token: str
    names: list[str]
    manifest: dict[str, Any]
    rate: float
    seconds: float
    warmup_seconds: float
    connections: int = CONNECTIONS
    seed: int = 1
    drain_seconds: float = DRAIN_SECONDS


def parse_args(argv: Sequence[str] | None = None) -> tuple[Plan, Path]:
    parser = argparse.ArgumentParser(prog="python -m bench.load_generator", description=__doc__)
    parser.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8040")
    parser.add_argument("--token-file", type=Path, required=True)
    parser.add_argument("--jobs-file", type=Path, required=True, help="names and a manifest")
    parser.add_argument("--rate", type=float, required=True, help="requests per second")
    parser.add_argument("--seconds", type=float, required=True, help="measured seconds")
    parser.add_argument("--warmup-seconds", type=float, required=True, help="not recorded")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args(argv)
    jobs = json.loads(args.jobs_file.read_text(encoding="utf-8"))
    plan = Plan(
        url=args.url,
        token=args.token_file.read_text(encoding="utf-8").strip(),
        names=list(jobs["names"]),
        manifest=jobs["manifest"],
        rate=args.rate,
        seconds=args.seconds,
        warmup_seconds=args.warmup_seconds,
    )
    return plan, args.output


def calls(plan: Plan) -> list[Call]:
    """Every request of the run (warm-up included), in order: the routes in turn, random jobs;
    an apply sends the job's own manifest back."""
    chosen = random.Random(plan.seed)
    metadata = plan.manifest["metadata"]
    bodies = {
        name: json.dumps({**plan.manifest, "metadata": {**metadata, "name": name}}).encode()
        for name in plan.names
    }
    every = []
    for index in range(round((plan.warmup_seconds + plan.seconds) * plan.rate)):
        route, name = ROUTES[index % len(ROUTES)], chosen.choice(plan.names)
        method, path = REQUESTS[route]
        every.append(
            (route, method, path.format(name=name), bodies[name] if route == APPLY else None)
        )
    return every


async def run(plan: Plan) -> list[list[Any]]:
    """Send every call on schedule; the measured ones as ``[route, scheduled, started, ended,
    status]``, times from the end of the warm-up."""
    headers = {"Authorization": f"Bearer {plan.token}", "Content-Type": "application/json"}
    async with Client(plan.url, connections=plan.connections, headers=headers) as client:
        if await client.request(client.prepare("GET", "/healthz")) != 200:
            raise SystemExit(f"{plan.url}/healthz did not answer 200")
        every_call = calls(plan)
        prepared = {call: client.prepare(*call[1:]) for call in set(every_call)}
        start = now() + 0.05
        measured_from = start + plan.warmup_seconds
        records: list[list[Any]] = []
        tasks = []
        for index, call in enumerate(every_call):
            scheduled = start + index / plan.rate
            delay = scheduled - now()
            if delay > 0:
                await asyncio.sleep(delay)
            record: list[Any] = [call[0], scheduled, None, None, 0]
            records.append(record)
            tasks.append(asyncio.create_task(_send(client, prepared[call], record)))
        _, pending = await asyncio.wait(tasks, timeout=plan.drain_seconds)
        given_up = now()
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    for record in records:
        if record[3] is None:  # given up (or never started)
            record[2] = record[2] if record[2] is not None else given_up
            record[3], record[4] = given_up, 0
    return [
        [route, scheduled - measured_from, started - measured_from, ended - measured_from, status]
        for route, scheduled, started, ended, status in records
        if scheduled >= measured_from
    ]


async def _send(client: Client, request: bytes, record: list[Any]) -> None:
    """Send ``request``; fill ``record``'s start, end and status (0: no response)."""
    record[2] = now()
    try:
        record[4] = await client.request(request)
    except HttpError:
        record[4] = 0
    record[3] = now()


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


def main(argv: Sequence[str] | None = None) -> int:
    plan, output = parse_args(argv)
    began = time.monotonic()
    records = uvloop.run(run(plan))
    output.write_text(json.dumps({"requests": records}), encoding="utf-8")
    failed = sum(1 for record in records if not 200 <= record[4] < 300)
    print(
        f"load generator: {len(records)} requests measured ({failed} failed) in "
        f"{time.monotonic() - began:.1f} s, warm-up included",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
