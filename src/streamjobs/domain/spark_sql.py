"""What the manifest rules need to know about Spark SQL text, read without a JVM.

Spark's own parser needs a running JVM, so this uses sqlglot's Spark dialect: which views a step's
query reads, and whether an input's ``schema`` is a DDL column list. Every problem is raised as
``InvalidSqlError`` (a ``ValueError``) with a message fit for a person.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import ClassVar

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, SqlglotError

CORRUPT_RECORD_COLUMN = "_corrupt_record"
"""Where Spark's PERMISSIVE JSON parsing puts a value it cannot parse: a kafkajson input uses it
to tell bad records from good ones, so its schema may not name a column so."""


class InvalidSqlError(ValueError):
    """The text is not the Spark SQL it should be; the message says why and where."""


class _SparkWithWindowCalls(Spark):
    """Spark, but ``window`` is a plain word: sqlglot 30 takes ``GROUP BY window(ts, '1 minute')``
    (the usual streaming aggregation) for a named-window clause and fails to parse it."""

    class Tokenizer(Spark.Tokenizer):
        KEYWORDS: ClassVar = {
            word: kind for word, kind in Spark.Tokenizer.KEYWORDS.items() if word != "WINDOW"
        }


def views_read(sql: str) -> list[str]:
    """The unqualified tables or views one Spark SQL query reads, each once, in a stable order.

    Names qualified with a database or catalog (``db.table``) are not views of the pipeline and are
    left out, and so are the query's own CTE names and table names inside optimizer hints.
    Remembered for the latest queries: a job applied again unchanged (a list, a GitOps loop)
    is checked without parsing its SQL again.
    """
    return list(_views_read(sql))


@lru_cache(maxsize=1024)
def _views_read(sql: str) -> tuple[str, ...]:
    query = _parse_one_query(sql)
    cte_names = {cte.alias_or_name.casefold() for cte in query.find_all(exp.CTE)}
    names: dict[str, str] = {}
    for table in query.find_all(exp.Table, bfs=False):
        name = table.name
        if not name or table.db or table.catalog or table.find_ancestor(exp.Hint) is not None:
            continue
        if name.casefold() not in cte_names:
            names.setdefault(name.casefold(), name)
    return tuple(names.values())


def check_column_list(ddl: str) -> str:
    """Return ``ddl`` if it is a Spark DDL column list (``id BIGINT, ts TIMESTAMP``), else raise."""
    column_names(ddl)
    return ddl


def column_names(ddl: str) -> list[str]:
    """The column names of a Spark DDL column list, in order; ``InvalidSqlError`` if it is not
    one, or names a column twice."""
    not_a_column_list = "is not a Spark DDL column list (e.g. 'id BIGINT, ts TIMESTAMP')"
    try:
        statement = sqlglot.parse_one(f"CREATE TABLE t ({ddl})", dialect="spark")
    except SqlglotError as error:
        raise InvalidSqlError(f"{not_a_column_list}: {_describe(error)}") from None
    columns = statement.this.expressions if isinstance(statement.this, exp.Schema) else []
    if not isinstance(statement, exp.Create) or not columns:
        raise InvalidSqlError(not_a_column_list)
    names: list[str] = []
    for column in columns:
        if not isinstance(column, exp.ColumnDef) or column.args.get("kind") is None:
            raise InvalidSqlError(f"{not_a_column_list}: column '{column.name}' has no type")
        if column.name.casefold() in {name.casefold() for name in names}:
            raise InvalidSqlError(
                f"names column '{column.name}' twice (Spark's column names ignore case)"
            )
        names.append(column.name)
    return names


def _parse_one_query(sql: str) -> exp.Expr:
    statements = [statement for statement in _parse(sql) if statement is not None]
    if not statements:
        raise InvalidSqlError("holds no query")
    if len(statements) > 1:
        raise InvalidSqlError(f"holds {len(statements)} statements; a step is one query")
    query = statements[0]
    if not isinstance(query, exp.Query | exp.Values):
        raise InvalidSqlError("is not a query (SELECT ...)")
    return query


def _parse(sql: str) -> list[exp.Expr | None]:
    try:
        return sqlglot.parse(sql, dialect="spark")
    except SqlglotError as error:
        first_error = error
    try:
        return sqlglot.parse(sql, dialect=_SparkWithWindowCalls)
    except SqlglotError:
        raise InvalidSqlError(f"does not parse: {_describe(first_error)}") from None


_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: .*?>")


def _describe(error: SqlglotError) -> str:
    """sqlglot's message without its terminal colours and token reprs."""
    if not isinstance(error, ParseError) or not error.errors:
        return str(error).splitlines()[0]
    first = error.errors[0]
    description = _TOKEN_REPR.sub(_token_text, str(first["description"]))
    where = f"line {first['line']}, column {first['col']}, near '{first['highlight']}'"
    return f"{description} ({where})"


def _token_text(match: re.Match[str]) -> str:
    kind, text = match.groups()
    return "the end of the query" if kind == "SENTINEL" else f"'{text}'"
