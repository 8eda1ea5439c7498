"""What the manifest rules need to know about Spark SQL text, read without a JVM.

Spark's own parser needs a running JVM, so this uses sqlglot's Spark dialect: which views a step's
query reads, which files it reads directly by path, and whether an input's ``schema`` is a DDL
column list. Every problem is raised as ``InvalidSqlError`` (a ``ValueError``) with a message fit
for a person.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import ClassVar, NamedTuple

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, SqlglotError

CORRUPT_RECORD_COLUMN = "_corrupt_record"
"""Where Spark's PERMISSIVE JSON parsing puts a value it cannot parse: a kafkajson input uses it
to tell bad records from good ones, so its schema may not name a column so."""

PATH_SOURCES = frozenset(
    {
        "avro",
        "binaryfile",
        "csv",
        "delta",
        "hudi",
        "iceberg",
        "image",
        "json",
        "libsvm",
        "orc",
        "parquet",
        "text",
        "xml",
    }
)
"""Data sources Spark reads a path with when a query names ``source.`path```."""
_PATH_FUNCTIONS = frozenset({"read_files"})
"""Table functions whose first argument is a path to read."""
_NAME_FUNCTION = "identifier"


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


class PathRead(NamedTuple):
    """A path a query reads directly: ``text.`/data/x``` reads ``/data/x`` with ``text``."""

    source: str
    """The data source, or the function, that reads it."""
    path: str | None
    """None when the query computes it (``IDENTIFIER(concat(...))``), so it cannot be known."""

    @property
    def shown(self) -> str:
        """The read as the query wrote it, near enough for a message."""
        if self.path is None:
            return f"{self.source}(...)"
        return f"{self.source}.`{self.path}`"


def runs_programs(sql: str) -> bool:
    """Whether the query pipes rows through a program of the machine's
    (``SELECT TRANSFORM(...) USING 'command'``)."""
    return any(True for _ in _parse_one_query(sql).find_all(exp.QueryTransform))


def paths_read(sql: str) -> list[PathRead]:
    """The paths one Spark SQL query reads directly, in a stable order.

    Spark reads ``format.`path``` (``json.`/data/x```, ``delta.`s3a://b/t```) as the files at
    that path: a two-part name whose first part is a data source that reads paths (or a class
    name), or whose second part looks like a path or URI. ``IDENTIFIER('…')`` and
    ``read_files('…')`` count too; one whose argument is not a plain string gives a ``PathRead``
    without a path. Names inside optimizer hints are left out, as Spark does not read them.
    """
    return list(_paths_read(sql))


@lru_cache(maxsize=1024)
def _paths_read(sql: str) -> tuple[PathRead, ...]:
    reads: list[PathRead] = []
    for table in _parse_one_query(sql).find_all(exp.Table, bfs=False):
        if table.find_ancestor(exp.Hint) is not None:
            continue
        function = table.this
        if isinstance(function, exp.Anonymous):
            reads.extend(_function_reads(function))
        elif table.db and not table.catalog and _is_path_read(table.db, table.name):
            reads.append(PathRead(table.db, table.name))
    return tuple(reads)


def _is_path_read(source: str, name: str) -> bool:
    return (
        source.casefold() in PATH_SOURCES or "." in source or any(mark in name for mark in "/:\\")
    )


def _function_reads(function: exp.Anonymous) -> list[PathRead]:
    name = function.name.casefold()
    if name not in _PATH_FUNCTIONS and name != _NAME_FUNCTION:
        return []
    arguments = function.expressions
    first = arguments[0] if arguments else None
    if not isinstance(first, exp.Literal) or not first.is_string:
        return [PathRead(function.name, None)]
    if name in _PATH_FUNCTIONS:
        return [PathRead(function.name, first.name)]
    try:
        named = exp.to_table(first.name, dialect="spark")
    except SqlglotError:
        return [PathRead(function.name, None)]
    if named.db and not named.catalog and _is_path_read(named.db, named.name):
        return [PathRead(named.db, named.name)]
    return []


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
