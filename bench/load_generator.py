"""An open-loop HTTP load generator for figure 4, run in its own process against a real server."""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvloop

from bench.http_client import Client, HttpError

LIST_JOBS = "list jobs"
GET_JOB = "get job"
JOB_APPLICATIONS = "list a job's applications"
ALL_APPLICATIONS = "list all applications"
APPLY = "apply (unchanged)"
ROUTES = (LIST_JOBS, GET_JOB, JOB_APPLICATIONS, ALL_APPLICATIONS, APPLY)
PAGE = 50
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
    connections: int
    seed: int
    drain_seconds: float = 5.0


def parse_args(argv: Sequence[str] | None = None) -> tuple[Plan, Path]:
    parser = argparse.ArgumentParser(prog="python -m bench.load_generator", description=__doc__)
    parser.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8040")
    parser.add_argument("--token-file", type=Path, required=True)
    parser.add_argument("--jobs-file", type=Path, required=True)
    parser.add_argument("--rate", type=float, required=True, help="requests per second")
    parser.add_argument("--seconds", type=float, required=True, help="measured seconds")
    parser.add_argument("--warmup-seconds", type=float, default=2.0, help="not recorded")
    parser.add_argument("--connections", type=int, default=32, help="at most this many at once")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--drain-seconds", type=float, default=5.0, help="then unanswered requests are given up"
    )
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
        connections=args.connections,
        seed=args.seed,
        drain_seconds=args.drain_seconds,
    )
    return plan, args.output


def calls(plan: Plan) -> list[Call]:
    """Every request of the run (warm-up included), in order: the routes in turn, random jobs."""
    chosen = random.Random(plan.seed)
    bodies: dict[str, bytes] = {}

    def body(name: str) -> bytes:
        if name not in bodies:
            manifest = copy.deepcopy(plan.manifest)
            manifest["metadata"]["name"] = name
            bodies[name] = json.dumps(manifest).encode()
        return bodies[name]

    makers: dict[str, Callable[[str], Call]] = {
        LIST_JOBS: lambda _: (LIST_JOBS, "GET", f"/api/v1/jobs?limit={PAGE}", None),
        GET_JOB: lambda name: (GET_JOB, "GET", f"/api/v1/jobs/{name}", None),
        JOB_APPLICATIONS: lambda name: (
            JOB_APPLICATIONS,
            "GET",
            f"/api/v1/jobs/{name}/applications?limit={PAGE}",
            None,
        ),
        ALL_APPLICATIONS: lambda _: (
            ALL_APPLICATIONS,
            "GET",
            f"/api/v1/applications?limit={PAGE}",
            None,
        ),
        APPLY: lambda name: (APPLY, "PUT", f"/api/v1/jobs/{name}", body(name)),
    }
    total = round((plan.warmup_seconds + plan.seconds) * plan.rate)
    return [makers[ROUTES[i % len(ROUTES)]](chosen.choice(plan.names)) for i in range(total)]


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


def main(argv: Sequence[str] | None = None) -> int:
    plan, output = parse_args(argv)
    began = time.monotonic()
    records = uvloop.run(run(plan))
    output.write_text(json.dumps({"rate": plan.rate, "requests": records}), encoding="utf-8")
    failed = sum(1 for record in records if not 200 <= record[4] < 300)
    print(
        f"load generator: {len(records)} requests measured ({failed} failed) in "
        f"{time.monotonic() - began:.1f} s, warm-up included",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
