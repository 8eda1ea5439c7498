"""How old the oldest record a query has not processed is: asked of the Kafka broker after each
progress report, off Spark's threads, and reported as a ``backlog`` report.

Spark's progress report gives, per Kafka partition, the next offset to process (``endOffset``)
and the newest the broker had (``latestOffset``); where the first is behind, the timestamp of the
record at ``endOffset`` is the age of the backlog. The broker is asked with a Kafka consumer of
the driver's JVM (kafka-clients comes with Spark's Kafka connector) through Py4J, with the
source's own options (``kafka.bootstrap.servers`` and the ``kafka.*`` security options).

A batch never waits for it: the listener only hands the progress report over. One probe runs at
a time on one thread, at most one every ``min_interval_seconds`` (a Continuous or back-to-back
query reports progress every second; the server carries the seconds behind forward between
probes); a report handed over meanwhile replaces any still waiting (only the newest matters);
each probe is bounded in time and fetches one small batch per partition. A probe that fails
reports nothing: the server then does not know the seconds behind, which is what absent means.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from streamjobs.domain.clock import Clock
from streamjobs.domain.reports import BacklogReport, ProgressReport
from streamjobs.runner.reporting import Reporter

Partition = tuple[str, int]


class BrokerTimestamps(Protocol):
    """Reads record timestamps from Kafka.

    Contract: ``timestamps`` returns, for each partition of ``positions`` it could read within
    ``timeout_seconds``, the timestamp (epoch milliseconds) of the first record at or after the
    partition's position; partitions it could not read are left out. It may raise on any broker
    or JVM failure. It is called from one thread only; ``close`` releases what it holds."""

    def timestamps(
        self, options: Mapping[str, str], positions: Mapping[Partition, int], timeout_seconds: float
    ) -> dict[Partition, int]: ...

    def close(self) -> None: ...


class BacklogProbe:
    """Reports the backlog of each progress report handed to ``offer`` (see the module)."""

    def __init__(
        self,
        broker: BrokerTimestamps,
        kafka_options: Sequence[Mapping[str, str]],
        *,
        reporter: Reporter,
        clock: Clock,
        timeout_seconds: float = 10.0,
        min_interval_seconds: float = 5.0,
    ) -> None:
        self._broker = broker
        self._sources = [dict(options) for options in kafka_options]
        self._reporter = reporter
        self._clock = clock
        self._timeout = timeout_seconds
        self._interval = min_interval_seconds
        self._waiting: ProgressReport | None = None
        self._closing = False
        self._wake = threading.Condition()
        self._thread = threading.Thread(target=self._work, name="streamjobs-backlog", daemon=True)
        self._thread.start()

    def offer(self, report: ProgressReport) -> None:
        """Probe the backlog of ``report`` soon; returns at once."""
        with self._wake:
            self._waiting = report
            self._wake.notify()

    def close(self, deadline_seconds: float = 5.0) -> None:
        with self._wake:
            self._closing = True
            self._waiting = None
            self._wake.notify()
        self._thread.join(timeout=deadline_seconds)

    def _work(self) -> None:
        try:
            while True:
                with self._wake:
                    while self._waiting is None and not self._closing:
                        self._wake.wait()
                    if self._closing:
                        return
                    report, self._waiting = self._waiting, None
                assert report is not None
                backlog = self.backlog_of(report)
                if backlog is not None:
                    self._reporter.report(backlog.to_wire())
                self._rest()
        finally:
            self._broker.close()

    def _rest(self) -> None:
        """Wait ``min_interval_seconds`` after a probe, or until closed."""
        until = self._clock.now() + timedelta(seconds=self._interval)
        with self._wake:
            while not self._closing and (left := (until - self._clock.now()).total_seconds()) > 0:
                self._wake.wait(left)

    def backlog_of(self, report: ProgressReport) -> BacklogReport | None:
        """The backlog report of ``report``; None when no Kafka partition is behind (the
        server counts that as 0 from the offsets alone) or the broker could not be asked."""
        behind = self._partitions_behind(report)
        if not behind:
            return None
        try:
            found: dict[Partition, int] = {}
            for options, positions in behind:
                found |= self._broker.timestamps(options, positions, self._timeout)
        except Exception as error:
            print(f"streamjobs: the backlog probe failed: {error}", file=sys.stderr)
            return None
        wanted = {partition for _, positions in behind for partition in positions}
        stamps = [found[partition] for partition in wanted if found.get(partition, -1) >= 0]
        now = self._clock.now()
        about: dict[str, Any] = {
            "timestamp": now.isoformat(),
            "id": report.id,
            "run_id": report.run_id,
            "name": report.name,
            "batch_id": report.progress.batch_id if report.progress.batch_id is not None else -1,
        }
        if report.application_id:
            about["application_id"] = report.application_id
        if len(stamps) < len(wanted):
            return BacklogReport(**about, seconds_behind=None)
        oldest = datetime.fromtimestamp(min(stamps) / 1000, tz=UTC)
        age = max(0.0, (now - oldest).total_seconds())
        return BacklogReport(
            **about, seconds_behind=round(age, 3), oldest_unprocessed_at=oldest.isoformat()
        )

    def _partitions_behind(
        self, report: ProgressReport
    ) -> list[tuple[dict[str, str], dict[Partition, int]]]:
        """The next offset of each partition behind, grouped by the options that read it."""
        groups: dict[str, tuple[dict[str, str], dict[Partition, int]]] = {}
        for source in report.progress.sources or []:
            end, latest = source.kafka_end_offsets(), source.kafka_latest_offsets()
            if end is None or latest is None:
                continue
            for partition, next_offset in end.items():
                if next_offset >= latest.get(partition, next_offset):
                    continue
                options = self._options_for(partition[0])
                if options is None:
                    continue
                key = json.dumps(options, sort_keys=True)
                groups.setdefault(key, (options, {}))[1][partition] = next_offset
        return list(groups.values())

    def _options_for(self, topic: str) -> dict[str, str] | None:
        """The options of the input that reads ``topic`` (the only one, if just one reads Kafka)."""
        for options in self._sources:
            if topic in reads_topics(options) or _pattern_matches(options, topic):
                return options
        return self._sources[0] if len(self._sources) == 1 else None


def reads_topics(options: Mapping[str, str]) -> set[str]:
    """The topics a Kafka source's ``subscribe`` or ``assign`` option names."""
    topics = {name.strip() for name in options.get("subscribe", "").split(",") if name.strip()}
    try:
        assigned = json.loads(options.get("assign") or "{}")
    except ValueError:
        assigned = {}
    return topics | (set(assigned) if isinstance(assigned, dict) else set())


def _pattern_matches(options: Mapping[str, str], topic: str) -> bool:
    pattern = options.get("subscribePattern")
    try:
        return bool(pattern) and re.fullmatch(str(pattern), topic) is not None
    except re.error:
        return False


class JvmKafkaTimestamps:
    """``BrokerTimestamps`` with a ``KafkaConsumer`` of the driver's JVM, one per set of options,
    reused from probe to probe (only the probe's thread uses them)."""

    CONSUMER = "org.apache.kafka.clients.consumer.KafkaConsumer"
    BYTES = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
    FETCH_BYTES = 4096
    """Per partition and fetch: the broker still sends a whole first record batch when it is
    larger, and the probe needs only the first record (the default is 1 MiB)."""

    def __init__(self, jvm: Any) -> None:
        self._jvm = jvm
        self._consumers: dict[str, Any] = {}

    def timestamps(
        self, options: Mapping[str, str], positions: Mapping[Partition, int], timeout_seconds: float
    ) -> dict[Partition, int]:
        jvm = self._jvm
        consumer = self._consumer(options, timeout_seconds)
        partitions = {
            key: jvm.org.apache.kafka.common.TopicPartition(key[0], key[1]) for key in positions
        }
        assigned = jvm.java.util.ArrayList()
        for partition in partitions.values():
            assigned.add(partition)
        consumer.assign(assigned)
        consumer.resume(assigned)  # partitions the last probe paused stay paused else
        for key, partition in partitions.items():
            consumer.seek(partition, positions[key])
        found: dict[Partition, int] = {}
        deadline = time.monotonic() + timeout_seconds
        while len(found) < len(positions) and time.monotonic() < deadline:
            records = consumer.poll(jvm.java.time.Duration.ofMillis(200)).iterator()
            while records.hasNext():
                record = records.next()
                key = (str(record.topic()), int(record.partition()))
                if key in positions and key not in found and record.offset() >= positions[key]:
                    found[key] = int(record.timestamp())
                    paused = jvm.java.util.ArrayList()
                    paused.add(partitions[key])
                    consumer.pause(paused)
        return found

    def close(self) -> None:
        for consumer in self._consumers.values():
            try:
                consumer.close(self._jvm.java.time.Duration.ofSeconds(2))
            except Exception as error:
                print(f"streamjobs: closing a backlog consumer failed: {error}", file=sys.stderr)
        self._consumers.clear()

    def _consumer(self, options: Mapping[str, str], timeout_seconds: float) -> Any:
        key = json.dumps(dict(options), sort_keys=True)
        if key not in self._consumers:
            properties = self._jvm.java.util.Properties()
            for name, value in options.items():
                if name.startswith("kafka."):
                    properties.setProperty(name.removeprefix("kafka."), str(value))
            limit = str(int(timeout_seconds * 1000))
            settings = {
                "key.deserializer": self.BYTES,
                "value.deserializer": self.BYTES,
                "enable.auto.commit": "false",
                "auto.offset.reset": "earliest",
                "max.poll.records": "20",
                "max.partition.fetch.bytes": str(self.FETCH_BYTES),
                "client.id": "streamjobs-backlog",
                "request.timeout.ms": limit,
                "default.api.timeout.ms": limit,
            }
            for name, value in settings.items():
                properties.setProperty(name, value)
            properties.remove("group.id")
            self._consumers[key] = self._jvm.org.apache.kafka.clients.consumer.KafkaConsumer(
                properties
            )
        return self._consumers[key]
