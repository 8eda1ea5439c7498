"""Every place a job reads or writes, with its field, and the rules they keep: data under the
bundle's roots, never ``/``, nothing of the job's near the server's home."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.connections import Connection, parse_connection
from streamjobs.domain.errors import FieldError
from streamjobs.domain.job_locations import (
    Access,
    JobLocation,
    foreign_code_errors,
    job_locations,
    location_errors,
)
from streamjobs.domain.spec import parse_manifest
from tests.factories import changed, connection_manifest, pipeline_manifest, python_manifest

HOME = "file:///srv/streamjobs"
ROOT = f"{HOME}/checkpoints"
ROOTS = ("file:///data", "s3a://lake/pay")
CONNECTIONS: dict[str, Connection] = {
    name: parse_connection(connection_manifest(name, kind, **target))
    for name, kind, target in [
        ("files", "files", {"root": "file:///data/landing"}),
        ("elsewhere", "files", {"root": "file:///srv/other"}),
        ("lake", "lakehouse", {"warehouse": "s3a://lake/pay/warehouse"}),
        ("kafka-main", "kafka", {}),
        ("pg", "jdbc", {}),
    ]
}


def locations_of(manifest: dict[str, Any]) -> list[JobLocation]:
    return job_locations(
        parse_manifest(manifest, checkpoint_root=ROOT), CONNECTIONS, checkpoint_root=ROOT
    )


def errors_of(manifest: dict[str, Any], roots: tuple[str, ...] | None = ROOTS) -> list[FieldError]:
    return location_errors(
        locations_of(manifest), bundle="pay", roots=roots, protected_roots=[HOME]
    )


def pipeline(*changes: tuple[str, Any]) -> dict[str, Any]:
    """The factory's pipeline job writing under /data, with ``changes``."""
    return changed(
        pipeline_manifest("orders"), ("spec.pipeline.outputs[0].path", "/data/out"), *changes
    )


def test_every_location_is_listed_with_its_field_and_access() -> None:
    manifest = pipeline(
        (
            "spec.pipeline.inputs[0]",
            {"name": "a", "format": "json", "dataset": "files:in/a", "schema": "v STRING"},
        ),
        ("spec.pipeline.inputs[1]", {"name": "k", "format": "kafka", "dataset": "kafka-main:t"}),
        ("spec.pipeline.steps[0].sequence[0].sql", "SELECT value FROM text.`/data/x` JOIN a"),
        (
            "spec.pipeline.outputs[1]",
            {"name": "evens", "format": "iceberg", "dataset": "lake:db.t"},
        ),
        ("spec.pipeline.outputs[2]", {"name": "evens", "format": "jdbc", "dataset": "pg:t"}),
        ("spec.dependencies.pyFiles", ["file:///opt/lib/helpers.zip"]),
    )
    found = [(each.field, each.location, each.access) for each in locations_of(manifest)]
    assert found == [
        ("spec.pipeline.inputs[0].dataset", "file:///data/landing/in/a", Access.READ),
        ("spec.pipeline.outputs[0].path", "/data/out", Access.WRITE),
        ("spec.pipeline.outputs[1].dataset", "s3a://lake/pay/warehouse/db/t", Access.WRITE),
        (
            "spec.pipeline.streaming.checkpointLocation",
            f"{ROOT}/default/orders",
            Access.CHECKPOINT,
        ),
        ("spec.pipeline.steps[0].sequence[0].sql", "/data/x", Access.READ),
        ("spec.dependencies.pyFiles[0]", "file:///opt/lib/helpers.zip", Access.CODE),
    ]
    derived = [each for each in locations_of(manifest) if each.server_owned]
    assert [each.access for each in derived] == [Access.CHECKPOINT]


def test_a_job_within_its_roots_breaks_no_rule() -> None:
    manifest = pipeline(
        ("spec.pipeline.streaming.checkpointLocation", "s3a://lake/pay/checkpoints/orders"),
        ("spec.pipeline.steps[0].sequence[0].sql", "SELECT * FROM parquet.`/data/in` JOIN ticks"),
    )
    assert errors_of(manifest) == []


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            ("spec.pipeline.outputs[0].path", "/srv/out"),
            "spec.pipeline.outputs[0].path",
            "output 'evens' path file:///srv/out is outside the data roots of resource bundle "
            "'pay' (file:///data, s3a://lake/pay); a job's paths, datasets and checkpoints must "
            "lie under one",
        ),
        (
            ("spec.pipeline.outputs[0].path", "/data/../etc"),
            "spec.pipeline.outputs[0].path",
            "output 'evens' path file:///etc is outside the data roots",
        ),
        (
            ("spec.pipeline.outputs[0].path", "file:///"),
            "spec.pipeline.outputs[0].path",
            "output 'evens' path is / itself, the whole file system",
        ),
        (
            ("spec.pipeline.outputs[0].path", "out/evens"),
            "spec.pipeline.outputs[0].path",
            "output 'evens' path cannot be used: 'out/evens' is a relative path",
        ),
        (
            ("spec.pipeline.outputs[0].path", "/data/{a,../../etc}"),
            "spec.pipeline.outputs[0].path",
            "holds a glob with '/' inside braces",
        ),
        (
            ("spec.pipeline.inputs[0]", {"name": "ticks", "format": "text", "path": "/etc"}),
            "spec.pipeline.inputs[0].path",
            "input 'ticks' path file:///etc is outside the data roots",
        ),
        (
            (
                "spec.pipeline.inputs[0]",
                {"name": "ticks", "format": "text", "dataset": "elsewhere:in"},
            ),
            "spec.pipeline.inputs[0].dataset",
            "input 'ticks' dataset elsewhere:in file:///srv/other/in is outside the data roots "
            "of resource bundle 'pay' (file:///data, s3a://lake/pay); a job's paths, datasets "
            "and checkpoints must lie under one (connection 'elsewhere' has root "
            "file:///srv/other)",
        ),
        (
            ("spec.pipeline.streaming.checkpointLocation", "/var/cp/orders"),
            "spec.pipeline.streaming.checkpointLocation",
            "checkpointLocation file:///var/cp/orders is outside the data roots",
        ),
        (
            ("spec.pipeline.streaming.checkpointLocation", "file:///"),
            "spec.pipeline.streaming.checkpointLocation",
            "checkpointLocation is / itself",
        ),
        (
            ("spec.pipeline.streaming.checkpointLocation", f"{HOME}/checkpoints/default/other"),
            "spec.pipeline.streaming.checkpointLocation",
            "checkpointLocation file:///srv/streamjobs/checkpoints/default/other lies inside "
            "the server's own directory (STREAMJOBS_HOME), which jobs may not reach",
        ),
        (
            ("spec.pipeline.steps[0].sequence[0].sql", "SELECT value FROM text.`/etc/shadow`"),
            "spec.pipeline.steps[0].sequence[0].sql",
            "step 'evens' reads text.`/etc/shadow`: file:///etc/shadow is outside the data roots",
        ),
        (
            (
                "spec.pipeline.steps[0].sequence[0].sql",
                "SELECT * FROM IDENTIFIER(concat('text.`/etc', '/shadow`'))",
            ),
            "spec.pipeline.steps[0].sequence[0].sql",
            "step 'evens' reads IDENTIFIER(...): the path is computed by the query",
        ),
    ],
)
def test_a_location_that_breaks_a_rule_is_refused_at_its_field(
    change: tuple[str, Any], field: str, message: str
) -> None:
    (error,) = errors_of(pipeline(change))
    assert error.path == field
    assert message in error.message


def test_a_location_that_holds_the_servers_home_is_refused_even_under_the_roots() -> None:
    (error,) = location_errors(
        locations_of(pipeline(("spec.pipeline.outputs[0].path", "/srv"))),
        bundle="pay",
        roots=["file:///srv"],
        protected_roots=[HOME],
    )
    assert error.message == (
        "output 'evens' path file:///srv holds the server's own directory (STREAMJOBS_HOME), "
        "which jobs may not reach"
    )


def test_a_bundle_without_roots_allows_no_location_and_says_how_to_add_one() -> None:
    for roots in (None, ()):
        (error,) = errors_of(pipeline(), roots=roots)
        assert error.message == (
            "output 'evens' path file:///data/out cannot be used: resource bundle 'pay' has no "
            "data roots, so its jobs may read and write nowhere; those who manage bundles add "
            "one with `streamjobs set data-roots pay <uri>`"
        )


def test_the_derived_checkpoint_is_the_servers_and_not_checked() -> None:
    assert errors_of(pipeline()) == []
    (checkpoint,) = [each for each in locations_of(pipeline()) if each.access is Access.CHECKPOINT]
    assert checkpoint.server_owned
    assert checkpoint.location == f"{ROOT}/default/orders"


def test_code_files_need_no_root_but_may_not_be_near_the_home() -> None:
    manifest = changed(
        python_manifest(),
        ("spec.application.mainApplicationFile", f"{HOME}/apps/x/stolen.py"),
        ("spec.dependencies.jars", ["/opt/lib/ok.jar", "file:///"]),
    )
    errors = errors_of(manifest)
    assert [error.path for error in errors] == [
        "spec.application.mainApplicationFile",
        "spec.dependencies.jars[1]",
    ]
    assert errors[0].message == (
        "mainApplicationFile file:///srv/streamjobs/apps/x/stolen.py lies inside the server's "
        "own directory (STREAMJOBS_HOME), which jobs may not reach"
    )
    assert "holds the server's own directory" in errors[1].message


def test_jobs_without_file_system_locations_have_none() -> None:
    manifest = pipeline(
        (
            "spec.pipeline.inputs[0]",
            {"name": "ticks", "format": "kafka", "dataset": "kafka-main:t"},
        ),
        ("spec.pipeline.outputs[0]", {"name": "evens", "format": "console"}),
    )
    assert [each.access for each in locations_of(manifest)] == [Access.CHECKPOINT]
    local = changed(
        python_manifest(), ("spec.application.mainApplicationFile", "local:///app/j.py")
    )
    assert [each.location for each in locations_of(local)] == ["local:///app/j.py"]
    assert errors_of(local) == []


def test_code_files_may_not_come_from_another_bundles_data_roots() -> None:
    manifest = changed(
        python_manifest(),
        ("spec.application.mainApplicationFile", "/data/mine/job.py"),
        ("spec.dependencies.files", ["/data/theirs/out/part-0.parquet", "/opt/lib/x.txt"]),
    )
    locations = job_locations(parse_manifest(manifest), {}, checkpoint_root=None)
    others = {"theirs": ["file:///data/theirs"], "mine": ["file:///data/mine"]}

    errors = foreign_code_errors(locations, bundle="mine", roots_of_others=others)

    assert [error.path for error in errors] == ["spec.dependencies.files[0]"]
    assert "another bundle's data roots" in errors[0].message
    assert "theirs" not in errors[0].message.replace("/data/theirs", "")
