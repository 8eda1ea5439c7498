"""What `make run` does, as processes: bootstrap the admin, start the server with the examples
(their connections first, then the jobs that use them)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from streamjobs.launch.ports import free_loopback_port

EXAMPLES = Path(__file__).parents[2] / "examples"
STREAMJOBS = [sys.executable, "-m", "streamjobs.cli"]


@pytest.fixture
def home_env(tmp_path: Path, database_url: str) -> dict[str, str]:
    """The environment of a server on each store backend (SQLite file, PostgreSQL database)."""
    env = dict(os.environ)
    env.update(
        STREAMJOBS_HOME=str(tmp_path / "home"),
        STREAMJOBS_PORT=str(free_loopback_port()),
        STREAMJOBS_DATABASE_URL=database_url,
    )
    return env


def streamjobs(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*STREAMJOBS, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_bootstrap_prints_the_token_once_and_saves_it(home_env: dict[str, str]) -> None:
    first = streamjobs(home_env, "admin", "bootstrap")
    assert first.returncode == 0, first.stderr
    token_file = Path(home_env["STREAMJOBS_HOME"]) / "admin-token"
    token = token_file.read_text().strip()
    assert token in first.stdout
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600

    second = streamjobs(home_env, "admin", "bootstrap")
    assert second.returncode == 0
    assert token not in second.stdout
    assert "admin exists" in second.stdout


@pytest.fixture
def server(home_env: dict[str, str]) -> Iterator[str]:
    assert streamjobs(home_env, "admin", "bootstrap").returncode == 0
    process = subprocess.Popen(
        [*STREAMJOBS, "server", "--load-examples", str(EXAMPLES)],
        env=home_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{home_env['STREAMJOBS_PORT']}"
    try:
        wait_until_healthy(url, process)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def wait_until_healthy(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(
                f"the server exited: {process.stdout.read() if process.stdout else ''}"
            )
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError("the server did not become healthy in 60 s")


def test_the_server_serves_the_examples(server: str, home_env: dict[str, str]) -> None:
    token = (Path(home_env["STREAMJOBS_HOME"]) / "admin-token").read_text().strip()
    headers = {"Authorization": f"Bearer {token}"}
    listed = httpx.get(f"{server}/api/v1/jobs", headers=headers).json()
    jobs = [path for path in EXAMPLES.glob("*.yaml") if "kind: StreamingJob" in path.read_text()]
    assert listed["total"] >= len(jobs) >= 5
    # the jobs' datasets name these, so they were loaded first
    connections = httpx.get(f"{server}/api/v1/connections", headers=headers).json()
    assert [item["metadata"]["name"] for item in connections["items"]] == [
        "files",
        "kafka-main",
        "lakehouse",
        "warehouse-db",
    ]
    got = streamjobs(
        {**home_env, "STREAMJOBS_SERVER": server, "STREAMJOBS_TOKEN": token}, "get", "jobs"
    )
    assert got.returncode == 0, got.stderr
    assert len(got.stdout.strip().splitlines()) == listed["total"] + 1


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("STREAMJOBS_SESSION_LIFETIME_SECONDS", "-5", "Input should be greater than 0"),
        ("STREAMJOBS_PASSWORD_COST", "m=65536,t=3", "'m=65536,t=3' lacks p"),
        ("STREAMJOBS_PORT", "eighty", "Input should be a valid integer"),
    ],
)
def test_a_bad_setting_stops_the_server_saying_which_and_why(
    home_env: dict[str, str], variable: str, value: str, says: str
) -> None:
    refused = streamjobs({**home_env, variable: value}, "server")
    assert refused.returncode == 2
    assert f"error: {variable}: {says}" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_weak_password_cost_is_warned_about_when_the_server_starts(
    home_env: dict[str, str],
) -> None:
    weak = {**home_env, "STREAMJOBS_PASSWORD_COST": "m=1024,t=1,p=1"}
    process = subprocess.Popen(
        [*STREAMJOBS, "server"],
        env=weak,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        wait_until_healthy(f"http://127.0.0.1:{weak['STREAMJOBS_PORT']}", process)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert (
        "warning: STREAMJOBS_PASSWORD_COST m=1024,t=1,p=1 is below OWASP's recommended "
        "Argon2id costs" in output.replace("\n", " ")
    )
