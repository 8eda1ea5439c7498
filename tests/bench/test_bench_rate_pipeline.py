"""The pure parts of benchmark figures 2 and 3: the job they run, the commits they watch, the
lost/duplicated record check and the comparison of the two spark-submit commands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from bench.rate_pipeline import (
    OUTPUT,
    RatePaths,
    check_values,
    command_differences,
    commit_ids,
    job_manifest,
    wait_for_commit,
)
from bench.rate_sessions import BARE, STANDBY, STREAMJOBS, schedule


def test_every_kept_value_once_is_exact() -> None:
    check = check_values([4, 0, 2, 6])
    assert check.exact
    assert (check.rows, check.distinct, check.highest) == (4, 4, 6)


def test_missing_values_below_the_highest_are_lost_and_repeats_duplicated() -> None:
    check = check_values([0, 2, 2, 2, 8, 6])
    assert check.lost == 1  # 4
    assert check.duplicated == 2
    assert check.unexpected == 0
    assert not check.exact


def test_values_the_query_drops_are_unexpected() -> None:
    check = check_values([0, 1, 2])
    assert (check.lost, check.duplicated, check.unexpected) == (0, 0, 1)
    assert check_values([0, 1, 2, 3], kept=lambda value: True).exact


def test_an_empty_output_has_nothing_to_compare() -> None:
    check = check_values([])
    assert (check.rows, check.highest, check.lost) == (0, -1, 0)


def test_the_job_is_the_example_writing_into_the_run_directory(tmp_path: Path) -> None:
    paths = RatePaths(tmp_path)
    policy = {"type": "Always", "onFailureRetryInterval": 1}
    job = job_manifest(paths, policy)
    pipeline = job["spec"]["pipeline"]
    assert pipeline["streaming"]["triggerDuration"] == "1 second"
    assert pipeline["streaming"]["checkpointLocation"] == paths.checkpoint.as_uri()
    assert pipeline["outputs"][0]["path"] == paths.output.as_uri()
    assert job["spec"]["restartPolicy"] == policy
    assert paths.commits == tmp_path / "checkpoint" / OUTPUT / "commits"
    assert job_manifest(paths)["spec"]["restartPolicy"] == {"type": "OnFailure"}  # the example's


def test_commit_ids_skip_temporary_and_checksum_files(tmp_path: Path) -> None:
    assert commit_ids(tmp_path / "missing") == []
    for name in ("0", "1", "10", ".2.crc", ".3.9f1e.tmp"):
        (tmp_path / name).write_text("v1\n")
    assert commit_ids(tmp_path) == [0, 1, 10]


def test_the_first_commit_above_a_batch_is_timed_by_its_file(tmp_path: Path) -> None:
    for name in ("0", "1", "2"):
        (tmp_path / name).write_text("v1\n")
    os.utime(tmp_path / "2", (1000.0, 1234.5))
    commit = wait_for_commit(tmp_path, after=1, timeout=1)
    assert (commit.batch, commit.at) == (2, 1234.5)
    with pytest.raises(RuntimeError, match="no commit above batch 2"):
        wait_for_commit(tmp_path, after=2, timeout=0)
    with pytest.raises(RuntimeError, match="ended"):
        wait_for_commit(tmp_path, after=2, timeout=60, alive=lambda: False)


BARE_ARGV = [
    "/spark/bin/spark-submit",
    "--master",
    "local[1]",
    "--driver-memory",
    "1024m",
    "--conf",
    "spark.app.name=streamjobs:job",
    "--conf",
    "spark.ui.port=4041",
    "/src/streamjobs/runner/__main__.py",
    "--manifest",
    "/bench/job.yaml",
]


def test_commands_that_differ_in_the_ui_port_and_runner_flags() -> None:
    supervised = [
        "python",
        "-m",
        "streamjobs.launch.wrapper",
        "--exit-code-file",
        "/home/apps/a/1/exit-code",
        "--",
        *BARE_ARGV[:8],
        "spark.ui.port=4050",
        "/src/streamjobs/runner/__main__.py",
        "--manifest",
        "/home/apps/a/1/job.yaml",
        "--application-id",
        "a",
        "--stop-file",
        "/home/apps/a/1/stop",
    ]
    assert command_differences(BARE_ARGV, supervised) == [
        "--conf spark.ui.port: bare '4041', streamjobs '4050'",
        "runner flags of streamjobs only: --application-id --stop-file",
    ]


def test_a_setting_or_an_option_on_one_side_only_is_named() -> None:
    supervised = [*BARE_ARGV[:4], "2048m", "--conf", "spark.eventLog.enabled=true", *BARE_ARGV[5:]]
    assert command_differences(BARE_ARGV, supervised) == [
        "--conf spark.eventLog.enabled: bare None, streamjobs 'true'",
        "--driver-memory: bare '1024m', streamjobs '2048m'",
    ]
    assert command_differences(BARE_ARGV, BARE_ARGV) == []
    wrapper = ["python", "-I", "-m", "streamjobs.launch.wrapper", "--exit-code-file", "e", "--"]
    sandboxed = [*wrapper, "bwrap", "--unshare-pid", "--", "setpriv", "--", *BARE_ARGV]
    assert command_differences(BARE_ARGV, sandboxed) == []


def test_sessions_go_streamjobs_first_then_in_reverse_order() -> None:
    assert list(schedule(1)) == [(0, STREAMJOBS, 0), (0, STANDBY, 1), (0, BARE, 2)]
    assert [subject for _, subject, _ in schedule(2)] == [
        STREAMJOBS,
        STANDBY,
        BARE,
        BARE,
        STANDBY,
        STREAMJOBS,
    ]


def test_a_standby_job_asks_for_one_in_its_instance(tmp_path: Path) -> None:
    job = job_manifest(RatePaths(tmp_path), instance={"standby": True})
    assert job["spec"]["instance"] == {"standby": True}
    assert "instance" not in job_manifest(RatePaths(tmp_path))["spec"]
