"""The ``state`` tool: a short batch job that reads a pipeline's checkpoint and says what its
state holds (``runner/tool_main.py state --result-file F --checkpoint DIR ...``).

For every query's directory under the checkpoint it reads Spark's ``state-metadata`` source (each
stateful operator's id, name, state stores, partitions and the batches its state covers), and,
when ``--operator`` is given, the first ``--limit`` keys and values of that operator's state
through the ``statestore`` source, each rendered as JSON text and cut at ``--value-characters``.
The answer is a ``domain.state_inspection.InspectionResult`` as JSON in the result file, written
whole (temp name, then rename).

The tool reads the checkpoint where it lies, through a read-only bind of the sandbox: Spark's
state sources only read (checked by the tests against a checkpoint made read-only), so a copy of
a possibly large state would buy nothing, and the bind makes sure. Exit codes: 0 answered, 2 the
preview asked for what the checkpoint does not hold (the answer's ``error`` says what it holds),
1 Spark failed (the answer's ``error`` says how).
"""

from __future__ import annotations

import argparse
import base64
import datetime
import decimal
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import Row, SparkSession

from streamjobs.domain.state_inspection import (
    DEFAULT_PREVIEW_ROWS,
    MAX_PREVIEW_ROWS,
    VALUE_CHARACTERS,
    InspectionResult,
    Preview,
    PreviewRow,
    QueryState,
    StoreMetadata,
    operators_of,
)

QUERY_ENTRIES = ("offsets", "commits", "metadata")
"""What makes a directory a streaming query's checkpoint."""
PARTITION_COLUMN = "partition_id"
KEY_COLUMN = "key"
_MESSAGE_CHARACTERS = 1000
EXIT_ANSWERED, EXIT_FAILED, EXIT_REFUSED = 0, 1, 2


class Refused(Exception):
    """The preview names an operator, query or store the checkpoint does not hold."""


def main(argv: Sequence[str]) -> int:
    """Read the checkpoint ``argv`` names, write the answer, return the exit code."""
    args = _parser().parse_args(argv)
    spark = SparkSession.builder.getOrCreate()
    spark.streams.active  # noqa: B018 - creates the state store coordinator the readers ask
    try:
        result, code = inspect(spark, args), EXIT_ANSWERED
    except Refused as refused:
        result, code = InspectionResult(error=str(refused)), EXIT_REFUSED
    except Exception as error:
        result, code = InspectionResult(error=spark_message(error)), EXIT_FAILED
    write_result(Path(args.result_file), result)
    return code


def inspect(spark: SparkSession, args: argparse.Namespace) -> InspectionResult:
    """Every query's state metadata, and the preview ``args`` ask for."""
    checkpoint = Path(args.checkpoint)
    if not checkpoint.is_dir():
        raise Refused(f"the checkpoint {checkpoint} is not there (the job has not run yet?)")
    queries = [
        read_metadata(spark, key, directory) for key, directory in query_directories(checkpoint)
    ]
    preview = None
    if args.operator is not None:
        limit = max(1, min(args.limit, MAX_PREVIEW_ROWS))
        preview = read_preview(
            spark,
            checkpoint,
            queries,
            operator=args.operator,
            query=args.query,
            store_name=args.store_name,
            limit=limit,
            characters=args.value_characters,
        )
    return InspectionResult(queries=queries, preview=preview)


def query_directories(checkpoint: Path) -> list[tuple[str, Path]]:
    """The queries' directories: each child of the checkpoint that is a query's checkpoint (the
    runner gives each output's query one), or the checkpoint itself if it is one; by name."""
    if _is_query(checkpoint):
        return [(checkpoint.name, checkpoint)]
    found = []
    for entry in sorted(os.scandir(checkpoint), key=lambda item: item.name):
        if entry.is_dir(follow_symlinks=False) and _is_query(Path(entry.path)):
            found.append((entry.name, Path(entry.path)))
    return found


def read_metadata(spark: SparkSession, key: str, directory: Path) -> QueryState:
    """The ``state-metadata`` of one query; none for a query that keeps no state."""
    if not (directory / "state").is_dir():
        return QueryState(query=key)
    try:
        rows = spark.read.format("state-metadata").load(str(directory)).collect()
    except Exception as error:
        return QueryState(query=key, error=spark_message(error))
    stores = [
        StoreMetadata(
            operator_id=row["operatorId"],
            operator_name=row["operatorName"],
            state_store_name=row["stateStoreName"],
            num_partitions=row["numPartitions"],
            min_batch_id=row["minBatchId"],
            max_batch_id=row["maxBatchId"],
        )
        for row in rows
    ]
    return QueryState(query=key, stores=stores)


def read_preview(
    spark: SparkSession,
    checkpoint: Path,
    queries: Sequence[QueryState],
    *,
    operator: int,
    query: str | None,
    store_name: str | None,
    limit: int,
    characters: int,
) -> Preview:
    """The first ``limit`` rows of the operator's store, after checking the checkpoint holds it."""
    chosen = _chosen_query(queries, query)
    stores = operators_of(chosen.stores).get(operator)
    if stores is None:
        held = ", ".join(
            f"{number} ({group[0].operator_name})"
            for number, group in operators_of(chosen.stores).items()
        )
        raise Refused(f"query {chosen.query!r} has no stateful operator {operator}; it has {held}")
    names = [store.state_store_name for store in stores]
    if store_name is None and len(names) > 1:
        raise Refused(
            f"operator {operator} of query {chosen.query!r} keeps {len(names)} state stores "
            f"({', '.join(names)}): name the one to preview"
        )
    if store_name is not None and store_name not in names:
        raise Refused(
            f"operator {operator} of query {chosen.query!r} has no state store {store_name!r}; "
            f"it has {', '.join(names)}"
        )
    store = store_name or names[0]
    reader = spark.read.format("statestore").option("operatorId", operator)
    frame = reader.option("storeName", store).load(str(_directory_of(checkpoint, chosen.query)))
    value_columns = [name for name in frame.columns if name not in (KEY_COLUMN, PARTITION_COLUMN)]
    partitioned = PARTITION_COLUMN in frame.columns
    rows = frame.limit(limit + 1).collect()
    return Preview(
        query=chosen.query,
        operator_id=operator,
        store_name=store,
        batch_id=max(
            (item.max_batch_id for item in stores if item.max_batch_id is not None), default=None
        ),
        limit=limit,
        rows=[
            _preview_row(row, value_columns, characters, partitioned=partitioned)
            for row in rows[:limit]
        ],
        more=len(rows) > limit,
    )


def json_text(value: Any, characters: int) -> tuple[str, bool]:
    """``value`` (a row of Spark's) as JSON text of at most ``characters`` characters (plus an
    ellipsis when cut), and whether it was cut."""
    text = json.dumps(_plain(value), ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
    if len(text) <= characters:
        return text, False
    return text[:characters] + "…", True


def spark_message(error: BaseException) -> str:
    """What went wrong in a few lines: Spark's message without the JVM's stack trace."""
    java = getattr(error, "java_exception", None)
    message = str(java.getMessage()) if java is not None else str(error)
    lines = [line for line in message.splitlines() if line.strip() and not _is_stack(line)]
    text = " ".join(line.strip() for line in lines[:4]) or type(error).__name__
    return text[:_MESSAGE_CHARACTERS]


def write_result(path: Path, result: InspectionResult) -> None:
    """The answer as JSON at ``path``, whole or not at all."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(result.to_wire(), ensure_ascii=False))
    temporary.replace(path)


def _preview_row(
    row: Row, value_columns: Sequence[str], characters: int, *, partitioned: bool
) -> PreviewRow:
    value = (
        row[value_columns[0]]
        if len(value_columns) == 1
        else {name: row[name] for name in value_columns}
    )
    key_text, key_cut = json_text(row[KEY_COLUMN], characters)
    value_text, value_cut = json_text(value, characters)
    partition = row[PARTITION_COLUMN] if partitioned else None
    return PreviewRow(
        partition=partition,
        key=key_text,
        value=value_text,
        key_truncated=key_cut,
        value_truncated=value_cut,
    )


def _plain(value: Any) -> Any:
    """``value`` as what JSON can hold: rows and maps as objects, binary as base64 text, times
    as ISO 8601, decimals and non-finite floats as text."""
    if isinstance(value, Row):
        return {name: _plain(item) for name, item in value.asDict(recursive=False).items()}
    if isinstance(value, dict):
        return {str(_plain(key)): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _chosen_query(queries: Sequence[QueryState], query: str | None) -> QueryState:
    stateful = [item for item in queries if item.stores]
    if query is not None:
        for item in queries:
            if item.query == query:
                if item.error is not None:
                    raise Refused(f"the state of query {query!r} cannot be read: {item.error}")
                return item
        names = ", ".join(repr(item.query) for item in stateful) or "none"
        raise Refused(f"the checkpoint holds no query {query!r}; queries with state: {names}")
    if len(stateful) == 1:
        return stateful[0]
    if not stateful:
        raise Refused("no query of the checkpoint keeps state")
    names = ", ".join(repr(item.query) for item in stateful)
    raise Refused(f"several queries keep state ({names}): name the query to preview")


def _directory_of(checkpoint: Path, key: str) -> Path:
    return checkpoint if _is_query(checkpoint) else checkpoint / key


def _is_query(directory: Path) -> bool:
    return any((directory / entry).exists() for entry in QUERY_ENTRIES)


def _is_stack(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(("at ", "...", "Caused by: java.", "JVM stacktrace"))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tool_main.py state", description=__doc__)
    parser.add_argument("--result-file", required=True, help="where the JSON answer goes")
    parser.add_argument("--checkpoint", required=True, help="the job's checkpoint directory")
    parser.add_argument("--operator", type=int, help="preview this stateful operator's state")
    parser.add_argument("--query", help="the query's directory under the checkpoint")
    parser.add_argument("--store-name", help="the operator's state store to preview")
    parser.add_argument("--limit", type=int, default=DEFAULT_PREVIEW_ROWS, help="rows to show")
    parser.add_argument(
        "--value-characters",
        type=int,
        default=VALUE_CHARACTERS,
        help="keys and values longer than this as JSON text are cut",
    )
    return parser
