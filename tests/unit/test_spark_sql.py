"""Reading Spark SQL without a JVM: the views a query reads, and DDL column lists."""

from __future__ import annotations

import pytest

from streamjobs.domain.spark_sql import (
    InvalidSqlError,
    check_column_list,
    column_names,
    views_read,
)


@pytest.mark.parametrize(
    ("sql", "views"),
    [
        ("SELECT * FROM orders", ["orders"]),
        ("SELECT * FROM `orders` o JOIN returns r ON o.id = r.id", ["orders", "returns"]),
        ("SELECT * FROM a UNION ALL SELECT * FROM b UNION ALL SELECT * FROM A", ["a", "b"]),
        ("WITH x AS (SELECT * FROM orders) SELECT * FROM x", ["orders"]),
        ("SELECT * FROM db.orders JOIN cat.db.items USING (id)", []),
        ("SELECT * FROM orders WHERE id IN (SELECT id FROM flagged)", ["orders", "flagged"]),
        ("SELECT /*+ BROADCAST(d) */ * FROM facts f JOIN dims d ON f.k = d.k", ["facts", "dims"]),
        ("SELECT count(*) FROM clicks GROUP BY window(ts, '1 minute')", ["clicks"]),
        ("SELECT count(*) FROM c GROUP BY window(ts, '10 minutes', '5 minutes'), id", ["c"]),
        ("SELECT * FROM orders WINDOW w AS (PARTITION BY id)", ["orders"]),
        ("SELECT x FROM orders LATERAL VIEW explode(items) t AS x", ["orders"]),
        ("SELECT * FROM VALUES (1, 2) AS t(a, b)", []),
        ("FROM orders SELECT *", ["orders"]),
    ],
)
def test_views_read(sql: str, views: list[str]) -> None:
    assert views_read(sql) == views


@pytest.mark.parametrize(
    ("sql", "message_start"),
    [
        ("SELECT * FROM", "does not parse: Expected table name but got the end of the query"),
        ("SELECT (1", "does not parse: Expecting )"),
        ("SELECT 'x", "does not parse: Error tokenizing"),
        ("INSERT INTO t SELECT 1", "is not a query"),
        ("SELECT 1; SELECT 2", "holds 2 statements"),
        ("   ", "holds no query"),
    ],
)
def test_what_is_not_one_query(sql: str, message_start: str) -> None:
    with pytest.raises(InvalidSqlError) as caught:
        views_read(sql)
    assert str(caught.value).startswith(message_start)
    assert "\x1b" not in str(caught.value)


def test_a_parse_error_says_where() -> None:
    with pytest.raises(InvalidSqlError, match=r"line 1, column \d+, near '"):
        views_read("SELECT * FROM t WHERE (a = 1")


@pytest.mark.parametrize(
    "ddl",
    [
        "id BIGINT, amount DECIMAL(12,2), ts TIMESTAMP",
        "a STRUCT<b: INT, c: ARRAY<STRING>>, m MAP<STRING, INT> NOT NULL COMMENT 'm'",
        "`odd name` STRING, value BINARY, key STRING, timestamp TIMESTAMP_NTZ",
    ],
)
def test_column_lists(ddl: str) -> None:
    assert check_column_list(ddl) == ddl


def test_column_names_in_order_as_written() -> None:
    assert column_names("id BIGINT, `odd name` STRING, s STRUCT<a: INT>") == [
        "id",
        "odd name",
        "s",
    ]


@pytest.mark.parametrize(
    ("ddl", "message_part"),
    [
        ("id", "column 'id' has no type"),
        ("a INT, b", "column 'b' has no type"),
        ("a INT b INT", "is not a Spark DDL column list"),
        ("", "is not a Spark DDL column list"),
        ("a INT) ; DROP TABLE x; (", "is not a Spark DDL column list"),
        ("a INT, b INT, A STRING", "names column 'A' twice"),
        ("`x y` INT, `X Y` INT", "names column 'X Y' twice"),
    ],
)
def test_what_is_not_a_column_list(ddl: str, message_part: str) -> None:
    with pytest.raises(InvalidSqlError, match=message_part):
        check_column_list(ddl)
