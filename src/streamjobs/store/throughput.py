"""An application's throughput over its whole life, as down-sampled buckets
(``domain.throughput``), written as its progress reports are stored.

Progress reports are pruned to an application's newest few hundred; these rows are not, and stay
bounded by merging (at most ``MOST_BUCKETS`` per application, however long it runs). Beside the
buckets, one row per application keeps what folding the next report needs: the last event
folded (so a batch the runner sends twice is counted once: its sequence numbers only grow within
an attempt), the queries' latest figures, the buckets' width and how many there are.

The tables are defined here rather than in ``tables.py`` only to keep that module readable; they
are on the same ``Base`` (so the same metadata, which Alembic compares with the migrations), and
``store.application_reports`` imports this module, so whatever opens a store has them. Deleting
an application deletes its rows (foreign keys with ON DELETE CASCADE).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import groupby
from typing import Any

from sqlalchemy import JSON, BigInteger, Double, ForeignKey, Row, delete, insert, select, update
from sqlalchemy.orm import Mapped, mapped_column

from streamjobs.domain.reports import Report
from streamjobs.domain.throughput import (
    BASE_WIDTH_SECONDS,
    MOST_BUCKETS,
    Bucket,
    Figure,
    QueryTally,
    Sample,
    bounded,
    bucket_start,
    folded,
)
from streamjobs.store.base import Repository
from streamjobs.store.column_types import UtcDateTime
from streamjobs.store.tables import Base

FIGURES = ("input", "processed", "duration")


class ThroughputTallyRow(Base):
    """Where folding an application's reports into buckets stands."""

    __tablename__ = "application_throughput_tallies"

    application_id: Mapped[str] = mapped_column(
        ForeignKey("applications.id", ondelete="CASCADE"), primary_key=True
    )
    attempt: Mapped[int]
    last_sequence: Mapped[int] = mapped_column(BigInteger)
    width_seconds: Mapped[int]
    buckets: Mapped[int]
    queries: Mapped[dict[str, Any]] = mapped_column(JSON)


class ThroughputBucketRow(Base):
    """The application's samples from ``start`` for ``width_seconds``: for each figure the sum
    and count of the values reported and the highest."""

    __tablename__ = "application_throughput_buckets"

    application_id: Mapped[str] = mapped_column(
        ForeignKey("applications.id", ondelete="CASCADE"), primary_key=True
    )
    start: Mapped[datetime] = mapped_column(UtcDateTime, primary_key=True)
    width_seconds: Mapped[int]
    samples: Mapped[int]
    first_at: Mapped[datetime] = mapped_column(UtcDateTime)
    last_at: Mapped[datetime] = mapped_column(UtcDateTime)
    input_total: Mapped[float] = mapped_column(Double)
    input_count: Mapped[int]
    input_highest: Mapped[float | None] = mapped_column(Double)
    processed_total: Mapped[float] = mapped_column(Double)
    processed_count: Mapped[int]
    processed_highest: Mapped[float | None] = mapped_column(Double)
    duration_total: Mapped[float] = mapped_column(Double)
    duration_count: Mapped[int]
    duration_highest: Mapped[float | None] = mapped_column(Double)


TALLIES = Base.metadata.tables[ThroughputTallyRow.__tablename__]
BUCKETS = Base.metadata.tables[ThroughputBucketRow.__tablename__]
"""The tables as Core sees them: these rows are read and written as plain columns."""


class ApplicationThroughput(Repository):
    """The throughput buckets of applications (see the module)."""

    def fold_throughput(
        self,
        application_id: str,
        *,
        attempt: int,
        events: Sequence[Report | Mapping[str, Any]],
        most_buckets: int = MOST_BUCKETS,
    ) -> None:
        """Add the progress reports among the runner's ``events`` of ``attempt`` to the
        application's buckets; events folded before (by attempt and sequence) are skipped.
        A batch without a progress report (heartbeats, most often) costs no statement."""
        if not any(_type_of(event) == "progress" for event in events):
            return
        tallies = TALLIES
        stored = self._read(
            select(tallies).where(tallies.c.application_id == application_id)
        ).one_or_none()
        tally = QueryTally(None if stored is None else stored.queries)
        folded_up_to = (-1, -1) if stored is None else (stored.attempt, stored.last_sequence)
        samples = []
        for event in sorted(events, key=_sequence_of):
            position = (attempt, _sequence_of(event))
            if position <= folded_up_to:
                continue
            folded_up_to = position
            sample = tally.sample(attempt, event)
            if sample is not None:
                samples.append(sample)
        if stored is not None and folded_up_to == (stored.attempt, stored.last_sequence):
            return
        width = BASE_WIDTH_SECONDS if stored is None else stored.width_seconds
        count = 0 if stored is None else stored.buckets
        count += self._add_samples(application_id, samples, width)
        if count > most_buckets:
            kept = self._rewrite_bounded(application_id, most_buckets)
            count, width = len(kept), kept[0].width_seconds
        state = {
            "attempt": folded_up_to[0],
            "last_sequence": folded_up_to[1],
            "width_seconds": width,
            "buckets": count,
            "queries": tally.state(),
        }
        if stored is None:
            self._session.execute(insert(tallies).values(application_id=application_id, **state))
        else:
            self._session.execute(
                update(tallies).where(tallies.c.application_id == application_id).values(**state)
            )

    def throughput_buckets(self, application_id: str) -> builtins.list[Bucket]:
        """The application's buckets, oldest first (none before its first progress report)."""
        buckets = BUCKETS
        rows = self._read(
            select(buckets)
            .where(buckets.c.application_id == application_id)
            .order_by(buckets.c.start)
        )
        return [_bucket(row) for row in rows]

    def _add_samples(self, application_id: str, samples: Sequence[Sample], width: int) -> int:
        """Fold ``samples`` into their buckets of ``width``; how many buckets were new."""
        buckets = BUCKETS
        added = 0
        ordered = sorted(samples, key=lambda sample: sample.at)
        for start, group in groupby(ordered, key=lambda sample: bucket_start(sample.at, width)):
            where = (buckets.c.application_id == application_id) & (buckets.c.start == start)
            row = self._read(select(buckets).where(where)).one_or_none()
            bucket = folded(None if row is None else _bucket(row), group, width)
            if row is None:
                added += 1
                self._session.execute(
                    insert(buckets).values(application_id=application_id, **_columns(bucket))
                )
            else:
                self._session.execute(update(buckets).where(where).values(**_columns(bucket)))
        return added

    def _rewrite_bounded(self, application_id: str, most_buckets: int) -> builtins.list[Bucket]:
        """Merge the application's buckets until at most ``most_buckets`` are left."""
        buckets = BUCKETS
        kept = bounded(self.throughput_buckets(application_id), most_buckets)
        self._session.execute(delete(buckets).where(buckets.c.application_id == application_id))
        self._session.execute(
            insert(buckets),
            [{"application_id": application_id, **_columns(bucket)} for bucket in kept],
        )
        return kept


def _type_of(event: Report | Mapping[str, Any]) -> Any:
    return event.get("type") if isinstance(event, Mapping) else event.type


def _sequence_of(event: Report | Mapping[str, Any]) -> int:
    """The event's sequence number (the server refuses events without one)."""
    return int(event["sequence"] if isinstance(event, Mapping) else event.sequence or 0)


def _columns(bucket: Bucket) -> dict[str, Any]:
    columns: dict[str, Any] = {
        "start": bucket.start,
        "width_seconds": bucket.width_seconds,
        "samples": bucket.samples,
        "first_at": bucket.first_at,
        "last_at": bucket.last_at,
    }
    for name in FIGURES:
        figure: Figure = getattr(bucket, name)
        columns |= {
            f"{name}_total": figure.total,
            f"{name}_count": figure.count,
            f"{name}_highest": figure.highest,
        }
    return columns


def _bucket(row: Row[Any]) -> Bucket:
    figures = {
        name: Figure(
            getattr(row, f"{name}_total"),
            getattr(row, f"{name}_count"),
            getattr(row, f"{name}_highest"),
        )
        for name in FIGURES
    }
    return Bucket(
        start=row.start,
        width_seconds=row.width_seconds,
        samples=row.samples,
        first_at=row.first_at,
        last_at=row.last_at,
        **figures,
    )
