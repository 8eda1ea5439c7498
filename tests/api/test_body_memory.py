"""Large bodies cost the server no memory (issue 20, item 2): 200 MB streamed to the routes that
read bodies, without a token or past their limit, against a server process whose RSS is sampled
throughout; before, an 800 MB report took the server to 1.7 GB.

The server runs as its own process so that its RSS is its own, not the test session's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import psutil
import pytest

from streamjobs.launch.ports import free_loopback_port
from streamjobs.services.container import open_services
from streamjobs.settings import Settings
from tests.api.problems import problem_of

STREAMED_BYTES = 200 * 1024 * 1024
CHUNK = b"[" * (1024 * 1024)
MAX_SERVER_RSS = 300 * 1024 * 1024


@dataclass(frozen=True)
class ServerProcess:
    url: str
    pid: int
    token: str
    password: str


@pytest.fixture(scope="module")
def server_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    home = tmp_path_factory.mktemp("memory-home")
    services = open_services(Settings(home=home, checkpoint_root="file:///checkpoints"))
    bootstrap = services.identity.bootstrap_admin()
    services.store.close()
    assert bootstrap.token is not None
    assert bootstrap.password is not None
    port = free_loopback_port()
    env = dict(
        os.environ,
        STREAMJOBS_HOME=str(home),
        STREAMJOBS_PORT=str(port),
        STREAMJOBS_CHECKPOINT_ROOT="file:///checkpoints",
        STREAMJOBS_SUPERVISOR="false",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "streamjobs.cli", "server"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process)
        yield ServerProcess(url, process.pid, bootstrap.token, bootstrap.password)
    finally:
        process.terminate()
        process.wait(timeout=30)


def _wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            assert process.stderr is not None
            pytest.fail(f"the server exited: {process.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    pytest.fail("the server did not start within 60 s")


class PeakMemory:
    """Samples a process's RSS from a background thread while a block runs."""

    def __init__(self, pid: int) -> None:
        self._process = psutil.Process(pid)
        self._stop = threading.Event()
        self.peak = self._process.memory_info().rss
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._process.memory_info().rss)


def streamed_body() -> Iterator[bytes]:
    """``STREAMED_BYTES`` of text, sent in chunks (no Content-Length: transfer-encoding chunked)."""
    for _ in range(STREAMED_BYTES // len(CHUNK)):
        yield CHUNK


def post_streamed(server: ServerProcess, path: str, headers: dict[str, str]) -> httpx.Response:
    """POST a streamed 200 MB body to ``path``, the server's RSS sampled throughout."""
    with PeakMemory(server.pid) as memory, httpx.Client(base_url=server.url, timeout=120) as client:
        response = client.post(path, content=streamed_body(), headers=headers)
    assert memory.peak < MAX_SERVER_RSS, f"the server's RSS reached {memory.peak >> 20} MiB"
    return response


def test_a_report_without_a_valid_token_is_refused_before_its_body_is_read(
    server_process: ServerProcess,
) -> None:
    path = "/api/v1/applications/not-an-application/reports"
    anonymous = post_streamed(server_process, path, {"Content-Type": "application/json"})
    assert "Bearer" in problem_of(anonymous, 401)["detail"]

    bogus = {"Content-Type": "application/json", "Authorization": "Bearer anything-at-all"}
    problem = problem_of(post_streamed(server_process, path, bogus), 401)
    assert "token" in problem["detail"]


def test_a_large_api_body_is_refused_once_past_the_limit(server_process: ServerProcess) -> None:
    headers = {"Authorization": f"Bearer {server_process.token}"}
    problem = problem_of(post_streamed(server_process, "/api/v1/jobs", headers), 413)
    assert problem["errors"] == [
        {"path": "body", "message": "larger than 1048576 bytes (max_body_bytes)"}
    ]


def test_an_api_write_without_credentials_is_refused_before_its_body_is_read(
    server_process: ServerProcess,
) -> None:
    response = post_streamed(server_process, "/api/v1/connections", {})
    problem_of(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"


def test_the_pipeline_check_reads_no_more_than_its_limit(server_process: ServerProcess) -> None:
    with httpx.Client(base_url=server_process.url, timeout=30) as browser:
        signed_in = browser.post(
            "/signin", data={"user": "admin", "password": server_process.password}
        )
        assert signed_in.status_code == 303, signed_in.text
        page = browser.get("/jobs").text
        found = re.search(r'<meta name="csrf-token" content="([^"]+)"', page)
        assert found is not None
        cookies = "; ".join(f"{name}={value}" for name, value in browser.cookies.items())
    headers = {
        "Content-Type": "application/json",
        "X-CSRF-Token": found.group(1),
        "Cookie": cookies,
    }
    response = post_streamed(server_process, "/jobs/validate-pipeline", headers)
    problem = problem_of(response, 413)
    assert problem["errors"] == [
        {"path": "body", "message": "larger than 262144 bytes (max_pipeline_check_body_bytes)"}
    ]
