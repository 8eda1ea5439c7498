"""The backlog probe's decisions without a broker: which partitions it asks about, with which
source's options, and what it reports when the broker cannot tell. The broker itself is asked
for real in ``tests/spark/test_backlog.py``."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamjobs.domain.clock import FakeClock
from streamjobs.domain.reports import ProgressReport, progress_report
from streamjobs.runner.backlog import BacklogProbe, Partition, reads_topics
from tests.two_servers import wait_until
from tests.unit.test_listener_bridge import Collected

KAFKA = json.loads((Path(__file__).parent / "data/kafka_progress.json").read_text())
NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


class KnownTimestamps:
    """Timestamps a test knows, by partition and offset; ``broken`` raises as a lost broker."""

    def __init__(self, stamps: Mapping[Partition, int], *, broken: bool = False) -> None:
        self.stamps = dict(stamps)
        self.broken = broken
        self.asked: list[tuple[dict[str, str], dict[Partition, int]]] = []

    def timestamps(
        self, options: Mapping[str, str], positions: Mapping[Partition, int], timeout_seconds: float
    ) -> dict[Partition, int]:
        self.asked.append((dict(options), dict(positions)))
        if self.broken:
            raise RuntimeError("broker unreachable")
        return {p: self.stamps[p] for p in positions if p in self.stamps}

    def close(self) -> None:
        return None


def report(index: int = 0) -> ProgressReport:
    event = copy.deepcopy(KAFKA[index])
    return progress_report(event["progress"], id=event["id"], run_id="r", name=event["name"])


TOPIC = next(iter(KAFKA[0]["progress"]["sources"][0]["endOffset"]))
OPTIONS = {"kafka.bootstrap.servers": "b:9092", "subscribe": f"other,{TOPIC}"}


def probe(broker: KnownTimestamps, *sources: dict[str, str]) -> BacklogProbe:
    return BacklogProbe(broker, list(sources), reporter=Collected(), clock=FakeClock(NOW))


def test_the_oldest_next_record_over_the_partitions_behind_is_the_age() -> None:
    older = int((NOW - timedelta(seconds=90)).timestamp() * 1000)
    newer = int((NOW - timedelta(seconds=30)).timestamp() * 1000)
    broker = KnownTimestamps({(TOPIC, 0): newer, (TOPIC, 1): older})
    backlog = probe(broker, {"subscribe": "unrelated"}, OPTIONS).backlog_of(report())
    assert backlog is not None
    assert (backlog.batch_id, backlog.seconds_behind) == (0, 90.0)
    assert backlog.oldest_unprocessed_at == (NOW - timedelta(seconds=90)).isoformat()
    assert broker.asked == [(OPTIONS, {(TOPIC, 0): 10, (TOPIC, 1): 10})]


def test_nothing_is_asked_once_caught_up_and_a_silent_partition_makes_the_age_unknown() -> None:
    broker = KnownTimestamps({(TOPIC, 0): 0})
    assert probe(broker, OPTIONS).backlog_of(report(-1)) is None
    assert broker.asked == []
    backlog = probe(broker, OPTIONS).backlog_of(report())
    assert backlog is not None
    assert backlog.seconds_behind is None


def test_a_broker_that_fails_gives_no_report() -> None:
    assert probe(KnownTimestamps({}, broken=True), OPTIONS).backlog_of(report()) is None


def test_the_topics_a_source_reads() -> None:
    assert reads_topics({"subscribe": "a, b"}) == {"a", "b"}
    assert reads_topics({"assign": '{"c": [0, 1]}'}) == {"c"}
    assert reads_topics({"subscribePattern": "x.*"}) == set()


def test_probes_are_spaced_and_the_newest_report_waiting_is_the_next_probed() -> None:
    broker = KnownTimestamps({})
    clock = FakeClock(NOW)
    running = BacklogProbe(
        broker, [OPTIONS], reporter=Collected(), clock=clock, min_interval_seconds=5
    )
    try:
        running.offer(report(0))
        wait_until("the first probe", lambda: len(broker.asked) == 1, seconds=10)
        for index in (1, 2, 3):
            running.offer(report(index))
        time.sleep(0.3)
        assert len(broker.asked) == 1, "a report handed over within the interval waits"
        clock.advance(5)
        running.offer(report(4))
        wait_until("the second probe", lambda: len(broker.asked) == 2, seconds=10)
        assert [positions[(TOPIC, 0)] for _, positions in broker.asked] == [10, 50]
    finally:
        running.close()
