"""``streamjobs admin resolve-jars``: what ``make run`` calls to resolve the examples' jars.

It runs on the server's machine without a server. Where a resolution runs it uses the real
Spark resolver, into a Maven repository and an Ivy directory of the test's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from streamjobs.cli.main import app
from tests.cli.conftest import write
from tests.factories import pipeline_manifest, python_manifest

NO_SUCH_PACKAGE = "org.example.streamjobs:no-such-connector_2.13:9.9.9"


@pytest.fixture
def caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STREAMJOBS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("STREAMJOBS_MAVEN_REPOSITORY", str(tmp_path / "m2"))
    monkeypatch.setenv("STREAMJOBS_IVY_DIRECTORY", str(tmp_path / "ivy"))
    return tmp_path


def python_job(*packages: str) -> dict[str, object]:
    manifest = python_manifest("uses-packages")
    manifest["spec"]["dependencies"] = {"packages": list(packages)}
    return manifest


def test_manifests_whose_jobs_need_no_jars_resolve_nothing(caches: Path) -> None:
    manifests = write(caches / "jobs.yaml", pipeline_manifest("ticks"))

    result = CliRunner().invoke(app, ["admin", "resolve-jars", str(manifests)])

    assert result.exit_code == 0, result.output
    assert "No job in these manifests needs connector jars." in result.output
    assert not (caches / "ivy").exists()


def test_an_invalid_manifest_is_named_and_nothing_is_resolved(caches: Path) -> None:
    broken = python_job("not a coordinate")
    manifests = write(caches / "broken.yaml", broken)

    result = CliRunner().invoke(app, ["admin", "resolve-jars", str(manifests)])

    assert result.exit_code == 2, result.output
    assert "broken.yaml: spec.dependencies.packages[0]" in result.output
    assert not (caches / "ivy").exists()


def test_a_missing_path_is_refused(caches: Path) -> None:
    result = CliRunner().invoke(app, ["admin", "resolve-jars", str(caches / "nowhere")])

    assert result.exit_code == 2, result.output
    assert "no such file or directory" in result.output


@pytest.mark.spark
def test_a_coordinate_that_does_not_exist_is_named_and_fails_unless_told_not_to(
    caches: Path,
) -> None:
    manifests = write(caches / "jobs.yaml", python_job(NO_SUCH_PACKAGE))

    failed = CliRunner().invoke(app, ["admin", "resolve-jars", str(manifests)])
    warned = CliRunner().invoke(app, ["admin", "resolve-jars", "--no-fail", str(manifests)])

    assert failed.exit_code == 1, failed.output
    assert f"==> uses-packages: 1 connector jar ({NO_SUCH_PACKAGE})" in failed.output
    assert f"failed: unresolved dependency {NO_SUCH_PACKAGE} (not found)" in failed.output
    assert warned.exit_code == 0, warned.output
    assert "failed: unresolved dependency" in warned.output
