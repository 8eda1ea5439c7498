"""A look inside a pipeline's state: what the server asks the ``state`` tool and what it answers.

The server cannot read a checkpoint's state itself (that takes Spark), so it runs a short batch
job, the ``state`` tool (``runner.state_inspection``), against the checkpoint and reads its JSON
answer. Both ends share this module: the tool's arguments (``tool_arguments``), the bounds of a
preview, how a streaming query's name maps to its directory in the checkpoint (``query_key``) and
the answer's shape (``InspectionResult``), checked strictly on the server since a job's sandbox
wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, ValidationError
from pydantic.alias_generators import to_camel

from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.pipeline_queries import FOR_EACH_BATCH_QUERY

TOOL = "state"
"""The tool's name for ``runner/tool_main.py`` and the tool runner."""
DEFAULT_PREVIEW_ROWS = 20
MAX_PREVIEW_ROWS = 100
VALUE_CHARACTERS = 500
"""A key or value longer than this as JSON text is cut here (and says so)."""
MAX_OPERATOR_ID = 10_000
"""No query has more stateful operators; a larger id is refused before any tool runs."""


def query_key(job_name: str, query_name: str | None) -> str | None:
    """The directory under the job's checkpoint of the query Spark reports as ``query_name``
    (``runner.pipeline`` names and places its queries so): ``<job>/<output key>`` checkpoints at
    ``<output key>``, ``<job>`` (forEachBatchMode) at ``foreachBatch``; None for a query of
    another naming (a preview's console query)."""
    if query_name == job_name:
        return FOR_EACH_BATCH_QUERY
    prefix = f"{job_name}/"
    if query_name is None or not query_name.startswith(prefix):
        return None
    key = query_name[len(prefix) :]
    return key if key and "/" not in key else None


@dataclass(frozen=True)
class PreviewRequest:
    """Which operator's state to preview, and how many of its first rows."""

    operator: int
    query: str | None = None
    """The query's directory in the checkpoint; None: the only query that keeps state."""
    store_name: str | None = None
    """One of the operator's state stores; None: its only one (``default`` mostly)."""
    limit: int = DEFAULT_PREVIEW_ROWS


def preview_request(
    *, operator: str | None, query: str | None, store_name: str | None, limit: str | None
) -> PreviewRequest | None:
    """A preview request from query parameters as given (None without ``operator``);
    ``InvalidInput`` naming each parameter out of bounds."""
    errors: list[FieldError] = []
    if operator in (None, ""):
        if limit not in (None, "") or query or store_name:
            errors.append(FieldError("query.operator", "name the operator to preview (its id)"))
            raise InvalidInput(errors)
        return None
    operator_id = _bounded_int(operator, "query.operator", 0, MAX_OPERATOR_ID, errors)
    rows = (
        DEFAULT_PREVIEW_ROWS
        if limit in (None, "")
        else _bounded_int(limit, "query.limit", 1, MAX_PREVIEW_ROWS, errors)
    )
    if query is not None and not _is_plain_name(query):
        errors.append(FieldError("query.query", "give a query's directory name, e.g. 'totals'"))
    if store_name is not None and not _is_plain_name(store_name):
        errors.append(FieldError("query.storeName", "give a state store's name, e.g. 'default'"))
    if errors:
        raise InvalidInput(errors)
    return PreviewRequest(
        operator=operator_id, query=query or None, store_name=store_name or None, limit=rows
    )


def tool_arguments(checkpoint: str, preview: PreviewRequest | None) -> list[str]:
    """The tool's own arguments (the tool runner adds ``--result-file``): the checkpoint's local
    directory, and the preview's operator, query, store and limit when one is asked for."""
    arguments = ["--checkpoint", checkpoint, "--value-characters", str(VALUE_CHARACTERS)]
    if preview is None:
        return arguments
    arguments += ["--operator", str(preview.operator), "--limit", str(preview.limit)]
    if preview.query is not None:
        arguments += ["--query", preview.query]
    if preview.store_name is not None:
        arguments += ["--store-name", preview.store_name]
    return arguments


# -- The tool's answer ------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, strict=True, frozen=True, extra="ignore"
    )

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class StoreMetadata(_Model):
    """One row of Spark's ``state-metadata`` source: a state store of one operator."""

    operator_id: StrictInt
    operator_name: StrictStr
    state_store_name: StrictStr
    num_partitions: StrictInt
    min_batch_id: StrictInt | None = None
    max_batch_id: StrictInt | None = None


class QueryState(_Model):
    """What one query's checkpoint directory holds; ``error`` says why its metadata could not be
    read (the other queries are still read)."""

    query: StrictStr
    stores: list[StoreMetadata] = []
    error: StrictStr | None = None


class PreviewRow(_Model):
    partition: StrictInt | None = None
    key: StrictStr
    value: StrictStr
    key_truncated: StrictBool = False
    value_truncated: StrictBool = False


class Preview(_Model):
    """The first ``limit`` rows of one operator's state store at ``batch_id``; ``more``: the
    store holds further rows."""

    query: StrictStr
    operator_id: StrictInt
    store_name: StrictStr | None = None
    batch_id: StrictInt | None = None
    limit: StrictInt
    rows: list[PreviewRow] = []
    more: StrictBool = False


class InspectionResult(_Model):
    """The tool's whole answer: every query's state metadata, the preview asked for, and
    ``error`` when it refused or failed (its exit code then is not 0)."""

    queries: list[QueryState] = []
    preview: Preview | None = None
    error: StrictStr | None = None

    def query(self, key: str) -> QueryState | None:
        return next((query for query in self.queries if query.query == key), None)


class UnreadableResult(ValueError):
    """The tool's answer is not what this module describes."""


def parse_result(document: Mapping[str, Any] | None) -> InspectionResult:
    """The tool's answer, checked; ``UnreadableResult`` saying what is wrong with it."""
    if document is None:
        raise UnreadableResult("the state tool wrote no answer")
    try:
        return InspectionResult.model_validate(dict(document))
    except ValidationError as invalid:
        first = invalid.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the answer"
        raise UnreadableResult(
            f"the state tool's answer is not readable: {where}: {first['msg']}"
        ) from None


def operators_of(stores: Sequence[StoreMetadata]) -> dict[int, list[StoreMetadata]]:
    """A query's state stores by operator id, in id order (a join keeps four per operator)."""
    by_operator: dict[int, list[StoreMetadata]] = {}
    for store in sorted(stores, key=lambda item: (item.operator_id, item.state_store_name)):
        by_operator.setdefault(store.operator_id, []).append(store)
    return by_operator


def _bounded_int(text: str, path: str, low: int, high: int, errors: list[FieldError]) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        errors.append(FieldError(path, f"must be a whole number between {low} and {high}"))
        return low
    if not low <= value <= high:
        errors.append(FieldError(path, f"must be between {low} and {high}"))
    return value


def _is_plain_name(text: str) -> bool:
    """A single directory or store name: no separators, no control characters, not . or .."""
    return (
        0 < len(text) <= 255
        and text not in (".", "..")
        and "/" not in text
        and "\\" not in text
        and text.isprintable()
    )
