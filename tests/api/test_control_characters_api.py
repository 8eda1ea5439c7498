"""No control characters in what users write (issue 20, item 1): a NUL in any string of a job or
connection manifest, keys included, or in a secret's value, is a 422 naming the field, on the
shared real server; the same text without it is accepted."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from tests.api.problems import error_paths
from tests.factories import changed, connection_manifest, console_manifest, python_manifest

JOBS = "/api/v1/jobs"
NUL = "\x00"


def _with_env(manifest: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    manifest["spec"]["configuration"] = {"env": env}
    return manifest


def _with_spark_conf(manifest: dict[str, Any], conf: dict[str, str]) -> dict[str, Any]:
    manifest["spec"]["configuration"] = {"sparkConf": conf}
    return manifest


JOB_CASES: dict[str, tuple[Any, str]] = {
    "name": (
        lambda name: changed(console_manifest(name), ("metadata.name", f"a{NUL}b")),
        "metadata.name",
    ),
    "description": (
        lambda name: changed(console_manifest(name), ("metadata.description", f"x{NUL}")),
        "metadata.description",
    ),
    "tag key": (
        lambda name: changed(console_manifest(name), ("metadata.tags", {f"team{NUL}": "x"})),
        'metadata.tags["team\\u0000"]',
    ),
    "tag value": (
        lambda name: changed(console_manifest(name), ("metadata.tags", {"team": f"a{NUL}"})),
        "metadata.tags.team",
    ),
    "env key": (
        lambda name: _with_env(console_manifest(name), {f"X{NUL}": "1"}),
        'spec.configuration.env["X\\u0000"]',
    ),
    "env value": (
        lambda name: _with_env(console_manifest(name), {"X": f"1{NUL}"}),
        "spec.configuration.env.X",
    ),
    "spark conf key": (
        lambda name: _with_spark_conf(console_manifest(name), {f"spark.x{NUL}": "1"}),
        'spec.configuration.sparkConf["spark.x\\u0000"]',
    ),
    "spark conf value": (
        lambda name: _with_spark_conf(
            console_manifest(name), {"spark.sql.shuffle.partitions": NUL}
        ),
        'spec.configuration.sparkConf["spark.sql.shuffle.partitions"]',
    ),
    "argument": (
        lambda name: changed(python_manifest(name), ("spec.application.arguments", ["--a", NUL])),
        "spec.application.arguments[1]",
    ),
    "application file": (
        lambda name: changed(
            python_manifest(name), ("spec.application.mainApplicationFile", f"local:///a{NUL}.py")
        ),
        "spec.application.mainApplicationFile",
    ),
    "sql": (
        lambda name: changed(
            console_manifest(name),
            ("spec.pipeline.steps[0].sequence[0].sql", f"SELECT *\nFROM ticks{NUL}"),
        ),
        "spec.pipeline.steps[0].sequence[0].sql",
    ),
    "input option": (
        lambda name: changed(
            console_manifest(name),
            ("spec.pipeline.inputs[0].options", {"rowsPerSecond": f"1{NUL}"}),
        ),
        "spec.pipeline.inputs[0].options.rowsPerSecond",
    ),
    "output path": (
        lambda name: changed(
            console_manifest(name),
            ("spec.pipeline.outputs[0]", {"name": "evens", "format": "parquet", "path": NUL}),
        ),
        "spec.pipeline.outputs[0].path",
    ),
    "java options": (
        lambda name: _with_java_options(console_manifest(name), f"-Xss4m{NUL}"),
        "spec.configuration.javaOptions",
    ),
    "jar": (
        lambda name: changed(
            console_manifest(name), ("spec.dependencies", {"jars": [f"file:///a{NUL}.jar"]})
        ),
        "spec.dependencies.jars[0]",
    ),
}


def _with_java_options(manifest: dict[str, Any], options: str) -> dict[str, Any]:
    manifest["spec"]["configuration"] = {"javaOptions": options}
    return manifest


@pytest.mark.parametrize("family", sorted(JOB_CASES))
def test_a_nul_in_a_job_manifest_is_refused_naming_the_field(
    api: httpx.Client, job_name: str, family: str
) -> None:
    build, path = JOB_CASES[family]
    manifest = build(job_name)

    created = api.post(JOBS, json=manifest)
    applied = api.put(f"{JOBS}/{job_name}", json=manifest)

    assert error_paths(created) == [path]
    assert error_paths(applied) == [path]
    assert api.get(f"{JOBS}/{job_name}").status_code == 404


@pytest.mark.parametrize(
    ("character", "where"),
    [("\x07", "spec.pipeline.steps[0].sequence[0].sql"), ("\x7f", "metadata.description")],
)
def test_other_control_characters_are_refused_too(
    api: httpx.Client, job_name: str, character: str, where: str
) -> None:
    manifest = changed(console_manifest(job_name), (where, f"text{character}"))

    assert error_paths(api.put(f"{JOBS}/{job_name}", json=manifest)) == [where]


def test_multi_line_fields_take_tabs_and_line_breaks(api: httpx.Client, job_name: str) -> None:
    manifest = changed(
        console_manifest(job_name),
        ("metadata.description", "first line\r\nsecond\tline"),
        ("spec.pipeline.steps[0].sequence[0].sql", "SELECT *\r\n\tFROM ticks\n"),
    )

    response = api.put(f"{JOBS}/{job_name}", json=manifest)

    assert response.status_code == 201, response.text


def test_a_line_break_in_a_single_line_field_is_refused(api: httpx.Client, job_name: str) -> None:
    manifest = _with_spark_conf(console_manifest(job_name), {"spark.app.name": "a\nb"})

    assert error_paths(api.put(f"{JOBS}/{job_name}", json=manifest)) == [
        'spec.configuration.sparkConf["spark.app.name"]'
    ]


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (("metadata.description", f"a{NUL}"), "metadata.description"),
        (("spec.bootstrapServers", f"broker:9092{NUL}"), "spec.bootstrapServers"),
        (("spec.options", {"kafka.security.protocol": f"SSL{NUL}"}), None),
        (("spec.options", {f"kafka.x{NUL}": "1"}), 'spec.options["kafka.x\\u0000"]'),
    ],
)
def test_a_nul_in_a_connection_manifest_is_refused_naming_the_field(
    api: httpx.Client, change: tuple[str, Any], path: str | None
) -> None:
    name = f"c-{uuid.uuid4().hex[:10]}"
    manifest = changed(connection_manifest(name), change)

    paths = error_paths(api.put(f"/api/v1/connections/{name}", json=manifest))

    assert paths == [path or 'spec.options["kafka.security.protocol"]']
    assert api.get(f"/api/v1/connections/{name}").status_code == 404


def test_a_nul_in_a_secret_value_is_refused(api: httpx.Client) -> None:
    name = f"s-{uuid.uuid4().hex[:10]}"
    secrets = "/api/v1/bundles/default/secrets"

    assert error_paths(api.put(f"{secrets}/{name}", json={"value": f"pass{NUL}word"})) == [
        "body.value"
    ]
    pem = "-----BEGIN CERTIFICATE-----\r\nMIIB\n-----END CERTIFICATE-----\n"
    assert api.put(f"{secrets}/{name}", json={"value": pem}).status_code == 201


def test_a_bundle_description_takes_lines_but_no_nul(api: httpx.Client) -> None:
    name = f"b-{uuid.uuid4().hex[:10]}"
    bundles = "/api/v1/bundles"

    refused = api.post(bundles, json={"name": name, "description": f"ours{NUL}"})
    assert error_paths(refused) == ["description"]
    assert api.get(f"{bundles}/{name}").status_code == 404
    created = api.post(bundles, json={"name": name, "description": "two\r\nlines\tand a tab"})
    assert created.status_code == 201, created.text
    changed = api.put(f"{bundles}/{name}", json={"description": f"x{NUL}"})
    assert error_paths(changed) == ["description"]
    assert api.get(f"{bundles}/{name}").json()["description"] == "two\r\nlines\tand a tab"
