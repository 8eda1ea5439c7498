"""A bundle's data roots and Spark setting policy through the CLI against a real server: given at
creation, shown by get and describe, replaced by ``set data-roots`` / ``set spark-conf`` (which
keep everything else, and start again from a fresh read when someone changed the bundle in
between); bad input exits 2 with the server's words and the field."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
import yaml
from typer.testing import CliRunner, Result

from streamjobs.cli.bundle_commands import _change_bundle
from tests.cli.conftest import run
from tests.cli.test_bundle_conflicts import ChangedAfterReads, client_with
from tests.conftest import RunningServer

BUNDLES = "/api/v1/bundles"


@pytest.fixture
def bundle(cli: CliRunner) -> str:
    """A bundle no other test uses, since the server is shared."""
    name = f"b-{uuid.uuid4().hex[:8]}"
    ok(run(cli, "create", "bundle", name, "--max-cores", "8"))
    return name


def ok(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


def refused(result: Result, message: str) -> None:
    assert result.exit_code == 2, result.output
    assert message in result.stderr, result.stderr


def shown(cli: CliRunner, bundle: str) -> dict[str, object]:
    document: dict[str, object] = json.loads(ok(run(cli, "get", "bundle", bundle, "-o", "json")))
    return document


def test_a_bundle_is_created_with_its_roots_and_spark_policy(cli: CliRunner) -> None:
    name = f"b-{uuid.uuid4().hex[:8]}"
    created = run(
        cli,
        *("create", "bundle", name, "--data-root", "/data/pay/", "--data-root", "s3a://lake/pay"),
        *("--allow-spark-conf", "spark.jars.repositories", "--refuse-spark-conf", "spark.sql.*"),
    )

    assert ok(created).strip() == f"bundle/{name} created"
    document = yaml.safe_load(ok(run(cli, "get", "bundle", name)))
    assert document["dataRoots"] == ["file:///data/pay", "s3a://lake/pay"]
    assert document["sparkConf"] == {
        "allowed": ["spark.jars.repositories"],
        "refused": ["spark.sql.*"],
    }
    described = ok(run(cli, "describe", "bundle", name))
    assert "Data roots:\n  file:///data/pay\n  s3a://lake/pay\n" in described
    assert "  allowed  spark.jars.repositories" in described
    assert "  refused  spark.sql.*" in described


def test_a_bundle_created_without_roots_says_it_has_none(cli: CliRunner, bundle: str) -> None:
    described = ok(run(cli, "describe", "bundle", bundle))

    assert "Data roots: none" in described
    assert "  allowed  -" in described


def test_set_data_roots_replaces_them_and_keeps_the_rest(cli: CliRunner, bundle: str) -> None:
    ok(run(cli, "set", "spark-conf", bundle, "--allow", "spark.jars.repositories"))

    said = ok(run(cli, "set", "data-roots", bundle, "/data/a", "file:///data/b/"))

    assert said.strip() == f"bundle/{bundle} data roots set: file:///data/a, file:///data/b"
    document = shown(cli, bundle)
    assert document["dataRoots"] == ["file:///data/a", "file:///data/b"]
    assert document["sparkConf"] == {"allowed": ["spark.jars.repositories"], "refused": []}
    assert document["quota"] == {"maxRunningApplications": None, "maxCores": 8, "maxMemoryMb": None}
    assert ok(run(cli, "set", "data-roots", bundle, "--none")).strip().endswith("set: none")
    assert shown(cli, bundle)["dataRoots"] == []


def test_set_spark_conf_replaces_both_lists(cli: CliRunner, bundle: str) -> None:
    ok(run(cli, "set", "data-roots", bundle, "/data/a"))
    ok(run(cli, "set", "spark-conf", bundle, "--allow", "spark.jars.repositories"))

    said = ok(
        run(cli, "set", "spark-conf", bundle, "--refuse", "spark.sql.*", "--refuse", "spark.x")
    )

    assert said.strip() == (
        f"bundle/{bundle} spark conf set: allowed none; refused spark.sql.*, spark.x"
    )
    document = shown(cli, bundle)
    assert document["sparkConf"] == {"allowed": [], "refused": ["spark.sql.*", "spark.x"]}
    assert document["dataRoots"] == ["file:///data/a"]
    ok(run(cli, "set", "spark-conf", bundle))
    assert shown(cli, bundle)["sparkConf"] == {"allowed": [], "refused": []}


def test_set_quota_keeps_the_roots_and_spark_policy(cli: CliRunner, bundle: str) -> None:
    ok(run(cli, "set", "data-roots", bundle, "/data/a"))
    ok(run(cli, "set", "spark-conf", bundle, "--refuse", "spark.sql.*"))

    ok(run(cli, "set", "quota", bundle, "--max-cores", "2"))

    document = shown(cli, bundle)
    assert document["dataRoots"] == ["file:///data/a"]
    assert document["sparkConf"] == {"allowed": [], "refused": ["spark.sql.*"]}


def test_bad_roots_and_settings_exit_2_naming_the_field(cli: CliRunner, bundle: str) -> None:
    ok(run(cli, "set", "data-roots", bundle, "/data/a"))

    refused(run(cli, "set", "data-roots", bundle, "/data/b", "relative"), "dataRoots[1]")
    refused(run(cli, "set", "data-roots", bundle, "/"), "whole file system")
    refused(run(cli, "set", "data-roots", bundle), "give the data roots")
    refused(run(cli, "set", "data-roots", bundle, "/data/b", "--none"), "not both")
    refused(run(cli, "set", "spark-conf", bundle, "--allow", "hadoop.x"), "sparkConf.allowed[0]")
    refused(run(cli, "create", "bundle", f"{bundle}-new", "--data-root", "data"), "relative path")
    refused(
        run(cli, "create", "bundle", f"{bundle}-new", "--refuse-spark-conf", "spark.*.x"),
        "sparkConf.refused[0]",
    )
    assert shown(cli, bundle)["dataRoots"] == ["file:///data/a"]
    assert run(cli, "get", "bundle", f"{bundle}-new").exit_code == 1


def test_a_quota_set_meanwhile_is_kept_by_set_data_roots(
    running_server: RunningServer, api: httpx.Client, bundle: str
) -> None:
    def another_admin_sets_a_quota() -> None:
        current = api.get(f"{BUNDLES}/{bundle}").json()
        body = {"quota": {**current["quota"], "maxCores": 3}, "dataRoots": ["/data/theirs"]}
        assert api.put(f"{BUNDLES}/{bundle}", json=body).status_code == 200

    transport = ChangedAfterReads(another_admin_sets_a_quota, times=1)
    with client_with(running_server, transport) as client:
        _change_bundle(client, bundle, {"dataRoots": ["/data/mine"]})

    assert transport.sent == [("GET", 200), ("PUT", 409), ("GET", 200), ("PUT", 200)]
    document = api.get(f"{BUNDLES}/{bundle}").json()
    assert (document["quota"]["maxCores"], document["dataRoots"]) == (3, ["file:///data/mine"])
