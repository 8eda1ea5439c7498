"""The hand-written PySpark baseline of figure 6: Kafka JSON -> filter/project -> Kafka."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention
from pyspark.sql.streaming.readwriter import DataStreamWriter


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--input", required=True, help="the topic to read")
    parser.add_argument("--output", required=True, help="the topic to write")
    parser.add_argument("--schema", required=True, help="the JSON values' schema (Spark DDL)")
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--trigger", default="default")
    parser.add_argument("--stop-file", required=True)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--conf", action="append", default=[], help="a Spark setting key=value")
    return parser.parse_args(argv)


def session(master: str, settings: Sequence[str]) -> SparkSession:
    builder = SparkSession.builder.master(master).appName("bench-latency-baseline")
    for setting in settings:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def with_trigger(writer: DataStreamWriter, trigger: str) -> DataStreamWriter:
    kind, _, interval = trigger.partition(":")
    if kind == "default":
        return writer
    if kind == "processingTime":
        return writer.trigger(processingTime=interval)
    if kind == "continuous":
        return writer.trigger(continuous=interval)
    if kind == "realTime":
        jvm = writer._spark.sparkContext._jvm
        assert jvm is not None
        writer._jwrite = writer._jwrite.trigger(
            jvm.org.apache.spark.sql.streaming.Trigger.RealTime(interval)
        )
        return writer.outputMode("update")
    raise SystemExit(f"--trigger: unknown trigger {trigger!r}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    spark = session(args.master, args.conf)
    events = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", args.bootstrap_servers)
        .option("subscribe", args.input)
        .option("startingOffsets", "latest")
        .load()
        .select(F.from_json(F.col("value").cast("string"), args.schema).alias("r"), "timestamp")
        .where(F.col("r.amount") >= 10)
        .select(
            "r.id",
            "r.produced_ms",
            F.unix_millis("timestamp").alias("appended_ms"),
            "r.amount",
            "r.kind",
        )
    )
    writer = (
        events.select(F.to_json(F.struct("*")).alias("value"))
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", args.bootstrap_servers)
        .option("topic", args.output)
        .option("checkpointLocation", args.checkpoint)
    )
    query = with_trigger(writer, args.trigger).start()
    print("query started", flush=True)
    stop_file = Path(args.stop_file)
    while query.isActive and not stop_file.exists():
        time.sleep(0.2)
    if query.exception() is not None:
        print(query.exception(), file=sys.stderr, flush=True)
        return 1
    query.stop()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
