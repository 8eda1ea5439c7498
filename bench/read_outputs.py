"""Read the bench's outputs with Spark for the figures' checks: one process serves a whole run.

    python bench/read_outputs.py [--conf key=value]...

Takes requests on stdin, one JSON object a line, and answers each with one JSON line on stdout:

    {"count": "parquet", "paths": ["/tmp/a/output"]}   ->  {"answer": {"/tmp/a/output": 771420}}
    {"values": "value", "paths": ["/tmp/b/output"]}    ->  {"answer": {"/tmp/b/output": [0, 1]}}

``count`` reads Parquet or Delta outputs; ``values`` lists one column of Parquet outputs, every
row's value (duplicates included). A file-sink directory is read through its ``_spark_metadata``
log, so only the files of committed micro-batches count, not those a killed driver left
half-written; a Delta table through its transaction log. A request that fails is answered with
``{"error": "..."}``.

Starting a JVM and running its first job takes more than ten seconds on a small machine, and a
bench run checks outputs after several figures: this process starts one JVM for all of them. Its
Spark session is stopped after each answer, so between checks it is a JVM with nothing to do while
the next figure measures.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from pyspark.sql import SparkSession

QUIET_JVM = "-XX:TieredStopAtLevel=1"
"""Only the JIT's quick tier: a few short jobs are done before the optimizing one would pay off."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conf", action="append", default=[], help="a Spark setting key=value")
    args = parser.parse_args(argv)
    settings = {
        "spark.master": "local[2]",
        "spark.app.name": "bench-read-outputs",
        "spark.ui.enabled": "false",
        "spark.driver.extraJavaOptions": QUIET_JVM,
    }
    settings.update(setting.partition("=")[::2] for setting in args.conf)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(answer(json.loads(line), settings)), flush=True)
    return 0


def answer(request: dict[str, Any], settings: dict[str, str]) -> dict[str, Any]:
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        if "count" in request:
            reader = spark.read.format(request["count"])
            return {"answer": {path: reader.load(path).count() for path in request["paths"]}}
        column = request["values"]
        return {
            "answer": {
                path: [row[0] for row in spark.read.parquet(path).select(column).collect()]
                for path in request["paths"]
            }
        }
    except Exception as error:  # any failure is the answer; the process serves the next
        return {"error": f"{type(error).__name__}: {error}"}
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
