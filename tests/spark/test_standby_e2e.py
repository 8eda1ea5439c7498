"""A job with a warm standby driver through a real server and real drivers: the standby is held
ready, promoted when the active driver is SIGKILLed (every value of the rate -> Parquet output
exactly once), replaced when it dies itself, re-attached with the active driver by a restarted
server, and ended with it by a stop."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from tests.e2e.test_applications import (
    drivers_of,
    rate_job,
    running_server,
    sigkill_driver,
    wait_for,
)

pytestmark = [pytest.mark.spark, pytest.mark.timeout(900)]


def test_a_standby_is_promoted_replaced_reattached_and_stopped(
    tmp_path: Path, spark: SparkSession
) -> None:
    job = rate_job(tmp_path)
    job["spec"]["instance"] = {"deployment": "singleNode", "standby": True}
    settings = {"STREAMJOBS_STANDBY_RETRY_SECONDS": "1"}
    home = tmp_path / "home"
    with running_server(tmp_path, settings=settings) as server, server.client() as api:
        assert api.put("/api/v1/jobs/rate-to-parquet", json=job).is_success
        app_id = api.post("/api/v1/jobs/rate-to-parquet/run").json()["id"]

        def application() -> dict[str, Any]:
            return api.get(f"/api/v1/applications/{app_id}").json()

        def committed(batch: int, attempt: int) -> Callable[[], bool]:
            def check() -> bool:
                latest = application()["latest"]
                return latest.get("attempt") == attempt and (latest.get("batchId") or -1) >= batch

            return check

        def ready_standby(attempt: int) -> Callable[[], bool]:
            def check() -> bool:
                standby = application()["standby"] or {}
                return standby.get("attempt") == attempt and standby.get("state") == "ready"

            return check

        wait_for("attempt 1 to commit", committed(1, 1), describe=lambda: str(application()))
        wait_for("a ready standby", ready_standby(2), describe=lambda: str(application()))
        active_pid = application()["attempts"][0]["pid"]

        killed_batch = application()["latest"]["batchId"]
        sigkill_driver(active_pid)
        wait_for("the promoted standby to commit", committed(killed_batch + 1, 2))
        app = application()
        assert app["restarts"] == 1
        promoted = app["attempts"][1]
        assert promoted["standby"]
        assert promoted["promotedAt"] is not None

        wait_for("a new standby behind it", ready_standby(3), describe=lambda: str(application()))
        sigkill_driver(application()["standby"]["pid"])
        wait_for("the dead standby replaced", ready_standby(4), describe=lambda: str(application()))

        server.kill()
        before = sorted(process.pid for process in drivers_of(home))
        server.start()
        batch = application()["latest"]["batchId"]
        wait_for("reports after the server restart", committed(batch + 2, 2))
        assert sorted(process.pid for process in drivers_of(home)) == before
        assert [attempt["number"] for attempt in application()["attempts"]] == [1, 2, 3, 4]
        assert application()["standby"]["attempt"] == 4

        assert api.post("/api/v1/jobs/rate-to-parquet/stop").status_code == 202
        wait_for("STOPPED", lambda: application()["state"] == "STOPPED")
        wait_for("no driver left", lambda: not drivers_of(home))
        assert application()["standby"] is None

    output = str(tmp_path / "data" / "out")
    values = [row.value for row in spark.read.parquet(output).select("value").collect()]
    assert len(values) == len(set(values)), "a value was written twice"
    assert sorted(values) == list(range(0, max(values) + 1, 2)), "a value was lost"
