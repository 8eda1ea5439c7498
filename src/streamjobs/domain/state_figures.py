"""A pipeline's state as its State view shows it: each query's stateful operators with their
figures from the latest progress report and what Spark's ``state-metadata`` says of them.

The two sources name an operator differently: a progress report lists its query's stateful
operators in plan order by name (``stateStoreSave``, ``dedupe``, ``symmetricHashJoin``...), with
no id; the metadata gives each operator's id with the same name. Spark numbers the operators in
the order the progress lists them, so the k-th operator of a name in the report is the one with
the k-th smallest id of that name in the metadata. An operator only one source knows is still
shown, with what that source says.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from streamjobs.domain.reports import ProgressReport, StateOperatorProgress
from streamjobs.domain.state_inspection import QueryState, StoreMetadata, operators_of, query_key


@dataclass(frozen=True)
class OperatorState:
    """One stateful operator of a query. Figures are None where no source gave them."""

    name: str
    id: int | None = None
    stores: tuple[str, ...] = ()
    partitions: int | None = None
    rows: int | None = None
    """State rows in all (``numRowsTotal``) as of the latest progress report."""
    rows_updated: int | None = None
    rows_removed: int | None = None
    rows_dropped_by_watermark: int | None = None
    memory_bytes: int | None = None
    min_batch: int | None = None
    """The oldest batch whose state the checkpoint still holds."""
    max_batch: int | None = None
    """The newest batch committed."""

    @property
    def previewable(self) -> bool:
        """Whether its state can be previewed: the metadata gave its id and stores."""
        return self.id is not None and bool(self.stores)


@dataclass(frozen=True)
class QueryFigures:
    """One streaming query of the pipeline, by its directory in the checkpoint (``key``)."""

    key: str
    name: str | None = None
    """Spark's name of the query (``<job>/<output>``), when a report gave it."""
    batch_id: int | None = None
    """The micro-batch of the latest progress report."""
    reported_at: datetime | None = None
    watermark: str | None = None
    operators: tuple[OperatorState, ...] = ()
    error: str | None = None
    """Why its metadata could not be read, when it could not."""


@dataclass(frozen=True)
class LatestProgress:
    """A query's latest progress report, and when it was stored."""

    report: ProgressReport
    at: datetime


def latest_by_query(
    job_name: str, reports: Iterable[tuple[ProgressReport, datetime]]
) -> dict[str, LatestProgress]:
    """Each query's newest report (``reports`` oldest first) by its checkpoint directory."""
    latest: dict[str, LatestProgress] = {}
    for report, at in reports:
        key = query_key(job_name, report.query_name)
        if key is not None:
            latest[key] = LatestProgress(report, at)
    return latest


def state_figures(
    progress: Mapping[str, LatestProgress], metadata: Sequence[QueryState] | None
) -> list[QueryFigures]:
    """Every query either source knows, by key, with its operators merged (see the module);
    ``metadata`` None when the checkpoint was not read."""
    read = {query.query: query for query in metadata or ()}
    figures = []
    for key in sorted(set(progress) | set(read)):
        latest = progress.get(key)
        query = read.get(key)
        reported = latest.report.progress if latest else None
        figures.append(
            QueryFigures(
                key=key,
                name=latest.report.query_name if latest else None,
                batch_id=reported.batch_id if reported else None,
                reported_at=latest.at if latest else None,
                watermark=_watermark(
                    reported.event_time.watermark if reported and reported.event_time else None
                ),
                operators=tuple(
                    _operators(
                        (reported.state_operators or []) if reported else [],
                        query.stores if query else (),
                    )
                ),
                error=query.error if query else None,
            )
        )
    return figures


def stateful(figures: Iterable[QueryFigures]) -> list[QueryFigures]:
    """The queries that keep state (or whose state could not be read)."""
    return [query for query in figures if query.operators or query.error]


def _operators(
    reported: Sequence[StateOperatorProgress], stores: Sequence[StoreMetadata]
) -> list[OperatorState]:
    by_id = operators_of(stores)
    ids_by_name: dict[str, list[int]] = {}
    for operator_id, group in by_id.items():
        ids_by_name.setdefault(group[0].operator_name, []).append(operator_id)
    operators: list[OperatorState] = []
    for figures in reported:
        name = figures.operator_name or "stateful operator"
        unmatched = ids_by_name.get(name, [])
        paired = unmatched.pop(0) if unmatched else None
        paired_stores = by_id.pop(paired) if paired is not None else None
        operators.append(_operator(name, figures, paired_stores, paired))
    for operator_id, group in by_id.items():
        operators.append(_operator(group[0].operator_name, None, group, operator_id))
    return sorted(operators, key=lambda item: (item.id is None, item.id or 0))


def _operator(
    name: str,
    figures: StateOperatorProgress | None,
    stores: Sequence[StoreMetadata] | None,
    number: int | None,
) -> OperatorState:
    extra: Mapping[str, Any] = (figures.model_extra or {}) if figures else {}
    partitions = max((store.num_partitions for store in stores), default=None) if stores else None
    if partitions is None:
        partitions = _integer(extra.get("numShufflePartitions"))
    return OperatorState(
        name=name,
        id=number,
        stores=tuple(store.state_store_name for store in stores or ()),
        partitions=partitions,
        rows=figures.num_rows_total if figures else None,
        rows_updated=figures.num_rows_updated if figures else None,
        rows_removed=_integer(extra.get("numRowsRemoved")),
        rows_dropped_by_watermark=_integer(extra.get("numRowsDroppedByWatermark")),
        memory_bytes=figures.memory_used_bytes if figures else None,
        min_batch=_least(store.min_batch_id for store in stores or ()),
        max_batch=_most(store.max_batch_id for store in stores or ()),
    )


def _watermark(text: str | None) -> str | None:
    """Spark reports no watermark yet as the epoch; that is no watermark."""
    return None if text is None or text.startswith("1970-01-01T00:00:00") else text


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _least(values: Iterable[int | None]) -> int | None:
    return min((value for value in values if value is not None), default=None)


def _most(values: Iterable[int | None]) -> int | None:
    return max((value for value in values if value is not None), default=None)
