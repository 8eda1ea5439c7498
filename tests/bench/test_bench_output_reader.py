"""The bench's output reader: one Spark process answering every check of a bench run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from bench.output_reader import OutputReader
from bench.processes import SubjectFailed
from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OutputReader]:
    running = OutputReader({"spark.sql.shuffle.partitions": "2"}, tmp_path_factory.mktemp("reader"))
    yield running
    running.close()


@pytest.fixture(scope="module")
def output(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("output") / "values"
    spark.createDataFrame([(1,), (2,), (2,)], "value BIGINT").write.parquet(str(path))
    return path


def test_counts_rows_and_lists_values_in_one_process(reader: OutputReader, output: Path) -> None:
    assert reader.count("parquet", [output]) == {str(output): 3}
    assert sorted(reader.values("value", [output])[str(output)]) == [1, 2, 2]


def test_a_failed_read_names_the_path_and_the_reader_serves_on(
    reader: OutputReader, output: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "never-written"
    with pytest.raises(SubjectFailed, match="never-written"):
        reader.count("parquet", [missing])
    with pytest.raises(SubjectFailed, match="no_such_column"):
        reader.values("no_such_column", [output])
    assert reader.count("parquet", [output]) == {str(output): 3}


def test_serves_only_checks_whose_settings_it_was_started_with(reader: OutputReader) -> None:
    assert reader.serves({})
    assert reader.serves({"spark.sql.shuffle.partitions": "2"})
    assert not reader.serves({"spark.sql.shuffle.partitions": "4"})
    assert not reader.serves({"spark.jars": "/connector.jar"})
