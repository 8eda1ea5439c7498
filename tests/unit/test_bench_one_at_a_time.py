"""Figure 4's one-at-a-time run against a real server: every request answered, one after another."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from bench.control_plane_store import job_manifest, seed
from bench.figure_control_plane import QUICK, run_one_at_a_time
from bench.server_process import ServerProcess


def test_the_mix_goes_one_request_at_a_time_and_all_are_answered(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    url = f"sqlite:///{home / 'streamjobs.db'}"
    seeded = seed(home, url, jobs=3, applications_per_job=2, log=lambda _: None)
    jobs_file = tmp_path / "jobs.json"
    jobs_file.write_text(json.dumps({"names": seeded.names, "manifest": job_manifest("x")}))
    plan = replace(QUICK, one_at_a_time=40)
    with ServerProcess(home, database_url=url, supervisor=False) as server:
        summary = run_one_at_a_time(server, plan, jobs_file, tmp_path)
    recorded = json.loads((tmp_path / "load-one-at-a-time.json").read_text())
    assert (summary.requests, summary.errors) == (40, 0)
    assert recorded["connections"] == 1
    ends = [request[3] for request in recorded["requests"]]
    assert ends == sorted(ends)
    last_scheduled = max(request[1] for request in recorded["requests"])
    assert last_scheduled < 0.05 < ends[-1]
    assert summary.achieved_rate == pytest.approx(40 / ends[-1])
