"""A watermarked windowed count from a real Kafka topic into Delta, for the end-to-end tests of
snapshots and upgrades: the job's manifest, the events sent to it, what the output must hold, and
the server calls those tests make.

The events come in phases 100 seconds of event time apart: each phase puts records of keys
``a`` and ``b`` in two 10-second windows and ends with a record 50 seconds on, which moves the
watermark (5 seconds behind the latest event) past the phase's windows; that record's own window
is closed by the next phase. So after each phase the output holds every window before it, each
exactly once, whatever batches the records fell into: ``Events.closed`` is that expectation.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from pyspark.sql import SparkSession

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.domain.snapshots import delta_versions
from tests.e2e.test_applications import WAIT_SECONDS, Server
from tests.spark.kafka_topics import produce
from tests.spark.pipelines import connection, pipeline_job

SCHEMA = "k STRING, region STRING, ts TIMESTAMP"
WINDOW_SECONDS = 10
DELAY_SECONDS = 5
PHASE_SECONDS = 100
EPOCH = datetime(2026, 1, 1)
OUTPUT = "counts"
"""The output's name, and so its query's key (its checkpoint's sub-directory)."""
CLEAN_SQL = "SELECT k, region, ts FROM events"
COUNT_SQL = (
    "SELECT CAST(window.start AS STRING) AS start, k, COUNT(*) AS n FROM clean "
    f"GROUP BY window(ts, '{WINDOW_SECONDS} seconds'), k"
)
"""Per key per window; the window's start as text, written and read in the same time zone."""
IGNORED = "ignored"
"""The key of records a filter step drops once an upgrade adds it (never sent before)."""
CALL_SECONDS = 300.0
"""An upgrade's request runs the compatibility check's dry run (a spark-submit) before it
answers."""
TERMINAL = {"STOPPED", "FAILED", "ABORTED", "COMPLETED"}


def counting_job(
    name: str,
    topic: str,
    data: Path,
    *,
    clean_sql: str = CLEAN_SQL,
    count_sql: str = COUNT_SQL,
    **processing: Any,
) -> dict[str, Any]:
    """Kafka JSON -> ``clean`` -> windowed count -> Delta, EXACTLY_ONCE, a batch a second at most;
    its checkpoint and table under ``data/<name>``."""
    job = pipeline_job(
        name,
        trigger={"triggerMode": "ProcessingTime", "triggerDuration": "1 second"},
        guarantee="EXACTLY_ONCE",
        checkpointLocation=(data / name / "checkpoint").as_uri(),
        inputs=[
            {
                "name": "events",
                "format": "kafkajson",
                "dataset": f"kafka-main:{topic}",
                "schema": SCHEMA,
                "watermark": {"column": "ts", "delay": f"{DELAY_SECONDS} seconds"},
                "options": {"startingOffsets": "earliest"},
            }
        ],
        steps=[[("clean", clean_sql), (OUTPUT, count_sql)]],
        outputs=[{"name": OUTPUT, "format": "delta", "path": table_of(data, name).as_uri()}],
    )
    spec = job["spec"]
    spec["pipeline"]["logLevel"] = "WARN"
    spec["processing"].update(processing)
    spec["restartPolicy"] = {"type": "Never"}
    spec["configuration"] = {"sparkConf": {"spark.sql.shuffle.partitions": "1"}}
    return job


def table_of(data: Path, name: str) -> Path:
    return data / name / "table"


@dataclass
class Events:
    """What a test sent to the job's topic, phase by phase (see the module)."""

    broker: KafkaBroker
    topic: str
    sent: list[tuple[str, int]] = field(default_factory=list)
    """(key, seconds past ``EPOCH``) of every record sent."""
    phases: int = 0

    def send_phase(self, *, ignored: int = 0) -> None:
        """One phase of records (and ``ignored`` records of the key a filter drops)."""
        self.phases += 1
        base = self.phases * PHASE_SECONDS
        records = [("a", base + 1), ("b", base + 2), ("a", base + 3), ("a", base + 12)]
        records += [(IGNORED, base + 4)] * ignored
        records.append(("b", base + 50))  # closes this phase's windows; the next phase its own
        produce(self.broker, self.topic, ((None, _value(key, at)) for key, at in records))
        self.sent += records

    def closed(self) -> dict[tuple[str, str], int]:
        """The count of each (window start, key) the watermark has closed: what the output
        holds once the job has read everything sent."""
        if not self.sent:
            return {}
        watermark = max(at for _, at in self.sent) - DELAY_SECONDS
        counts = Counter(
            (_window_start(at), key)
            for key, at in self.sent
            if key != IGNORED and at - at % WINDOW_SECONDS + WINDOW_SECONDS <= watermark
        )
        return dict(counts)


def _value(key: str, at: int) -> str:
    moment = EPOCH + timedelta(seconds=at)
    return json.dumps({"k": key, "region": "eu", "ts": moment.strftime("%Y-%m-%dT%H:%M:%S")})


def _window_start(at: int) -> str:
    start = EPOCH + timedelta(seconds=at - at % WINDOW_SECONDS)
    return start.strftime("%Y-%m-%d %H:%M:%S")


# -- the Delta output -------------------------------------------------------------------------


def written_rows(table: Path) -> int:
    """Rows the table's log says its files hold (each add action's ``numRecords``): cheap to
    poll, before the table is read."""
    rows = 0
    for commit in sorted((table / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                rows += json.loads(action["add"]["stats"])["numRecords"]
    return rows


def delta_version(table: Path) -> int:
    """The table's newest version."""
    versions = delta_versions(entry.name for entry in (table / "_delta_log").iterdir())
    return versions[0]


def output_rows(spark: SparkSession, table: Path) -> list[tuple[str, str, int]]:
    rows = spark.read.format("delta").load(str(table)).select("start", "k", "n").collect()
    return sorted((row.start, row.k, row.n) for row in rows)


def duplicates(rows: Sequence[tuple[str, str, int]]) -> list[tuple[str, str]]:
    """The (window, key) pairs written more than once."""
    written = Counter((start, key) for start, key, _ in rows)
    return sorted(pair for pair, times in written.items() if times > 1)


def assert_counted_once(
    spark: SparkSession, table: Path, events: Events, describe: Callable[[], str]
) -> None:
    """Once the output has as many rows as windows closed: each closed window is there once,
    with the count of records sent in it, and nothing else is."""
    expected = events.closed()
    wait_for(
        f"{len(expected)} windows in the output",
        lambda: table.joinpath("_delta_log").is_dir() and written_rows(table) >= len(expected),
        describe,
    )
    rows = output_rows(spark, table)
    assert duplicates(rows) == [], rows
    found = {(start, key): n for start, key, n in rows}
    wrong = {pair: (found.get(pair), expected.get(pair)) for pair in found.keys() | expected.keys()}
    wrong = {pair: counts for pair, counts in wrong.items() if counts[0] != counts[1]}
    assert not wrong, f"(window, key): (found, expected) {sorted(wrong.items())}"


# -- the server -------------------------------------------------------------------------------


def wait_for(what: str, check: Callable[[], Any], describe: Callable[[], str]) -> Any:
    """``check()``'s first true answer; failing after ``WAIT_SECONDS`` with ``describe()``."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"waited {WAIT_SECONDS:g} s for {what}: {describe()}")


@contextmanager
def client(server: Server) -> Iterator[httpx.Client]:
    """The admin's client, patient enough for an upgrade's dry run."""
    headers = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=CALL_SECONDS) as api:
        yield api


def put(api: httpx.Client, path: str, document: dict[str, Any]) -> None:
    answer = api.put(path, json=document)
    assert answer.is_success, answer.text


def store_kafka(api: httpx.Client, broker: KafkaBroker) -> None:
    kafka = connection("kafka-main", type="kafka", bootstrapServers=broker.bootstrap_servers)
    put(api, "/api/v1/connections/kafka-main", kafka)


def run(api: httpx.Client, job_name: str, **options: Any) -> str:
    """Run the job (``options``: the Run's body); the new application's id."""
    answer = api.post(f"/api/v1/jobs/{job_name}/run", json=options or None)
    assert answer.status_code == 201, answer.text
    application_id: str = answer.json()["id"]
    return application_id


def application(api: httpx.Client, application_id: str) -> dict[str, Any]:
    answer = api.get(f"/api/v1/applications/{application_id}")
    assert answer.is_success, answer.text
    found: dict[str, Any] = answer.json()
    return found


def events(api: httpx.Client, application_id: str) -> list[tuple[str, str]]:
    answer = api.get(f"/api/v1/applications/{application_id}/events").json()
    return [(event["kind"], event["message"]) for event in answer["items"]]


def kinds(api: httpx.Client, application_id: str) -> list[str]:
    return [kind for kind, _ in events(api, application_id)]


def messages(api: httpx.Client, application_id: str, kind: str) -> list[str]:
    """The messages of the application's events of ``kind``, in order."""
    return [message for found, message in events(api, application_id) if found == kind]


def described(api: httpx.Client, *application_ids: str) -> Callable[[], str]:
    """What a failed wait shows: each application's state, error and events."""

    def describe() -> str:
        parts = []
        for application_id in application_ids:
            app = application(api, application_id)
            parts.append(
                f"{app['name']} {app['state']} {app['errorMessage']!r} "
                f"latest={app['latest']} events={events(api, application_id)}"
            )
        return "\n".join(parts)

    return describe


def in_state(api: httpx.Client, application_id: str, state: str) -> Callable[[], bool]:
    """Whether the application is in ``state``; failing at once when it ended otherwise."""

    def check() -> bool:
        app = application(api, application_id)
        if app["state"] == state:
            return True
        if app["state"] in TERMINAL:
            raise AssertionError(
                f"{app['name']} ended {app['state']} ({app['errorMessage']!r}) instead of "
                f"reaching {state}: {events(api, application_id)}"
            )
        return False

    return check


def snapshots(api: httpx.Client, job_name: str) -> list[dict[str, Any]]:
    """The job's snapshots, newest first."""
    answer = api.get(f"/api/v1/jobs/{job_name}/snapshots")
    assert answer.is_success, answer.text
    found: list[dict[str, Any]] = answer.json()["items"]
    return found


def snapshot(api: httpx.Client, job_name: str, name: str) -> dict[str, Any]:
    answer = api.get(f"/api/v1/jobs/{job_name}/snapshots/{name}")
    assert answer.is_success, answer.text
    found: dict[str, Any] = answer.json()
    return found


def ready(
    api: httpx.Client, job_name: str, name: str, describe: Callable[[], str]
) -> dict[str, Any]:
    """Snapshot ``name`` once it is READY; failing at once when it FAILED."""

    def check() -> dict[str, Any] | None:
        found = snapshot(api, job_name, name)
        assert found["status"] != "FAILED", found
        return found if found["status"] == "READY" else None

    found: dict[str, Any] = wait_for(f"snapshot {name} READY", check, describe)
    return found


def of_application(
    api: httpx.Client, job_name: str, application_id: str, kind: str
) -> dict[str, Any] | None:
    """The application's newest snapshot of ``kind``, if it has one."""
    for found in snapshots(api, job_name):
        if found["application"] == application_id and found["kind"] == kind:
            return found
    return None
