"""How far a Kafka pipeline is behind, on a real broker: records behind from Spark's offsets, and
the age of the oldest unprocessed record from the broker's timestamps (``runner.backlog``)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.domain.progress import figures_of, with_backlog
from streamjobs.domain.reports import BacklogReport, ProgressReport, parse_report
from tests.spark.conftest import PipelineRunner
from tests.spark.kafka_topics import new_topic
from tests.spark.pipelines import connection, pipeline_job

pytestmark = [pytest.mark.spark, pytest.mark.kafka]
PER_PARTITION = 60
BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
"""Records an hour old: older ones the broker's retention (a week) may already have deleted."""


def record_time(partition: int, offset: int) -> datetime:
    """Partition 1's records are older than partition 0's: the oldest is not always in one."""
    return BASE + timedelta(seconds=offset - 1000 * partition)


def produce_timed(broker: KafkaBroker, topic: str) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 5})
    for offset in range(PER_PARTITION):
        for partition in (0, 1):
            stamp = int(record_time(partition, offset).timestamp() * 1000)
            value = json.dumps({"id": offset * 2 + partition, "user": "u", "amount": 1.0})
            producer.produce(topic, value=value, partition=partition, timestamp=stamp)
    assert producer.flush(60) == 0


def test_a_throttled_query_reports_records_and_seconds_behind_then_none(
    runner: PipelineRunner, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic = new_topic(kafka_broker, "lagging", partitions=2)
    produce_timed(kafka_broker, topic)
    options = {"startingOffsets": "earliest", "maxOffsetsPerTrigger": 20}
    job = pipeline_job(
        "lagging",
        inputs=[
            {
                "name": "orders",
                "format": "kafkajson",
                "dataset": f"kafka-main:{topic}",
                "schema": "id BIGINT, user STRING, amount DOUBLE",
                "options": options,
            }
        ],
        outputs=[{"name": "orders", "format": "parquet", "path": str(tmp_path / "out")}],
    )
    kafka = connection("kafka-main", type="kafka", bootstrapServers=kafka_broker.bootstrap_servers)
    assert runner.run(job, connections=[kafka]) == 0

    reports = [parse_report(event) for event in runner.reporter.events]
    progress = [report for report in reports if isinstance(report, ProgressReport)]
    backlogs = [report for report in reports if isinstance(report, BacklogReport)]
    _keep_a_real_progress_report(progress)
    assert len(progress) >= 3

    for report in progress:
        ends = report.progress.sources[0].kafka_end_offsets()  # type: ignore[index]
        assert ends is not None
        figures = figures_of(report.progress)
        behind = [PER_PARTITION - ends[(topic, partition)] for partition in (0, 1)]
        assert figures["recordsBehind"] == sum(behind)
        assert figures["maxPartitionRecordsBehind"] == max(behind)
        assert figures["inputAvailable"] is (sum(behind) > 0)

    assert backlogs, "the first progress report, behind, is probed"
    by_batch = {report.progress.batch_id: report for report in progress}
    for backlog in backlogs:
        ends = by_batch[backlog.batch_id].progress.sources[0].kafka_end_offsets()  # type: ignore[index]
        assert ends is not None
        oldest = min(
            record_time(partition, ends[(topic, partition)])
            for partition in (0, 1)
            if ends[(topic, partition)] < PER_PARTITION
        )
        assert backlog.oldest_unprocessed_at == oldest.isoformat()
        probed_at = datetime.fromisoformat(backlog.timestamp or "")
        assert backlog.seconds_behind is not None
        assert backlog.seconds_behind == round((probed_at - oldest).total_seconds(), 3)
        assert backlog.seconds_behind > 3600 - 1000  # an hour old, or older: a real age

    figures: dict[str, Any] = {}
    seen_behind = False
    for report in reports:
        if isinstance(report, ProgressReport):
            figures = figures_of(report.progress, figures)
        elif isinstance(report, BacklogReport):
            figures = with_backlog(figures, report)
            if report.batch_id == figures["batchId"]:
                assert figures["secondsBehind"] == report.seconds_behind
                seen_behind = True
    assert seen_behind
    caught_up = (figures["recordsBehind"], figures["maxPartitionRecordsBehind"])
    assert caught_up == (0, 0)
    assert figures["secondsBehind"] == 0.0
    assert figures["inputAvailable"] is False
    assert figures["lastCommittedAt"] is not None
    assert figures["lastInputAt"] is not None


def _keep_a_real_progress_report(progress: list[ProgressReport]) -> None:
    """With STREAMJOBS_CAPTURE_PROGRESS set, write the reports where the unit tests read them
    (``tests/unit/data/kafka_progress.json``): how that file was made."""
    target = os.environ.get("STREAMJOBS_CAPTURE_PROGRESS")
    if target:
        Path(target).write_text(json.dumps([report.to_wire() for report in progress], indent=2))
