"""Batch writes of files (parquet, json, csv) by ``saveMode``, into a directory the job may not
remove.

The server makes each output's directory before a sandboxed driver starts and lets the job's
account write inside it, not replace it. Spark's file writer takes the directory's existence as
"data is there": errorifexists would always fail, ignore would never write, and overwrite deletes
the directory itself, which the job cannot. So here an empty directory counts as no data, and an
overwrite empties the directory rather than removing it (what Spark's overwrite leaves is the
same: only the new files), unless Spark overwrites partitions dynamically, which keeps the root.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, DataFrameWriter

from streamjobs.domain.datasets import SparkSink

DYNAMIC_PARTITIONS_SETTING = "spark.sql.sources.partitionOverwriteMode"
DYNAMIC_PARTITIONS_OPTION = "partitionoverwritemode"
"""The write option that, when set, Spark obeys instead of the session setting (any case)."""


def write_files(frame: DataFrame, sink: SparkSink) -> None:
    """Write ``frame`` to the sink's directory as its save mode says."""
    assert sink.path is not None, "file outputs are written to a path"
    mode = sink.save_mode.lower()
    directory = _Directory(frame, sink.path)
    if mode == "overwrite" and not _overwrites_partitions(frame, sink):
        directory.empty()
        mode = "append"
    elif mode in ("errorifexists", "error", "ignore") and directory.is_empty():
        mode = "append"
    writer = frame.write.format(sink.format).mode(mode).options(**sink.options)
    _with_partitions(writer, sink).save(sink.path)


def _overwrites_partitions(frame: DataFrame, sink: SparkSink) -> bool:
    """Whether Spark overwrites only the partitions it writes (and so keeps the directory)."""
    mode = next(
        (value for key, value in sink.options.items() if key.lower() == DYNAMIC_PARTITIONS_OPTION),
        None,
    )
    if mode is None:
        mode = frame.sparkSession.conf.get(DYNAMIC_PARTITIONS_SETTING, "static") or "static"
    return bool(sink.partition_by) and mode.lower() == "dynamic"


def _with_partitions(writer: DataFrameWriter, sink: SparkSink) -> DataFrameWriter:
    return writer.partitionBy(*sink.partition_by) if sink.partition_by else writer


class _Directory:
    """An output directory, through Hadoop's file system API (local, HDFS, object stores)."""

    def __init__(self, frame: DataFrame, location: str) -> None:
        spark = frame.sparkSession
        jvm = spark.sparkContext._jvm  # Hadoop's file systems are reachable only through it
        assert jvm is not None
        self._path: Any = jvm.org.apache.hadoop.fs.Path(location)
        self._fs: Any = self._path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def _children(self) -> list[Any]:
        if not self._fs.exists(self._path):
            return []
        return list(self._fs.listStatus(self._path))

    def is_empty(self) -> bool:
        """Absent, or a directory with nothing in it."""
        return not self._children()

    def empty(self) -> None:
        """Delete everything in the directory, leaving the directory itself."""
        for child in self._children():
            if not self._fs.delete(child.getPath(), True):
                raise OSError(f"cannot delete {child.getPath().toString()} to overwrite it")
