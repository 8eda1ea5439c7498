"""A hostile job author against a real server: UPDATE and RUN on one bundle, nothing else.

Mallory may create jobs in her bundle ``mallory`` (its data root is her own directory); another
bundle, ``victim``, holds a secret and a job. Every route that worked before isolation is tried:
pipeline SQL reading the server's home, ``/etc`` and another job's checkpoint; an overwrite
output and checkpoints aimed where they must not be; a python program (a real driver, in its
sandbox) that tries to read the key, the store, the admin token, ``/proc/*/environ`` and other
applications' files, and to write outside its roots. Each is refused by validation or fails in
the sandbox; afterwards nothing secret is in anything Mallory can read, and every file of the
server's home is as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamjobs.launch.ports import free_loopback_port
from tests.e2e.test_applications import Server, drivers_of, wait_for
from tests.e2e.test_server_process import streamjobs

pytestmark = pytest.mark.spark
PROBE = Path(__file__).parents[1] / "launch" / "apps" / "sandbox_probe.py"
VICTIM_SECRET = "victim-database-password-4711"
HOME_FILES = ("secret.key", "admin-token", "admin-password")


class World:
    """The server, the admin's client, Mallory's client and the places that matter."""

    def __init__(self, server: Server, root: Path) -> None:
        self.server = server
        self.home = Path(server.env["STREAMJOBS_HOME"])
        self.admin = server.client()
        self.mallory_data = root / "mallory-data"
        self.victim_data = root / "victim-data"
        (self.victim_data / "checkpoint").mkdir(parents=True)
        (self.victim_data / "checkpoint" / "metadata").write_text('{"id": "victim"}')
        self.mallory = self._mallory()

    def _mallory(self) -> httpx.Client:
        admin = self.admin
        for bundle, data in (("mallory", self.mallory_data), ("victim", self.victim_data)):
            created = admin.post(
                "/api/v1/bundles", json={"name": bundle, "dataRoots": [data.as_uri()]}
            )
            assert created.status_code == 201, created.text
        secret = admin.put(
            "/api/v1/bundles/victim/secrets/db-password", json={"value": VICTIM_SECRET}
        )
        assert secret.status_code == 201, secret.text
        user = admin.post(
            "/api/v1/users", json={"name": "mallory", "kind": "user", "password": "pw-mallory-1"}
        )
        assert user.status_code == 201, user.text
        assert admin.put("/api/v1/permissions/CREATE_JOB/user:mallory").status_code < 300
        granted = admin.put(
            "/api/v1/bundles/mallory/grants",
            json={"grants": [{"subject": "user:mallory", "permissions": ["UPDATE", "RUN"]}]},
        )
        assert granted.status_code == 200, granted.text
        token = admin.post("/api/v1/users/mallory/tokens", json={"name": "t"}).json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        return httpx.Client(base_url=self.server.url, headers=headers, timeout=30)

    def home_digests(self) -> dict[str, str]:
        return {
            name: hashlib.sha256((self.home / name).read_bytes()).hexdigest()
            for name in HOME_FILES
            if (self.home / name).exists()
        }

    def secrets(self) -> list[str]:
        values = [VICTIM_SECRET]
        values += [(self.home / name).read_text().strip() for name in HOME_FILES]
        return [value for value in values if value]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    env = dict(os.environ)
    env.update(
        STREAMJOBS_HOME=str(tmp_path / "home"),
        STREAMJOBS_PORT=str(free_loopback_port()),
    )
    env.pop("STREAMJOBS_DATABASE_URL", None)
    assert streamjobs(env, "admin", "bootstrap").returncode == 0
    token = (tmp_path / "home" / "admin-token").read_text().strip()
    server = Server(env=env, url=f"http://127.0.0.1:{env['STREAMJOBS_PORT']}", token=token)
    server.start()
    try:
        yield World(server, tmp_path)
    finally:
        server.kill()
        for process in drivers_of(tmp_path / "home"):
            os.killpg(process.pid, signal.SIGKILL)


def pipeline(name: str, *, sql: str = "SELECT value FROM ticks", **output: Any) -> dict[str, Any]:
    """A rate pipeline in Mallory's bundle; ``output`` and ``checkpointLocation`` as given."""
    checkpoint = output.pop("checkpointLocation", None)
    streaming: dict[str, Any] = {"triggerMode": "ProcessingTime", "triggerDuration": "1 second"}
    if checkpoint:
        streaming["checkpointLocation"] = checkpoint
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": name},
        "spec": {
            "bundle": "mallory",
            "application": {"type": "pipeline"},
            "pipeline": {
                "streaming": streaming,
                "inputs": [{"name": "ticks", "format": "rate", "options": {"rowsPerSecond": 1}}],
                "steps": [{"sequence": [{"name": "loot", "sql": sql}]}],
                "outputs": [{"name": "loot", "format": "parquet", **output}],
            },
            "processing": {"guarantee": "AT_LEAST_ONCE"},
        },
    }


def refused_at(response: httpx.Response, field: str) -> str:
    assert response.status_code in (409, 422), response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    paths = [error.get("path", "") for error in body.get("errors", [])]
    assert any(path.startswith(field) for path in paths) or field in body.get("detail", ""), body
    return response.text


def test_a_hostile_job_author_reaches_nothing_beyond_her_bundle(world: World) -> None:
    mallory, home = world.mallory, world.home
    before = world.home_digests()
    victim = pipeline("victim-job", path=(world.victim_data / "out").as_uri())
    victim["spec"]["bundle"] = "victim"
    victim["spec"]["pipeline"]["streaming"]["checkpointLocation"] = (
        world.victim_data / "checkpoint"
    ).as_uri()
    assert world.admin.put("/api/v1/jobs/victim-job", json=victim).status_code == 201
    own_output = (world.mallory_data / "out").as_uri()

    reads = {
        "home": f"SELECT value FROM text.`{home / 'admin-token'}`",
        "etc": "SELECT value FROM text.`/etc/shadow`",
        "checkpoint": f"SELECT * FROM binaryFile.`{world.victim_data / 'checkpoint'}`",
    }
    for what, sql in reads.items():
        manifest = pipeline(f"read-{what}", sql=sql, path=own_output)
        answer = mallory.put(f"/api/v1/jobs/read-{what}", json=manifest)
        refused_at(answer, "spec.pipeline.steps[0].sequence[0].sql")
    refused_at(
        mallory.put("/api/v1/jobs/wipe", json=pipeline("wipe", path=home.as_uri())),
        "spec.pipeline.outputs[0]",
    )
    for name, checkpoint in (
        ("steal-checkpoint", (world.victim_data / "checkpoint").as_uri()),
        ("home-checkpoint", (home / "checkpoints").as_uri()),
        ("root-checkpoint", "file:///"),
    ):
        answer = mallory.put(
            f"/api/v1/jobs/{name}",
            json=pipeline(name, path=own_output, checkpointLocation=checkpoint),
        )
        refused_at(answer, "spec.pipeline.streaming.checkpointLocation")
    env_job = pipeline("preload", path=own_output)
    env_job["spec"]["configuration"] = {"env": {"LD_PRELOAD": "/tmp/evil.so"}}
    refused_at(mallory.put("/api/v1/jobs/preload", json=env_job), "spec.configuration.env")
    stolen = pipeline("steal-secret", path=own_output)
    stolen["spec"]["configuration"] = {"envSecrets": {"LOOT": "db-password"}}
    assert mallory.put("/api/v1/jobs/steal-secret", json=stolen).status_code == 201
    assert mallory.get("/api/v1/jobs/victim-job").status_code == 404

    report = world.mallory_data / "report.json"
    probe = _probe_job(world, report)
    assert mallory.put("/api/v1/jobs/probe", json=probe).status_code == 201, "probe refused"
    application = mallory.post("/api/v1/jobs/probe/run").json()["id"]
    wait_for("the probe to finish", lambda: _ended(mallory, application))
    results = json.loads(report.read_text())

    assert results["uid"] != 0
    assert set(results["reads"].values()) <= {"FileNotFoundError", "PermissionError"}, results
    assert results["writes"].pop(str(world.mallory_data / "mine.txt")) == "ok"
    assert "ok" not in results["writes"].values(), results
    assert len(results["pids"]) < 10
    assert not [name for name in results["environment"] if name.startswith("STREAMJOBS_")]

    secret_run = mallory.post("/api/v1/jobs/steal-secret/run")
    assert secret_run.status_code == 409, secret_run.text  # refused at Run: not in its bundle
    assert "secret 'db-password' does not exist in resource bundle" in secret_run.json()["detail"]

    answers = [secret_run.text] + [
        mallory.get(route).text
        for route in (
            "/api/v1/jobs",
            "/api/v1/applications",
            f"/api/v1/applications/{application}",
            f"/api/v1/applications/{application}/events",
            f"/api/v1/applications/{application}/logs?instance=driver",
            f"/api/v1/applications/{application}/logs?instance=driver-stdout",
            "/api/v1/bundles/mallory/secrets",
        )
    ]
    for secret in world.secrets():
        assert not [answer for answer in answers if secret in answer]
    assert world.home_digests() == before
    assert world.admin.get("/api/v1/bundles/victim/secrets").json()


def _probe_job(world: World, report: Path) -> dict[str, Any]:
    home = world.home
    targets = [
        home / "secret.key",
        home / "streamjobs.db",
        home / "admin-token",
        Path("/proc/1/environ"),
        Path(f"/proc/{world.server.process.pid if world.server.process else 1}/environ"),
        world.victim_data / "checkpoint" / "metadata",
    ]
    reads = [item for target in targets for item in ("--read", str(target))]
    writes = [
        *("--write", str(world.mallory_data / "mine.txt")),
        *("--write", str(world.victim_data / "planted.txt")),
        *("--write", str(home / "planted.txt")),
        *("--write", "/etc/planted"),
    ]
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": "probe"},
        "spec": {
            "bundle": "mallory",
            "application": {
                "type": "python",
                "mainApplicationFile": PROBE.as_uri(),
                "arguments": [str(report), *reads, *writes],
            },
        },
    }


def _ended(client: httpx.Client, application: str) -> dict[str, Any] | None:
    answer = client.get(f"/api/v1/applications/{application}").json()
    if answer["state"] in ("COMPLETED", "FAILED", "ABORTED", "STOPPED", "SUSPENDED"):
        return dict(answer)
    time.sleep(0.5)
    return None
