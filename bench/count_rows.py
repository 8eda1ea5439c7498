"""Count the rows of Parquet or Delta outputs with Spark, to check a figure's runs wrote them all.

    python bench/count_rows.py --format parquet /tmp/a/output /tmp/b/output [--conf key=value]...

Prints one JSON object, ``{"<directory>": <rows>, ...}``. A file-sink directory is read through its
``_spark_metadata`` log, so only committed files count; a Delta table through its transaction log.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from pyspark.sql import SparkSession


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--format", required=True, choices=["parquet", "delta"])
    parser.add_argument("--conf", action="append", default=[], help="a Spark setting key=value")
    parser.add_argument("directories", nargs="+")
    args = parser.parse_args(argv)
    builder = SparkSession.builder.master("local[2]").appName("bench-count-rows")
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    counts = {path: spark.read.format(args.format).load(path).count() for path in args.directories}
    print(json.dumps(counts), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
