"""Read the bench's outputs with Spark for the figures' checks, in a process of its own
(``python -m bench.output_reader``, which prints its answer as a JSON line on stdout), so that
the harness never holds a JVM of its own beside the subjects it times."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.processes import HARNESS_PATH, SubjectFailed, run_subject

ANSWER_SECONDS = 900.0


def count_rows(
    data_format: str, paths: Sequence[Path], conf: Mapping[str, str], directory: Path
) -> dict[str, int]:
    """Rows of each output (``parquet`` or ``delta``), by path, read with the settings ``conf``
    (connector jars...)."""
    return _ask({"count": data_format, "paths": [str(path) for path in paths]}, conf, directory)


def column_values(column: str, paths: Sequence[Path], directory: Path) -> dict[str, list[Any]]:
    """Every row's ``column`` in each Parquet output, by path."""
    return _ask({"values": column, "paths": [str(path) for path in paths]}, {}, directory)


def _ask(request: dict[str, Any], conf: Mapping[str, str], directory: Path) -> Any:
    directory.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "bench.output_reader", json.dumps(request)]
    command += [f"--conf={key}={value}" for key, value in conf.items()]
    run_subject(
        "read-outputs",
        command,
        directory=directory,
        environment=HARNESS_PATH,
        timeout=ANSWER_SECONDS,
    )
    lines = (directory / "read-outputs.out").read_text(encoding="utf-8").splitlines()
    reply = json.loads([line for line in lines if line.startswith("{")][-1])
    if "error" in reply:
        raise SubjectFailed(f"reading {request['paths']}: {reply['error']}")
    return reply["answer"]


def main(argv: Sequence[str] | None = None) -> int:
    """The reader process: answers one request, given as JSON."""
    from pyspark.sql import SparkSession  # only the reader process loads Spark

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("request", help='{"count": format or "values": column, "paths": [...]}')
    parser.add_argument("--conf", action="append", default=[], help="a Spark setting key=value")
    args = parser.parse_args(argv)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("bench-read-outputs")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")
    )
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    request = json.loads(args.request)
    answer: dict[str, Any]
    try:
        if "count" in request:
            reader = spark.read.format(request["count"])
            answer = {path: reader.load(path).count() for path in request["paths"]}
        else:
            column = request["values"]
            answer = {
                path: [row[0] for row in spark.read.parquet(path).select(column).collect()]
                for path in request["paths"]
            }
        reply: dict[str, Any] = {"answer": answer}
    except Exception as error:  # any failure is the answer, to quote where the check was made
        reply = {"error": f"{type(error).__name__}: {error}"}
    print(json.dumps(reply), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
