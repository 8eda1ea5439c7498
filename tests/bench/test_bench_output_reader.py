"""The bench's output reader: a Spark process of its own answering one check."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.output_reader import column_values, count_rows
from bench.processes import SubjectFailed
from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def output(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("output") / "values"
    spark.createDataFrame([(1,), (2,), (2,)], "value BIGINT").write.parquet(str(path))
    return path


def test_counts_rows_with_the_given_settings_and_lists_values(output: Path, tmp_path: Path) -> None:
    conf = {"spark.sql.shuffle.partitions": "2"}
    assert count_rows("parquet", [output], conf, tmp_path) == {str(output): 3}
    assert sorted(column_values("value", [output], tmp_path)[str(output)]) == [1, 2, 2]


def test_a_failed_read_names_the_path_or_the_column(output: Path, tmp_path: Path) -> None:
    with pytest.raises(SubjectFailed, match="never-written"):
        count_rows("parquet", [tmp_path / "never-written"], {}, tmp_path)
    with pytest.raises(SubjectFailed, match="no_such_column"):
        column_values("no_such_column", [output], tmp_path)
