"""Two real ``streamjobs server`` processes on one store (``tests.two_servers``).

On one PostgreSQL store: exactly one leads; when it is SIGKILLed the other takes over within the
lease plus 5 s, keeps the running pipeline's one driver, and restarts it by its policy when it
fails later; a leader paused (SIGSTOP) past its lease cannot write when it is continued (its
writes are refused, and its console says so). On one SQLite store, a second server refuses to
supervise, and a restart right after a crash supervises at once.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_applications import rate_job, sigkill_driver
from tests.two_servers import STREAMJOBS, drivers_under, servers_on, wait_until

LEASE_SECONDS = 4.0
WAIT_SECONDS = 240.0
"""How long a pipeline may take to start or restart on a busy machine."""
REFUSED = "a write was refused because another server leads now"


def commits_of(checkpoint: Path) -> int:
    """How many micro-batches the pipeline's queries have committed to their checkpoints."""
    return sum(
        1
        for commits in checkpoint.glob("*/commits")
        for entry in commits.iterdir()
        if entry.name.isdigit()
    )


@pytest.mark.postgres
@pytest.mark.spark
def test_the_standby_takes_over_from_a_killed_leader_and_keeps_its_driver(
    postgres_url: str, tmp_path: Path
) -> None:
    with servers_on(tmp_path, postgres_url, lease_seconds=LEASE_SECONDS) as servers:
        alpha, beta = servers["alpha"], servers["beta"]
        alpha.start()
        wait_until("alpha to lead", lambda: alpha.role() == "leader", seconds=30)
        beta.start()
        assert servers.leaders() == ["alpha"]
        assert beta.role() == "standby"
        assert beta.health()["leader"] == {"name": "alpha", "url": alpha.url}

        with beta.client(servers.token) as api:  # every server serves the API
            application = run_rate_job(api, tmp_path)
            wait_until(
                "the pipeline to commit batches",
                application.batch_at_least(2, 1),
                seconds=WAIT_SECONDS,
            )
            (driver,) = drivers_under([alpha.home, beta.home])
            checkpoint = tmp_path / "data" / "checkpoint"

            alpha.kill()
            wait_until("beta to lead", lambda: beta.role() == "leader", seconds=LEASE_SECONDS + 5)
            assert beta.health()["leader"] == {"name": "beta", "url": beta.url}
            committed = commits_of(checkpoint)
            wait_until(
                "the pipeline to go on committing",
                lambda: commits_of(checkpoint) > committed + 2,
                seconds=WAIT_SECONDS,
            )
            assert [process.pid for process in drivers_under([alpha.home, beta.home])] == [
                driver.pid
            ]
            app = application.read()
            assert (app["state"], len(app["attempts"])) == ("RUNNING", 1)

            # A later failure is the new leader's to restart, by the job's policy (Always).
            sigkill_driver(driver.pid)
            wait_until(
                "the restarted attempt to commit",
                application.batch_at_least(0, 2),
                seconds=WAIT_SECONDS,
            )
            app = application.read()
            assert app["restarts"] == 1
            assert [attempt["outcome"] for attempt in app["attempts"]] == ["failed", None]
            (restarted,) = drivers_under([alpha.home, beta.home])
            assert str(beta.home) in " ".join(restarted.cmdline()), "beta started it"


@pytest.mark.postgres
def test_a_paused_leader_cannot_write_once_another_leads(postgres_url: str, tmp_path: Path) -> None:
    with servers_on(tmp_path, postgres_url, lease_seconds=LEASE_SECONDS) as servers:
        alpha, beta = servers["alpha"], servers["beta"]
        alpha.start()
        wait_until("alpha to lead", lambda: alpha.role() == "leader", seconds=30)
        beta.start()
        assert beta.role() == "standby"

        alpha.pause()
        # The lease runs out; if alpha stopped inside a transaction, the database ends it.
        wait_until("beta to lead", lambda: beta.role() == "leader", seconds=3 * LEASE_SECONDS + 5)
        alpha.resume()

        wait_until("alpha's refused write", lambda: REFUSED in alpha.console_text(), seconds=30)
        wait_until("alpha to stand by", lambda: alpha.role() == "standby", seconds=30)
        assert servers.leaders() == ["beta"]
        assert alpha.health()["leader"] == {"name": "beta", "url": beta.url}
        console = alpha.console_text()
        assert "beta (" + beta.url + ") holds it under token 2" in console
        assert "alpha stops supervising" in console


def test_a_second_server_on_one_sqlite_store_refuses_to_supervise(tmp_path: Path) -> None:
    database_url = f"sqlite:///{tmp_path / 'store' / 'streamjobs.db'}"

    def apart(name: str) -> dict[str, str]:
        return {"STREAMJOBS_SUPERVISOR": "false"} if name == "gamma" else {}

    with servers_on(tmp_path, database_url, ("alpha", "beta", "gamma"), env=apart) as servers:
        alpha, beta, gamma = servers["alpha"], servers["beta"], servers["gamma"]
        alpha.start()
        wait_until("alpha to lead", lambda: alpha.role() == "leader", seconds=30)

        refused = subprocess.run(
            [*STREAMJOBS, "server"],
            env=beta.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert refused.returncode != 0
        said = " ".join(refused.stderr.split())
        assert alpha.process is not None
        assert (
            f"another server (pid {alpha.process.pid} at {alpha.url}, named alpha) runs the "
            "supervisor of the SQLite store"
        ) in said
        assert "SQLite is single-server" in said
        assert "STREAMJOBS_DATABASE_URL" in said
        assert "STREAMJOBS_SUPERVISOR=false" in said

        gamma.start()  # without a supervisor, it serves beside alpha
        assert gamma.health()["role"] == "none"
        assert gamma.health()["leader"] == {"name": "alpha", "url": alpha.url}

        alpha.kill()  # a crash: the kernel lets go of its lock
        alpha.start()
        wait_until("alpha to lead again", lambda: alpha.role() == "leader", seconds=30)


class RateApplication:
    """The rate -> parquet pipeline's application, read over the API."""

    def __init__(self, api: httpx.Client, application_id: str) -> None:
        self.api = api
        self.id = application_id

    def read(self) -> dict[str, Any]:
        answer: dict[str, Any] = self.api.get(f"/api/v1/applications/{self.id}").json()
        return answer

    def batch_at_least(self, batch: int, attempt: int) -> Callable[[], bool]:
        def check() -> bool:
            app = self.read()
            latest = app["latest"]
            return (
                app["state"] == "RUNNING"
                and latest.get("attempt") == attempt
                and (latest.get("batchId") or -1) >= batch
            )

        return check


def run_rate_job(api: httpx.Client, tmp_path: Path) -> RateApplication:
    assert api.put("/api/v1/jobs/rate-to-parquet", json=rate_job(tmp_path)).is_success
    started = api.post("/api/v1/jobs/rate-to-parquet/run")
    assert started.status_code == 201, started.text
    return RateApplication(api, started.json()["id"])
