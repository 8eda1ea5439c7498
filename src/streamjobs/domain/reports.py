"""The reports a pipeline's runner sends the server, defined once for both ends.

The runner builds these models and sends them as JSON (``to_wire``); the server parses each
batch with ``parse_reports`` and reads typed fields. A report is told apart by its ``type``.
Every model accepts keys it does not name and keeps them (Spark's progress JSON grows with its
versions; a stored payload must read back as it was sent), so the wire format is the JSON the
runner sent before these models existed.

An unknown ``type`` is refused (422 naming ``events[i].type``) rather than kept opaque: the
runner and the server ship in the same package, so an unknown type is a defect to see at once,
not a payload to store and never read. The HTTP reporter drops a single event the server
refuses so (``runner.reporting``), so one bad event never holds up the ones after it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from streamjobs.domain.errors import FieldError, InvalidInput


class _Model(BaseModel):
    """camelCase on the wire, strict types, unknown keys kept."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", strict=True, frozen=True
    )


# -- Spark's progress JSON: the parts the server reads ---------------------------------------


class SourceProgress(_Model):
    """One source of a micro-batch. Offsets are the source's own JSON: for Kafka
    ``{topic: {partition: offset}}``, for files ``{"logOffset": n}``, for others a number."""

    description: str | None = None
    start_offset: Any = None
    end_offset: Any = None
    latest_offset: Any = None
    num_input_rows: StrictInt | None = None
    input_rows_per_second: float | None = None
    processed_rows_per_second: float | None = None
    metrics: dict[str, Any] | None = None

    def kafka_end_offsets(self) -> dict[tuple[str, int], int] | None:
        """The next offset to process of each Kafka partition, or None if not a Kafka source."""
        return kafka_offsets(self.end_offset)

    def kafka_latest_offsets(self) -> dict[tuple[str, int], int] | None:
        """The latest offset available of each Kafka partition, as of the micro-batch."""
        return kafka_offsets(self.latest_offset)


class StateOperatorProgress(_Model):
    operator_name: str | None = None
    num_rows_total: StrictInt | None = None
    num_rows_updated: StrictInt | None = None
    memory_used_bytes: StrictInt | None = None


class EventTimeProgress(_Model):
    watermark: str | None = None


class QueryProgress(_Model):
    """Spark's ``StreamingQueryProgress`` as its ``json`` gives it (NaN rates left out)."""

    id: str | None = None
    run_id: str | None = None
    name: str | None = None
    timestamp: str | None = None
    batch_id: StrictInt | None = None
    num_input_rows: StrictInt | None = None
    input_rows_per_second: float | None = None
    processed_rows_per_second: float | None = None
    duration_ms: dict[str, StrictInt | None] | None = None
    event_time: EventTimeProgress | None = None
    state_operators: list[StateOperatorProgress] | None = None
    sources: list[SourceProgress] | None = None
    observed_metrics: dict[str, dict[str, Any]] | None = None


def kafka_offsets(value: Any) -> dict[tuple[str, int], int] | None:
    """``{topic: {partition: offset}}`` (or its JSON text) as offsets by (topic, partition);
    None for anything else (another source's offset, or none)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, Mapping) or not value:
        return None
    offsets: dict[tuple[str, int], int] = {}
    for topic, partitions in value.items():
        if not isinstance(partitions, Mapping):
            return None
        for partition, offset in partitions.items():
            if not (str(partition).lstrip("-").isdigit() and _is_int(offset)):
                return None
            offsets[(str(topic), int(partition))] = offset
    return offsets


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# -- The reports -----------------------------------------------------------------------------


class _Report(_Model):
    """What every report carries. ``sequence`` is numbered by the HTTP reporter (the server
    needs it); ``timestamp`` is the runner's ISO 8601 time of the report."""

    sequence: StrictInt | None = None
    timestamp: str | None = None
    application_id: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """The report as JSON sends it: the keys it was given, camelCase, extras kept."""
        wire = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return {"type": getattr(self, "type"), **wire}  # noqa: B009 - every report has one


class _QueryReport(_Report):
    """A report about one streaming query: Spark's query id, run id and the query's name."""

    id: str | None = None
    run_id: str | None = None
    name: str | None = None

    @property
    def query_name(self) -> str:
        return self.name or self.id or ""


class DriverReport(_Report):
    """Where the driver is: Spark's application id and the address of its UI."""

    type: Literal["driver"] = "driver"
    spark_application_id: str | None = None
    ui_url: str | None = None


class HeartbeatReport(_Report):
    """The driver is alive."""

    type: Literal["heartbeat"] = "heartbeat"


class StartedReport(_QueryReport):
    type: Literal["started"] = "started"


class IdleReport(_QueryReport):
    type: Literal["idle"] = "idle"


class TerminatedReport(_QueryReport):
    """A query ended; ``exception`` says why when it failed."""

    type: Literal["terminated"] = "terminated"
    exception: str | None = None


class ProgressReport(_QueryReport):
    """A micro-batch (or a trigger without data) as Spark reports it."""

    type: Literal["progress"] = "progress"
    progress: QueryProgress

    @property
    def query_name(self) -> str:
        return self.name or self.progress.name or self.id or self.progress.id or ""


class BacklogReport(_QueryReport):
    """How old the oldest record the query has not processed is, measured after the progress
    report of ``batch_id`` from the broker's timestamps (``runner.backlog``).

    Apart from the progress report because asking the broker takes time the progress report
    must not wait for. ``seconds_behind`` is None when the broker could not tell."""

    type: Literal["backlog"] = "backlog"
    batch_id: StrictInt
    seconds_behind: float | None = None
    oldest_unprocessed_at: str | None = None


class PlanReport(_Report):
    """The plan of an output's query (``explain: true``)."""

    type: Literal["plan"] = "plan"
    name: str | None = None
    output: str
    plan: str


class BadRecordsReport(_Report):
    """Records of an input that did not parse, in one forEachBatch micro-batch."""

    type: Literal["badRecords"] = "badRecords"
    name: str | None = None
    input: str
    count: StrictInt


class WrittenReport(_Report):
    """A batchMode output was written."""

    type: Literal["written"] = "written"
    name: str | None = None
    output: str
    where: str


Report = Annotated[
    DriverReport
    | HeartbeatReport
    | StartedReport
    | IdleReport
    | TerminatedReport
    | ProgressReport
    | BacklogReport
    | PlanReport
    | BadRecordsReport
    | WrittenReport,
    Field(discriminator="type"),
]
REPORT_TYPES = (
    "driver",
    "heartbeat",
    "started",
    "idle",
    "terminated",
    "progress",
    "backlog",
    "plan",
    "badRecords",
    "written",
)
_ADAPTER: TypeAdapter[Report] = TypeAdapter(Report)


def parse_report(event: Any, *, path: str = "event") -> Report:
    """One report from its JSON; ``InvalidInput`` names each broken field under ``path``."""
    errors = report_errors(event, path=path)
    if errors:
        raise InvalidInput(errors)
    return _ADAPTER.validate_python(event)


def parse_reports(
    events: Sequence[Any], *, numbered: bool = True, path: str = "events"
) -> list[Report]:
    """The reports of a batch; ``numbered`` requires each to carry its ``sequence``.
    ``InvalidInput`` lists every broken field of every report (``events[3].progress.batchId``)."""
    reports: list[Report] = []
    errors: list[FieldError] = []
    for index, event in enumerate(events):
        where = f"{path}[{index}]"
        if numbered and isinstance(event, Mapping) and not _is_int(event.get("sequence")):
            errors.append(FieldError(f"{where}.sequence", "must be an integer"))
        found = report_errors(event, path=where)
        errors.extend(error for error in found if error.path != f"{where}.sequence" or not numbered)
        if not found:
            reports.append(_ADAPTER.validate_python(event))
    if errors:
        raise InvalidInput(errors)
    return reports


def progress_report(progress: Mapping[str, Any], **about: Any) -> ProgressReport:
    """The runner's report of Spark's progress JSON; ``about`` gives the report's own fields.
    Spark's JSON is kept whole; a field that does not fit the model (none should: a defect of
    the model, or a Spark version that changed one) is left out rather than the report lost."""
    try:
        return ProgressReport(progress=QueryProgress.model_validate(progress), **about)
    except ValidationError:
        wire = ProgressReport(progress=QueryProgress(), **about).to_wire()
        read = stored_report({**wire, "progress": dict(progress)})
        assert isinstance(read, ProgressReport), "a progress needs no field of its own"
        return read


def stored_report(payload: Mapping[str, Any]) -> Report | None:
    """A report as the store kept it, read back: fields that do not fit the models (rows stored
    before the server checked reports) are left out, as if never sent; None when what is left
    is no report (no known type, or a required field missing)."""
    event: Any = copy.deepcopy(dict(payload))
    for _ in range(MOST_FIELDS_LEFT_OUT):
        try:
            return _ADAPTER.validate_python(event)
        except ValidationError as invalid:
            if not all(_left_out(event, error["loc"][1:]) for error in invalid.errors()):
                return None
    return None


MOST_FIELDS_LEFT_OUT = 20


def _left_out(event: Any, location: Sequence[int | str]) -> bool:
    """Remove the field at ``location``; False when it is not there or is required."""
    if not location:
        return False
    *parents, last = location
    for part in parents:
        try:
            event = event[part]
        except (KeyError, IndexError, TypeError):
            return False
    if isinstance(event, dict) and last in event:
        del event[last]
        return True
    return False


def report_errors(event: Any, *, path: str) -> list[FieldError]:
    """What is wrong with one report, each error naming its field under ``path``."""
    if not isinstance(event, Mapping):
        return [FieldError(path, "must be an object")]
    kind = event.get("type")
    if not isinstance(kind, str):
        return [FieldError(f"{path}.type", "must be a string naming the report's type")]
    if kind not in REPORT_TYPES:
        known = ", ".join(REPORT_TYPES)
        return [FieldError(f"{path}.type", f"unknown report type {kind!r} (known: {known})")]
    try:
        _ADAPTER.validate_python(event)
    except ValidationError as invalid:
        # The first location is the union's tag (the report's type): the path leaves it out.
        return [
            FieldError(_joined(path, error["loc"][1:]), _message(error))
            for error in invalid.errors(include_url=False)
        ]
    return []


def _joined(path: str, location: Sequence[int | str]) -> str:
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _message(error: Mapping[str, Any]) -> str:
    if error["type"] == "missing":
        return "is required"
    return str(error["msg"]).removeprefix("Input ").replace("Input should", "should")
