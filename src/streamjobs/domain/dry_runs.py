"""The dry run of an upgrade: what the ``dry-run`` tool answers, and what its failures mean.

The server cannot plan a pipeline itself (that takes Spark), so an upgrade's compatibility check
runs the new pipeline in a short sandboxed session, the ``dry-run`` tool (``runner.dry_run``),
against a copy of the checkpoint: each query replays its last batch on the state the checkpoint
holds, which is where Spark checks its stateful operators against the checkpoint's state
metadata and each state's key and value schema against the stored ones. Both ends share this
module: the tool's arguments, the answer's shape (``DryRunResult``, checked strictly on the
server, since a job's sandbox wrote it), and ``explain``, which turns Spark's message into what
changed (operator X was Y, the state key of operator Z lost column W) and what the user can do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, ValidationError
from pydantic.alias_generators import to_camel

from streamjobs.domain.compatibility import ADVICE, Incompatibility

TOOL = "dry-run"
"""The tool's name for ``runner/tool_main.py`` and the tool runner."""
TIMED_OUT = "TIMED_OUT"
"""The error class of a query whose replayed batch did not end in time (the tool's own)."""
OPERATORS_CHANGED = "STATEFUL_OPERATORS_CHANGED"
"""The tool's error class for a replay whose stateful operators differ from those the
checkpoint holds state for, found once the batch ran (Spark compares them from batch 1 on)."""
METADATA_MISMATCH = "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"
MESSAGE_CHARACTERS = 2000
"""An error is cut here: it is for a person to read, not a log."""

OPERATOR_WORDS = {
    "stateStoreSave": "an aggregation",
    "sessionWindowStateStoreSaveExec": "a session window aggregation",
    "dedupe": "a deduplication",
    "dedupeWithinWatermark": "a deduplication within the watermark",
    "symmetricHashJoin": "a stream-stream join",
    "flatMapGroupsWithState": "a flatMapGroupsWithState",
    "transformWithStateExec": "a transformWithState",
    "transformWithStateInPandasExec": "a transformWithStateInPandas",
    "transformWithStateInPySparkExec": "a transformWithState in Python",
    "globalLimit": "a streaming LIMIT",
}
"""Spark's names of stateful operators (as its state metadata records them), in words."""
TYPE_WORDS = {
    "StringType": "string",
    "LongType": "bigint",
    "IntegerType": "int",
    "ShortType": "smallint",
    "ByteType": "tinyint",
    "DoubleType": "double",
    "FloatType": "float",
    "BooleanType": "boolean",
    "TimestampType": "timestamp",
    "TimestampNTZType": "timestamp_ntz",
    "DateType": "date",
    "BinaryType": "binary",
    "NullType": "void",
}

_CONDITION = re.compile(r"\[([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)\]")
_OPERATOR = re.compile(r"OperatorId:\s*(\d+)\s*->\s*OperatorName:\s*([A-Za-z0-9_]+)")
_IN_METADATA = re.compile(r"in the metadata:\s*\[(.*?)\];", re.DOTALL)
_IN_BATCH = re.compile(r"in current batch:\s*\[(.*?)\]\.", re.DOTALL)
_SCHEMA_CHANGE = re.compile(
    r"Existing (key|value)_schema=(.*?) and new (?:key|value)_schema=(.*?)\.\s*(?:\n|If you|$)"
)
_EVOLUTION = re.compile(r"new value_schema=(.*?) and old value_schema=(.*?)\s*(?:\n|Please|$)")
_CONFIG = re.compile(r"Cannot change (\S+) from (\S+) to (\S+) between restarts")
_TYPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERAL = re.compile(r"-?\d+|true|false")
_STACK_LINE = re.compile(r"^\s*(at |\.\.\. \d+ more|Caused by: |JVM stacktrace|=== Streaming)")
_GENERIC_CONDITIONS = frozenset({"STREAM_FAILED"})
"""Spark's wrapper around the error a query failed with: the condition inside says more."""


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, strict=True, frozen=True, extra="ignore"
    )

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class StoredOperator(_Model):
    """A stateful operator the checkpoint holds state for, with its state's schemas as Spark
    prints them (``StructType(StructField(user,StringType,true))``)."""

    operator_id: StrictInt
    operator_name: StrictStr
    key_schema: StrictStr | None = None
    value_schema: StrictStr | None = None


class QueryCheck(_Model):
    """One query's replay: the batch it replayed, and how it failed (``error`` None: it ran)."""

    query: StrictStr
    """The query's directory in the checkpoint: an output's key, or ``foreachBatch``."""
    batch: StrictInt | None = None
    error: StrictStr | None = None
    error_class: StrictStr | None = None
    operators: tuple[StoredOperator, ...] = ()


class DryRunResult(_Model):
    """The tool's whole answer: ``compatible`` when every query replayed its batch; ``error``
    when the tool could not run the pipeline at all."""

    compatible: StrictBool
    queries: tuple[QueryCheck, ...] = ()
    error: StrictStr | None = None


class UnreadableResult(ValueError):
    """The tool's answer is not what this module describes."""


def tool_arguments(
    *, manifest: str, connections: str | None, checkpoint: str, timeout_seconds: float
) -> list[str]:
    """The tool's own arguments (the tool runner adds ``--result-file``)."""
    arguments = ["--manifest", manifest]
    if connections is not None:
        arguments += ["--connections", connections]
    return [*arguments, "--checkpoint", checkpoint, "--timeout-seconds", f"{timeout_seconds:g}"]


def parse_result(document: Mapping[str, Any] | None) -> DryRunResult:
    """The tool's answer, checked; ``UnreadableResult`` saying what is wrong with it."""
    if document is None:
        raise UnreadableResult("the dry run wrote no answer")
    try:
        text = json.dumps(dict(document))
    except (TypeError, ValueError) as error:
        raise UnreadableResult(f"the dry run's answer is not JSON: {error}") from None
    try:
        # as JSON text, from which strict validation reads arrays as tuples
        return DryRunResult.model_validate_json(text)
    except ValidationError as invalid:
        first = invalid.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the answer"
        raise UnreadableResult(
            f"the dry run's answer is not readable: {where}: {first['msg']}"
        ) from None


def error_condition(message: str) -> str | None:
    """The most telling of Spark's error conditions in ``message`` (``[STATE_STORE_...]``):
    the one inside a ``STREAM_FAILED``, else the first."""
    found = [name for name in _CONDITION.findall(message) if name not in _GENERIC_CONDITIONS]
    return found[0] if found else None


def error_summary(message: str) -> str:
    """``message`` without the query's description, its plan and the JVM's stack, cut at
    ``MESSAGE_CHARACTERS``."""
    lines = []
    for line in message.splitlines():
        if _STACK_LINE.match(line):
            break
        lines.append(line.rstrip())
    text = "\n".join(lines).strip() or message.strip()
    return text if len(text) <= MESSAGE_CHARACTERS else text[: MESSAGE_CHARACTERS - 1] + "…"


def explain(check: QueryCheck, *, where: str) -> Incompatibility:
    """What a failed replay of ``check`` means for the user: what changed, and what to do.
    ``where`` locates the query in the manifest (its output, or the pipeline)."""
    error = check.error or ""
    condition = check.error_class or error_condition(error) or ""
    replay = (
        f" (query {check.query!r}, batch {check.batch} replayed)" if check.batch is not None else ""
    )
    schema = _SCHEMA_CHANGE.search(error)
    evolution = _EVOLUTION.search(error)
    config = _CONFIG.search(error)
    if condition in (METADATA_MISMATCH, OPERATORS_CHANGED):
        rule, what, why = "stateful-operators", *_operators_change(error)
    elif condition.endswith("_SCHEMA_NOT_COMPATIBLE") and schema is not None:
        part, before, after = schema.groups()
        rule, what, why = f"state-{part}-schema", *_schema_change(part, before, after, check)
    elif condition == "STATE_STORE_INVALID_VALUE_SCHEMA_EVOLUTION" and evolution is not None:
        after, before = evolution.groups()
        rule, what, why = "state-value-schema", *_schema_change("value", before, after, check)
    elif condition == "STATE_STORE_INVALID_CONFIG_AFTER_RESTART" and config is not None:
        setting, was, now = config.groups()
        rule = "state-config"
        what = f"the state was kept with {setting} {was}, and the new spec sets {now}"
        why = f"Keep {was} for an upgrade that continues from this checkpoint."
    elif condition.startswith(("CANNOT_LOAD_STATE_STORE", "STATE_STORE_COLUMN_FAMILY")):
        rule = "state-missing"
        what = (
            "a stateful operator of the new plan finds no state of its own in the checkpoint: "
            "a stateful step was added, or the stateful operators moved"
        )
        why = f"{_operators_held(check.operators)}Spark said: {error_summary(error)}"
    elif condition == TIMED_OUT:
        return Incompatibility(
            where,
            "dry-run-timeout",
            f"the dry run did not finish replaying the checkpoint's last batch in time{replay}, "
            f"so the check cannot tell whether the new spec fits the checkpoint; try again, or "
            f"{ADVICE}",
        )
    else:
        return Incompatibility(
            where,
            "dry-run-failed",
            f"the new spec failed on the checkpoint's last batch{replay}: "
            f"{error_summary(error)}. Fix the spec, or {ADVICE}",
        )
    return Incompatibility(
        where,
        rule,
        f"{what}{replay}. {why} The new spec cannot continue from this checkpoint: {ADVICE}",
    )


def operators_changed_message(held: Sequence[tuple[int, str]], now: Sequence[str]) -> str:
    """The tool's message when the replay's stateful operators are not those the checkpoint
    holds state for: Spark's own wording, so ``explain`` reads both alike."""
    before = ", ".join(_spark_operator(oid, name) for oid, name in held)
    after = ", ".join(_spark_operator(oid, name) for oid, name in enumerate(now))
    return (
        "The stateful operators of the new plan are not those the checkpoint holds state for. "
        f"Stateful operators in the metadata: [{before}]; "
        f"Stateful operators in current batch: [{after}]."
    )


def _spark_operator(operator_id: int, name: str) -> str:
    return f"(OperatorId: {operator_id} -> OperatorName: {name})"


def operator_words(operator_id: int, name: str) -> str:
    """``operator 1 (a deduplication)``."""
    return f"operator {operator_id} ({OPERATOR_WORDS.get(name, name)})"


def _operators_change(error: str) -> tuple[str, str]:
    """What changed among the stateful operators, and the two lists in full."""
    held = _operators_in(_IN_METADATA.search(error))
    now = _operators_in(_IN_BATCH.search(error))
    changes = []
    for operator_id in sorted(held.keys() | now.keys()):
        if operator_id not in now:
            changes.append(f"{operator_words(operator_id, held[operator_id])} is gone")
        elif operator_id not in held:
            changes.append(f"{operator_words(operator_id, now[operator_id])} was added")
        elif held[operator_id] != now[operator_id]:
            was = OPERATOR_WORDS.get(held[operator_id], held[operator_id])
            changes.append(f"{operator_words(operator_id, now[operator_id])} was {was}")
    listed = "; ".join(changes) if changes else "their order changed"
    return (
        f"the stateful operators changed: {listed}",
        f"The checkpoint holds state for {_listed(held)}; the new plan has {_listed(now)}, "
        "and Spark finds each operator's state by its place in the plan.",
    )


def _operators_in(match: re.Match[str] | None) -> dict[int, str]:
    if match is None:
        return {}
    return {int(oid): name for oid, name in _OPERATOR.findall(match.group(1))}


def _listed(operators: Mapping[int, str]) -> str:
    if not operators:
        return "no stateful operator"
    return ", ".join(operator_words(oid, name) for oid, name in sorted(operators.items()))


def _operators_held(operators: Sequence[StoredOperator]) -> str:
    if not operators:
        return ""
    held = {operator.operator_id: operator.operator_name for operator in operators}
    return f"The checkpoint holds state for {_listed(held)}. "


def _schema_change(part: str, before: str, after: str, check: QueryCheck) -> tuple[str, str]:
    """What changed in an operator's state key or values, and both schemas in full."""
    old_columns, new_columns = parse_struct(before), parse_struct(after)
    owner = _schema_owner(part, before, check.operators)
    kept = "key" if part == "key" else "values"
    if old_columns is None or new_columns is None:
        return f"the state {kept} of {owner} changed", f"It was {before}; now it is {after}."
    changes = "; ".join(column_changes(old_columns, new_columns))
    finds = "finds state by its key" if part == "key" else "reads the kept values by their schema"
    return (
        f"the state {kept} of {owner} changed: {changes}",
        f"It was ({_columns(old_columns)}); now it is ({_columns(new_columns)}), and Spark "
        f"{finds}.",
    )


def _schema_owner(part: str, stored: str, operators: Sequence[StoredOperator]) -> str:
    """The operator whose stored schema is ``stored``; the only one, when Spark's message
    does not tell and the checkpoint holds one."""
    matching = [
        operator
        for operator in operators
        if (operator.key_schema if part == "key" else operator.value_schema) == stored.strip()
    ]
    candidates = matching if len(matching) == 1 else operators if len(operators) == 1 else ()
    if len(candidates) == 1:
        return operator_words(candidates[0].operator_id, candidates[0].operator_name)
    return "a stateful operator"


Column = tuple[str, str]


def column_changes(before: Sequence[Column], after: Sequence[Column]) -> list[str]:
    """What changed from columns ``before`` to ``after``, by name: lost, added, retyped."""
    old, new = dict(before), dict(after)
    changes = [f"lost column {name} {kind}" for name, kind in before if name not in new]
    changes += [f"column {name} {kind} added" for name, kind in after if name not in old]
    changes += [
        f"column {name} changed from {old[name]} to {kind}"
        for name, kind in after
        if name in old and old[name] != kind
    ]
    if changes:
        return changes
    if [kind for _, kind in before] != [kind for _, kind in after]:
        return ["its columns' order changed"]
    return ["its columns' nullability or field names changed"]


def parse_struct(text: str) -> list[Column] | None:
    """``StructType(StructField(user,StringType,true),...)`` (Spark's way of printing a
    schema) as ``[("user", "string"), ...]``; None when it is not that."""
    try:
        kind, end = _parse_type(text.strip(), 0)
    except (ValueError, IndexError):
        return None
    if end != len(text.strip()) or not isinstance(kind, list):
        return None
    return kind


def _parse_type(text: str, at: int) -> tuple[list[Column] | str, int]:
    """The type at ``at`` (a struct's columns, or a type in SQL words), and where it ends."""
    match = _TYPE_NAME.match(text, at)
    if match is None:
        raise ValueError(f"no type at {at}")
    name, at = match.group(0), match.end()
    if name == "StructType":
        return _parse_fields(text, at)
    if at >= len(text) or text[at] != "(":
        return TYPE_WORDS.get(name, name.removesuffix("Type").lower()), at
    arguments, at = _parse_arguments(text, at + 1)
    if name == "ArrayType":
        return f"array<{arguments[0]}>", at
    if name == "MapType":
        return f"map<{arguments[0]}, {arguments[1]}>", at
    return f"{name.removesuffix('Type').lower()}({','.join(arguments)})", at


def _parse_fields(text: str, at: int) -> tuple[list[Column], int]:
    if text[at] != "(":
        raise ValueError("a struct without fields")
    at += 1
    columns: list[Column] = []
    while text[at] != ")":
        if not text.startswith("StructField(", at):
            raise ValueError(f"no field at {at}")
        comma = text.index(",", at)
        name = text[at + len("StructField(") : comma]
        kind, at = _parse_type(text, comma + 1)
        closing = text.index(")", at)
        columns.append((name, _in_words(kind)))
        at = closing + 1
        if text[at] == ",":
            at += 1
    return columns, at + 1


def _parse_arguments(text: str, at: int) -> tuple[list[str], int]:
    arguments: list[str] = []
    while text[at] != ")":
        literal = _LITERAL.match(text, at)
        if literal is not None:
            arguments.append(literal.group(0))
            at = literal.end()
        else:
            kind, at = _parse_type(text, at)
            arguments.append(_in_words(kind))
        if text[at] == ",":
            at += 1
    return arguments, at + 1


def _in_words(kind: list[Column] | str) -> str:
    return kind if isinstance(kind, str) else f"struct<{_columns(kind)}>"


def _columns(columns: Sequence[Column]) -> str:
    return ", ".join(f"{name} {kind}" for name, kind in columns)
