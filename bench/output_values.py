"""List the ``value`` column of Parquet file-sink outputs with Spark, to check for lost and
duplicated records after a recovery (figures 2 and 3).

    python bench/output_values.py /tmp/a/output /tmp/b/output [--conf key=value]...

Prints one JSON object, ``{"<directory>": [<value>, ...], ...}``, every row's value (duplicates
included). A file-sink directory is read through its ``_spark_metadata`` log, so only the files
of committed micro-batches count: those a killed driver left half-written do not.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from pyspark.sql import SparkSession


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conf", action="append", default=[], help="a Spark setting key=value")
    parser.add_argument("--master", default="local[1]")
    parser.add_argument("directories", nargs="+")
    args = parser.parse_args(argv)
    builder = SparkSession.builder.master(args.master).appName("bench-output-values")
    for setting in ["spark.ui.enabled=false", *args.conf]:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    values = {
        path: [row.value for row in spark.read.parquet(path).select("value").collect()]
        for path in args.directories
    }
    print(json.dumps(values), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
