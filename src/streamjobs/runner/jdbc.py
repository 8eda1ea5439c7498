"""JDBC upserts keyed on ``keyColumns``: the exactly-once route into PostgreSQL.

Each micro-batch goes to a staging table through Spark's JDBC writer, then one transaction runs
``INSERT … ON CONFLICT (keys) DO UPDATE`` from it into the target. Replaying a batch after a crash
writes the same rows again, so the target ends the same: no record lost, none twice. When a batch
holds several rows for one key, the last of them in the batch's order (for Kafka: partition, then
offset) is the one kept, as if they had been applied one by one. The JDBC connection for the SQL is
opened in the driver's JVM, through the driver Spark itself loaded.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.functions import monotonically_increasing_id

from streamjobs.domain.datasets import SparkSink

STAGING_SUFFIX = "__streamjobs_staging"
ROW_ORDER_COLUMN = "__streamjobs_row"
"""Staging column holding each row's place in the batch, so the last row per key wins."""


def upsert(frame: DataFrame, sink: SparkSink) -> None:
    """Insert or update ``frame``'s rows in the sink's table, keyed on its key columns."""
    target = sink.options["dbtable"]
    staging = target + STAGING_SUFFIX
    columns = frame.columns
    ordered = frame.withColumn(ROW_ORDER_COLUMN, monotonically_increasing_id())
    ordered.write.format("jdbc").options(**{**sink.options, "dbtable": staging}).mode(
        "overwrite"
    ).save()
    with jdbc_connection(frame.sparkSession, sink.options) as connection:
        statement = connection.createStatement()
        statement.execute(create_target_sql(target, staging, columns, sink.key_columns))
        statement.execute(upsert_sql(target, staging, columns, sink.key_columns))
        connection.commit()


def append(frame: DataFrame, sink: SparkSink) -> None:
    frame.write.format("jdbc").options(**sink.options).mode(sink.save_mode).save()


def create_target_sql(
    target: str, staging: str, columns: Sequence[str], keys: Sequence[str]
) -> str:
    """Create the target with the staging table's ``columns``, keyed, unless it exists."""
    column_list = ", ".join(quoted(column) for column in columns)
    key_list = ", ".join(quoted(key) for key in keys)
    return (
        "DO $$ BEGIN "
        f"IF to_regclass('{_literal(target)}') IS NULL THEN "
        f"CREATE TABLE {quoted_table(target)} AS SELECT {column_list} "
        f"FROM {quoted_table(staging)} WITH NO DATA; "
        f"ALTER TABLE {quoted_table(target)} ADD PRIMARY KEY ({key_list}); "
        "END IF; END $$"
    )


def upsert_sql(target: str, staging: str, columns: Sequence[str], keys: Sequence[str]) -> str:
    """``INSERT … ON CONFLICT (keys) DO UPDATE`` from the staging table into the target, one
    row per key (PostgreSQL refuses to update a row twice in one statement)."""
    column_list = ", ".join(quoted(column) for column in columns)
    key_list = ", ".join(quoted(key) for key in keys)
    updates = [f"{quoted(c)} = EXCLUDED.{quoted(c)}" for c in columns if c not in keys]
    action = f"DO UPDATE SET {', '.join(updates)}" if updates else "DO NOTHING"
    return (
        f"INSERT INTO {quoted_table(target)} ({column_list}) "
        f"SELECT DISTINCT ON ({key_list}) {column_list} FROM {quoted_table(staging)} "
        f"ORDER BY {key_list}, {quoted(ROW_ORDER_COLUMN)} DESC "
        f"ON CONFLICT ({key_list}) {action}"
    )


def quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def quoted_table(name: str) -> str:
    return ".".join(quoted(part) for part in name.split("."))


def _literal(text: str) -> str:
    return quoted_table(text).replace("'", "''")


@contextmanager
def jdbc_connection(spark: SparkSession, options: dict[str, str]) -> Iterator[Any]:
    """A JDBC connection in the driver's JVM, with autocommit off, closed afterwards."""
    jvm = spark.sparkContext._jvm  # the driver JVM is only reachable this way
    assert jvm is not None
    driver = options.get("driver")
    if driver:
        jvm.org.apache.spark.sql.execution.datasources.jdbc.DriverRegistry.register(driver)
    properties = jvm.java.util.Properties()
    for key in ("user", "password"):
        if key in options:
            properties.setProperty(key, options[key])
    connection = jvm.java.sql.DriverManager.getConnection(options["url"], properties)
    try:
        connection.setAutoCommit(False)
        yield connection
    except Exception:
        connection.rollback()
        raise
    finally:
        connection.close()
