"""Which paths a step's SQL reads directly (``text.`/etc/shadow```), found without Spark."""

from __future__ import annotations

import pytest

from streamjobs.domain.spark_sql import PathRead, paths_read


@pytest.mark.parametrize(
    ("sql", "reads"),
    [
        ("SELECT value FROM text.`/etc/shadow`", [PathRead("text", "/etc/shadow")]),
        ("SELECT * FROM json.`file:///x/y`", [PathRead("json", "file:///x/y")]),
        ("SELECT * FROM binaryFile.`/bin`", [PathRead("binaryFile", "/bin")]),
        ("SELECT * FROM `delta`.`s3a://b/t` VERSION AS OF 1", [PathRead("delta", "s3a://b/t")]),
        (
            "SELECT * FROM `org.apache.spark.sql.parquet`.`/p`",
            [PathRead("org.apache.spark.sql.parquet", "/p")],
        ),
        (
            "SELECT * FROM somesource.`/looks/like/a/path`",
            [PathRead("somesource", "/looks/like/a/path")],
        ),
        ("SELECT * FROM parquet.orders", [PathRead("parquet", "orders")]),
        (
            "WITH t AS (SELECT * FROM text.`/a`) SELECT * FROM t "
            "WHERE value IN (SELECT value FROM csv.`/b`)",
            [PathRead("text", "/a"), PathRead("csv", "/b")],
        ),
        ("SELECT * FROM IDENTIFIER('text.`/etc/x`')", [PathRead("text", "/etc/x")]),
        ("SELECT * FROM IDENTIFIER(concat('te', 'xt'))", [PathRead("IDENTIFIER", None)]),
        (
            "SELECT * FROM read_files('/etc/x', format => 'json')",
            [PathRead("read_files", "/etc/x")],
        ),
    ],
)
def test_a_path_read_directly_is_found(sql: str, reads: list[PathRead]) -> None:
    assert sorted(paths_read(sql), key=str) == sorted(reads, key=str)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM orders",
        "SELECT * FROM analytics.orders",
        "SELECT * FROM lake.db.orders",
        "SELECT * FROM range(10)",
        "SELECT * FROM IDENTIFIER('orders')",
        "SELECT /*+ BROADCAST(text.`/etc/x`) */ * FROM orders",
    ],
)
def test_views_tables_and_hints_are_not_path_reads(sql: str) -> None:
    assert paths_read(sql) == []


def test_a_read_is_shown_as_the_query_wrote_it() -> None:
    assert PathRead("text", "/etc/shadow").shown == "text.`/etc/shadow`"
    assert PathRead("IDENTIFIER", None).shown == "IDENTIFIER(...)"
