"""Start Spark's JVMs faster where many start one after another: the tests.

A driver's start is mostly the JVM loading and compiling ten thousand of Spark's classes. Two of
the JDK's own options cut it by half on this project's machine (a small session: 22 s -> 9-12 s
beside a running test suite):

- a class-data archive (CDS, ``-XX:SharedArchiveFile``): the classes a short Spark program loaded,
  dumped once by a JVM started with ``-XX:ArchiveClassesAtExit``; a JVM with the same Java and
  the same classpath maps them instead of loading them, any other ignores the archive;
- ``-XX:TieredStopAtLevel=1``: only the quick JIT compiler, which suits short runs on small data
  (a long-running job wants the optimizing one, so this is for tests, not for production).

``build_archive`` makes the archive (``make test`` does, into the virtualenv, which every
driver's sandbox can read); ``fast_start_options`` are the options for the server's
``driver_java_options`` and for in-process sessions.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from streamjobs.launch.command import Toolchain

QUICK_COMPILER = "-XX:TieredStopAtLevel=1"
ARCHIVE_TIMEOUT_SECONDS = 600

SPARK_PROGRAM = """\
import sys
from pyspark.sql import SparkSession

spark = SparkSession.builder.master("local[2]").getOrCreate()
events = spark.range(0, 1000).selectExpr("id", "to_json(named_struct('k', id % 7)) AS value")
events.createOrReplaceTempView("events")
parsed = spark.sql("SELECT get_json_object(value, '$.k') AS k, count(*) FROM events GROUP BY 1")
parsed.write.mode("overwrite").parquet(sys.argv[1] + "/batch")
query = (
    spark.readStream.format("rate").option("rowsPerSecond", 100).load()
    .selectExpr("value % 10 AS k", "timestamp")
    .writeStream.format("parquet")
    .option("path", sys.argv[1] + "/stream")
    .option("checkpointLocation", sys.argv[1] + "/checkpoint")
    .start()
)
query.processAllAvailable()
query.stop()
spark.stop()
"""
"""What the archived JVM runs: a session, SQL over JSON, Parquet, a streaming query's commits."""


def fast_start_options(archive: Path | None, *, quick_compiler: bool = True) -> str:
    """The JVM options for quick starts: the quick compiler (unless told otherwise), and
    ``archive`` when it exists."""
    options = [QUICK_COMPILER] if quick_compiler else []
    if archive is not None and archive.is_file():
        options.append(f"-XX:SharedArchiveFile={archive}")
    return " ".join(options)


def build_archive(archive: Path, toolchain: Toolchain | None = None) -> None:
    """Write the class-data archive of a short Spark program's driver to ``archive`` (replacing
    it only once the new one is whole); ``RuntimeError`` with the driver's output on failure."""
    toolchain = toolchain or Toolchain.installed()
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="class-data-") as scratch:
        program = Path(scratch) / "archived_program.py"
        program.write_text(SPARK_PROGRAM)
        dumped = archive.with_name(f".{archive.name}.{os.getpid()}")
        command = [
            str(toolchain.spark_submit),
            "--master",
            "local[2]",
            "--conf",
            f"spark.driver.defaultJavaOptions=-XX:ArchiveClassesAtExit={dumped}",
            "--conf",
            "spark.ui.enabled=false",
            str(program),
            str(Path(scratch) / "output"),
        ]
        environment = {
            **os.environ,
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
        }
        finished = subprocess.run(
            command,
            env=environment,
            capture_output=True,
            text=True,
            timeout=ARCHIVE_TIMEOUT_SECONDS,
            check=False,
        )
        if finished.returncode != 0 or not dumped.is_file():
            dumped.unlink(missing_ok=True)
            tail = (finished.stdout + finished.stderr)[-4000:]
            raise RuntimeError(
                f"the class-data archive's Spark program exited {finished.returncode}:\n{tail}"
            )
        dumped.replace(archive)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m streamjobs.devtools.class_data ARCHIVE", file=sys.stderr)
        return 2
    archive = Path(argv[0]).absolute()
    build_archive(archive)
    print(f"class-data archive: {archive} ({archive.stat().st_size // 2**20} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
