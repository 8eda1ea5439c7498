"""A job's stored secrets reach its real driver (LocalLauncher, spark-submit) through its
environment and a private properties file, and show in no command line of the driver's process
group and in none of its logs."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
from pathlib import Path

import psutil
import pytest
from fastapi.testclient import TestClient

from streamjobs.composition import server_over
from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.manifest import Deployment
from streamjobs.launch.attempt_directory import SECRET_CONF_FILE
from streamjobs.launch.base import DriverHandle
from streamjobs.services.container import Services, launchers_for, open_services
from streamjobs.settings import Settings
from streamjobs.supervisor.attempts import AttemptFactory
from tests.launch.conftest import Drivers, python_app_manifest, wait_until

pytestmark = [pytest.mark.spark, pytest.mark.usefixtures("java")]

ANA = Actor(Principal("ana", is_admin=True))
ENV_VALUE = "env-s3cret-7f1c9a"
CONF_VALUE = "conf s3cret=with:odd#chars!\\é"
SETTING = "spark.hadoop.fs.s3a.secret.key"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def group_of(handle: DriverHandle) -> list[psutil.Process]:
    """The live processes of the driver's group (spark-submit's short-lived helpers may linger
    as zombies: they hold nothing to read)."""
    members = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getpgid(process.pid) == handle.pid and process.status() != psutil.STATUS_ZOMBIE:
                members.append(process)
    return members


def test_stored_secrets_reach_the_driver_and_no_command_line_or_log(
    drivers: Drivers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAMJOBS_SECRET_KEY", base64.urlsafe_b64encode(os.urandom(32)).decode())
    settings = Settings(home=tmp_path / "home")
    services = open_services(settings, clock=FakeClock(), launchers=launchers_for(settings))
    services.secrets.put("default", "api-key", ENV_VALUE, actor=ANA)
    services.secrets.put("default", "s3-secret", CONF_VALUE, actor=ANA)
    # the driver sees its attempt directory (its working directory's parent), not tmp_path
    release = "../release"
    manifest = python_app_manifest(
        "probe",
        "secret_probe.py",
        "API_KEY",
        SETTING,
        release,
        configuration={
            "envSecrets": {"API_KEY": "api-key"},
            "sparkConfSecrets": {SETTING: "s3-secret"},
        },
    )
    services.jobs.create(manifest, actor=ANA)
    application = services.applications.run("probe", actor=ANA)
    factory = AttemptFactory(
        store=services.store,
        apps_directory=settings.apps_directory,
        public_url="http://127.0.0.1:1",
        secrets=services.secrets,
    )
    attempt = factory.spec_for(application, 1, "report-token")
    launcher = launchers_for(settings)[Deployment.SINGLE_NODE]
    handle = drivers.submit(launcher, attempt)
    with services.store.transaction() as repos:
        repos.applications.add_attempt(
            application.id,
            number=1,
            submitted_at=services.clock.now(),
            directory=handle.directory,
            pid=handle.pid,
            process_started_at=handle.started_at,
        )
    stdout = Path(handle.directory) / "stdout.log"
    wait_until(lambda: "conf " in stdout.read_text(), timeout=180, what="the probe's Spark conf")

    members = group_of(handle)
    assert len(members) >= 3  # the wrapper, spark-submit's JVM, the Python driver
    for process in members:
        command_line = Path(f"/proc/{process.pid}/cmdline").read_bytes()
        assert ENV_VALUE.encode() not in command_line, process.cmdline()
        assert CONF_VALUE.encode() not in command_line, process.cmdline()
    (driver,) = [p for p in members if "python" in Path(p.cmdline()[0]).name and p.children() == []]
    environment = Path(f"/proc/{driver.pid}/environ").read_bytes().split(b"\0")
    assert f"API_KEY={ENV_VALUE}".encode() in environment
    assert not any(CONF_VALUE.encode() in variable for variable in environment)
    assert not any(b"STREAMJOBS_SECRET_KEY" in variable for variable in environment)
    lines = stdout.read_text().splitlines()
    assert f"env {digest(ENV_VALUE)}" in lines
    assert f"conf {digest(CONF_VALUE)}" in lines
    for text in answers_of_every_get_route(services, "probe", application.id):
        assert ENV_VALUE not in text
        assert CONF_VALUE not in text

    (Path(handle.directory) / "release").touch()
    assert drivers.wait_exited(launcher, handle) == 0
    properties = Path(handle.directory) / SECRET_CONF_FILE
    assert properties.stat().st_mode & 0o777 == 0o600
    for path in Path(handle.directory).rglob("*"):
        if path != properties and path.is_file():
            content = path.read_bytes()
            assert ENV_VALUE.encode() not in content, path
            assert CONF_VALUE.encode() not in content, path
    assert "secret_probe done" in stdout.read_text()
    stored = b"".join(path.read_bytes() for path in settings.resolved_home.rglob("*.db*"))
    assert stored, "the SQLite store was not found"
    assert ENV_VALUE.encode() not in stored
    assert CONF_VALUE.encode() not in stored


def answers_of_every_get_route(services: Services, job: str, application_id: str) -> list[str]:
    """The body of every documented GET route of the API about the job and its application
    (its events and template among them), asked by an admin."""
    token = services.identity.bootstrap_admin().token
    client = TestClient(server_over(services, supervise=False).app)
    paths = client.app.openapi()["paths"]  # type: ignore[attr-defined]
    names = {"jobs": job, "bundles": "default", "users": "admin", "node-types": "small"}
    answers = []
    for template, operations in paths.items():
        if "get" not in operations or not template.startswith("/api"):
            continue
        collection = template.split("/")[3]
        if "{name}" in template and collection not in names:
            continue  # a connection: the job uses none
        if template.count("{") > 1:
            continue  # a snapshot or an upgrade of the job: it has none
        path = template.format(
            name=names.get(collection), application_id=application_id, bundle="default"
        )
        response = client.get(path, headers={"Authorization": f"Bearer {token}"})
        refused_state = template.endswith("/state") and response.status_code == 409
        assert response.status_code == 200 or refused_state, (path, response.text)
        answers.append(response.text)
    assert len(answers) >= 20
    return answers
