"""The hand-written PySpark baseline of figure 1: Kafka JSON -> SQL filter/projection -> files."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--schema", required=True, help="the JSON values' schema (Spark DDL)")
    parser.add_argument("--view", default="orders", help="the name the SQL reads the input by")
    parser.add_argument("--sql", required=True)
    parser.add_argument("--output", required=True, help="directory of the Parquet/Delta output")
    parser.add_argument("--format", default="parquet", choices=["parquet", "delta"])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--max-offsets-per-trigger", type=int, required=True)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--conf", action="append", default=[], help="a Spark setting key=value")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    builder = SparkSession.builder.master(args.master).appName("bench-baseline")
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    orders = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", args.bootstrap_servers)
        .option("subscribe", args.topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", args.max_offsets_per_trigger)
        .load()
        .select(F.from_json(F.col("value").cast("string"), args.schema).alias("record"))
        .select("record.*")
    )
    orders.createOrReplaceTempView(args.view)
    query = (
        spark.sql(args.sql)
        .writeStream.format(args.format)
        .option("checkpointLocation", args.checkpoint)
        .trigger(availableNow=True)
        .start(args.output)
    )
    query.awaitTermination()
    for progress in query.recentProgress:
        event = {"type": "progress", "progress": json.loads(progress.json)}
        print(json.dumps(event), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
