"""How a job's datasets (``<connection>:<name>``) are split and checked against the connections
there are: unknown connections, connections of the wrong type for the format, and which
connections a job uses."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.connections import (
    connections_used,
    dataset_errors,
    parse_connection,
    split_dataset,
)
from streamjobs.domain.errors import FieldError
from streamjobs.domain.spec import parse_manifest
from tests.factories import (
    changed,
    connection_manifest,
    dataset_job_manifest,
    pipeline_manifest,
    python_manifest,
)


class TestSplitDataset:
    @pytest.mark.parametrize(
        ("dataset", "parts"),
        [
            ("kafka-main:orders", ("kafka-main", "orders")),
            ("lakehouse:raw/orders", ("lakehouse", "raw/orders")),
            ("warehouse-db:public.orders", ("warehouse-db", "public.orders")),
            ("files:a:b", ("files", "a:b")),
        ],
    )
    def test_the_connection_is_before_the_first_colon(
        self, dataset: str, parts: tuple[str, str]
    ) -> None:
        assert split_dataset(dataset) == parts

    def test_a_dataset_without_a_connection_is_a_value_error(self) -> None:
        with pytest.raises(ValueError, match="'<connection>:"):
            split_dataset("orders")


CONNECTIONS = {
    name: parse_connection(connection_manifest(name, connection_type))
    for name, connection_type in [
        ("kafka-main", "kafka"),
        ("lake", "lakehouse"),
        ("landing", "files"),
        ("pg", "jdbc"),
    ]
}


def job_with(input_format: str, output_format: str, *, reads: str, writes: str) -> Any:
    manifest = dataset_job_manifest("job", reads=reads, writes=writes)
    manifest = changed(
        manifest,
        ("spec.pipeline.inputs[0].format", input_format),
        ("spec.pipeline.outputs[0].format", output_format),
    )
    return parse_manifest(manifest)


class TestDatasets:
    def test_datasets_naming_fitting_connections_have_no_errors(self) -> None:
        job = job_with("kafkajson", "delta", reads="kafka-main:orders", writes="lake:raw/orders")
        assert dataset_errors(job, CONNECTIONS) == []
        assert connections_used(job) == {"kafka-main", "lake"}

    def test_an_unknown_connection_is_named_with_the_known_ones(self) -> None:
        job = job_with("kafkajson", "parquet", reads="kafka-x:orders", writes="nowhere:out")
        assert dataset_errors(job, CONNECTIONS) == [
            FieldError(
                "spec.pipeline.inputs[0].dataset",
                "connection 'kafka-x' does not exist (known: kafka-main, lake, landing, pg)",
            ),
            FieldError(
                "spec.pipeline.outputs[0].dataset",
                "connection 'nowhere' does not exist (known: kafka-main, lake, landing, pg)",
            ),
        ]

    def test_without_connections_the_known_ones_are_none(self) -> None:
        job = job_with("kafkajson", "parquet", reads="kafka-main:orders", writes="landing:out")
        assert [error.message for error in dataset_errors(job, {})] == [
            "connection 'kafka-main' does not exist (known: none)",
            "connection 'landing' does not exist (known: none)",
        ]

    @pytest.mark.parametrize(
        ("input_format", "connection", "fits"),
        [
            ("kafka", "kafka-main", True),
            ("kafkajson", "kafka-main", True),
            ("kafka", "landing", False),
            ("json", "landing", True),
            ("csv", "lake", True),
            ("parquet", "kafka-main", False),
            ("text", "pg", False),
            ("delta", "lake", True),
            ("delta", "landing", False),
            ("iceberg", "lake", True),
            ("iceberg", "pg", False),
        ],
    )
    def test_an_input_format_fits_some_types_of_connection(
        self, input_format: str, connection: str, fits: bool
    ) -> None:
        job = job_with(input_format, "parquet", reads=f"{connection}:x", writes="landing:y")
        errors = dataset_errors(job, CONNECTIONS)
        assert (errors == []) == fits, errors
        assert all(error.path == "spec.pipeline.inputs[0].dataset" for error in errors)

    @pytest.mark.parametrize(
        ("output_format", "connection", "message"),
        [
            ("jdbc", "lake", "format jdbc needs a jdbc connection, but 'lake' is a lakehouse"),
            ("kafka", "pg", "format kafka needs a kafka connection, but 'pg' is a jdbc connection"),
            (
                "parquet",
                "kafka-main",
                "format parquet needs a files or lakehouse connection, but 'kafka-main' is a "
                "kafka connection",
            ),
            ("iceberg", "landing", "format iceberg needs a lakehouse connection, but 'landing'"),
        ],
    )
    def test_an_output_in_the_wrong_connection_says_what_fits(
        self, output_format: str, connection: str, message: str
    ) -> None:
        job = job_with("kafkajson", output_format, reads="kafka-main:x", writes=f"{connection}:y")
        errors = dataset_errors(job, CONNECTIONS)
        assert [error.path for error in errors] == ["spec.pipeline.outputs[0].dataset"]
        assert message in errors[0].message

    def test_paths_and_applications_without_a_pipeline_use_no_connections(self) -> None:
        for manifest in (pipeline_manifest("ticks"), python_manifest("app")):
            job = parse_manifest(manifest)
            assert dataset_errors(job, {}) == []
            assert connections_used(job) == set()
