"""The ``state`` tool in-process against a real checkpoint: tiny stateful queries run once in the
session Spark, laid out as the runner lays out a pipeline's (one directory per query), then made
read-only, as the tool's sandbox binds it. Every answer comes from a checkpoint Spark cannot
write, and the checkpoint is unchanged afterwards."""

from __future__ import annotations

import datetime
import decimal
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import Row, SparkSession

from streamjobs.domain.pipeline_queries import FOR_EACH_BATCH_QUERY
from streamjobs.domain.state_inspection import parse_result, query_key
from streamjobs.runner.pipeline import FOR_EACH_BATCH_QUERY as RUNNER_FOR_EACH_BATCH_QUERY
from streamjobs.runner.state_inspection import json_text, main

pytestmark = [pytest.mark.spark, pytest.mark.snapshots]

SCHEMA = "k STRING, v INT, ts TIMESTAMP"


@pytest.fixture(scope="module")
def checkpoint(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``totals`` (a watermarked count per key), ``unique`` (dropDuplicates) and ``plain`` (no
    state), each run to the end of three small files, then the whole checkpoint read-only."""
    base = tmp_path_factory.mktemp("state-inspection")
    source = base / "in"
    source.mkdir()
    for number in range(3):
        lines = [
            json.dumps({"k": f"key-{item % 3}", "v": item, "ts": f"2024-01-01T00:0{number}:00"})
            for item in range(5)
        ]
        (source / f"{number}.json").write_text("\n".join(lines) + "\n")
    checkpoint = base / "checkpoint"
    frame = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
    queries = {
        "totals": frame.withWatermark("ts", "1 minute").groupBy("k").count(),
        "unique": frame.dropDuplicates(["k", "v"]),
        "plain": frame.select("k"),
    }
    for key, query in queries.items():
        mode = "update" if key == "totals" else "append"
        started = (
            query.writeStream.format("noop")
            .outputMode(mode)
            .option("checkpointLocation", str(checkpoint / key))
            .trigger(availableNow=True)
            .start()
        )
        started.awaitTermination()
    _set_writable(checkpoint, writable=False)
    before = _tree(checkpoint)
    yield checkpoint
    after = _tree(checkpoint)
    _set_writable(checkpoint, writable=True)
    assert after == before, "reading the state changed the checkpoint"


def inspect(checkpoint: Path, tmp_path: Path, *arguments: str) -> tuple[int, dict[str, Any]]:
    result = tmp_path / "result.json"
    code = main(["--result-file", str(result), "--checkpoint", str(checkpoint), *arguments])
    document: dict[str, Any] = json.loads(result.read_text())
    parse_result(document)  # what the server reads it with
    return code, document


def test_every_query_with_its_operators_and_the_batches_their_state_covers(
    checkpoint: Path, tmp_path: Path
) -> None:
    code, document = inspect(checkpoint, tmp_path)
    assert code == 0, document
    queries = {query["query"]: query for query in document["queries"]}
    assert sorted(queries) == ["plain", "totals", "unique"]
    assert queries["plain"]["stores"] == []
    (totals,) = queries["totals"]["stores"]
    assert totals["operatorId"] == 0
    assert totals["operatorName"] == "stateStoreSave"
    assert totals["stateStoreName"] == "default"
    assert totals["numPartitions"] == 2  # the session's shuffle partitions
    assert totals["minBatchId"] == 0
    assert totals["maxBatchId"] >= 2  # one batch per file, at least
    (unique,) = queries["unique"]["stores"]
    assert unique["operatorName"] == "dedupe"
    assert document["preview"] is None
    assert document["error"] is None


def test_a_preview_shows_the_first_keys_and_values_as_json_text(
    checkpoint: Path, tmp_path: Path
) -> None:
    code, document = inspect(checkpoint, tmp_path, "--operator", "0", "--query", "totals")
    assert code == 0, document
    preview = document["preview"]
    assert preview["query"] == "totals"
    assert preview["storeName"] == "default"
    assert preview["more"] is False
    counts = {json.loads(row["key"])["k"]: json.loads(row["value"]) for row in preview["rows"]}
    assert counts == {"key-0": {"count": 6}, "key-1": {"count": 6}, "key-2": {"count": 3}}
    assert {row["partition"] for row in preview["rows"]} <= {0, 1}

    code, document = inspect(
        checkpoint, tmp_path, "--operator", "0", "--query", "totals", "--limit", "2"
    )
    assert code == 0, document
    assert len(document["preview"]["rows"]) == 2
    assert document["preview"]["more"] is True


def test_long_keys_and_values_are_cut_and_say_so(checkpoint: Path, tmp_path: Path) -> None:
    code, document = inspect(
        checkpoint, tmp_path, "--operator", "0", "--query", "unique", "--value-characters", "6"
    )
    assert code == 0, document
    row = document["preview"]["rows"][0]
    assert row["keyTruncated"] is True
    assert row["key"].endswith("…")
    assert len(row["key"]) == 7


def test_what_the_checkpoint_does_not_hold_is_refused_naming_what_it_holds(
    checkpoint: Path, tmp_path: Path
) -> None:
    code, document = inspect(checkpoint, tmp_path, "--operator", "7", "--query", "totals")
    assert code == 2
    assert "no stateful operator 7" in document["error"]
    assert "0 (stateStoreSave)" in document["error"]

    code, document = inspect(checkpoint, tmp_path, "--operator", "0")
    assert code == 2
    assert "several queries keep state" in document["error"]
    assert "'totals'" in document["error"]
    assert "'unique'" in document["error"]

    code, document = inspect(checkpoint, tmp_path, "--operator", "0", "--query", "nope")
    assert code == 2
    assert "no query 'nope'" in document["error"]

    code, document = inspect(
        checkpoint, tmp_path, "--operator", "0", "--query", "totals", "--store-name", "left"
    )
    assert code == 2
    assert "no state store 'left'" in document["error"]

    code, document = inspect(tmp_path / "never-ran", tmp_path)
    assert code == 2
    assert "is not there" in document["error"]


def test_values_of_every_spark_type_become_json_safe_text() -> None:
    value = Row(
        raw=b"\x00\xff",
        amount=decimal.Decimal("12.50"),
        day=datetime.date(2024, 1, 2),
        at=datetime.datetime(2024, 1, 2, 3, 4, 5),
        ratio=float("nan"),
        tags={"a": [1, 2]},
        text='quote " and ünïcode',
    )
    text, cut = json_text(value, 1000)
    assert not cut
    assert json.loads(text) == {
        "raw": "AP8=",
        "amount": "12.50",
        "day": "2024-01-02",
        "at": "2024-01-02T03:04:05",
        "ratio": "nan",
        "tags": {"a": [1, 2]},
        "text": 'quote " and ünïcode',
    }


def test_query_names_map_to_the_directories_the_runner_gives_them() -> None:
    assert FOR_EACH_BATCH_QUERY == RUNNER_FOR_EACH_BATCH_QUERY
    assert query_key("orders", "orders") == FOR_EACH_BATCH_QUERY
    assert query_key("orders", "orders/totals") == "totals"
    assert query_key("orders", "orders/totals/preview") is None
    assert query_key("orders", "other/totals") is None


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for directory, names, files in os.walk(root):
        for name in names + files:
            path = Path(directory, name)
            status = path.lstat()
            found[str(path.relative_to(root))] = (status.st_size, status.st_mtime_ns)
    return found


def _set_writable(root: Path, *, writable: bool) -> None:
    write = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    for directory, names, files in os.walk(root):
        for name in [*names, *files, "."]:
            path = Path(directory, name)
            mode = path.lstat().st_mode
            path.chmod((mode | stat.S_IWUSR) if writable else (mode & ~write))
