"""Each of a pipeline's queries in a FAIR scheduler pool of its own.

A pipeline's driver runs with ``spark.scheduler.mode=FAIR`` (``domain.spark_conf``). A streaming
query's micro-batches run in the scheduler pool that was the starting thread's local property
when it started, so starting each output's query inside ``scheduler_pool(<output key>)`` gives
it a pool of its own (Spark makes a pool it does not know, with equal weight): one slow output's
tasks then share the cores with the others' rather than queue before them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

POOL_PROPERTY = "spark.scheduler.pool"


@contextmanager
def scheduler_pool(spark: SparkSession, pool: str) -> Iterator[None]:
    """Run what is started in this thread meanwhile in ``pool``; then the pool as it was."""
    context = spark.sparkContext
    previous = context.getLocalProperty(POOL_PROPERTY)
    context.setLocalProperty(POOL_PROPERTY, pool)
    try:
        yield
    finally:
        context.setLocalProperty(POOL_PROPERTY, previous)  # type: ignore[arg-type]
