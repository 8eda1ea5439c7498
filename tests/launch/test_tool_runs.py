"""Tool runs without Spark: the command line a tool starts with, how its answer is read, and a
tool killed at its timeout, with a stand-in for spark-submit (a shell script)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import psutil
import pytest
import yaml

from streamjobs.domain.spec import parse_manifest
from streamjobs.launch.command import Toolchain
from streamjobs.launch.tool_runs import (
    MAX_RESULT_BYTES,
    TOOL_DRIVER,
    SparkSubmitToolRunner,
    ToolRun,
    manifest_file,
    read_result,
    tool_command,
)
from tests.factories import pipeline_manifest
from tests.launch.conftest import TOOLCHAIN

pytestmark = pytest.mark.snapshots

SERVER_ENVIRONMENT = {"PATH": "/usr/bin:/bin", "STREAMJOBS_SECRET_KEY": "server-key"}


def tool_run(directory: Path, *arguments: str, **fields: object) -> ToolRun:
    manifest = pipeline_manifest("orders")
    manifest["spec"]["configuration"] = {"sparkConf": {"spark.sql.shuffle.partitions": "3"}}
    directory.mkdir(exist_ok=True)
    return ToolRun(
        tool="dry-run",
        job=parse_manifest(manifest),
        arguments=list(arguments),
        directory=directory,
        readable=[],
        writable=[],
        **fields,  # type: ignore[arg-type]
    )


def test_a_tool_starts_as_a_driver_would_with_the_tool_as_its_application(
    tmp_path: Path,
) -> None:
    run = tool_run(
        tmp_path / "run",
        "--checkpoint",
        "/copy",
        secrets={"KAFKA_PASSWORD": "pw"},
        spark_conf_secrets={"spark.hadoop.fs.s3a.secret.key": "s3-secret"},
    )

    command = tool_command(
        run, toolchain=TOOLCHAIN, base_environment=SERVER_ENVIRONMENT, driver=TOOL_DRIVER
    )

    argv = list(command.argv)
    assert argv[:5] == [
        str(TOOLCHAIN.spark_submit),
        "--master",
        "local[1]",
        "--driver-memory",
        "1024m",
    ]
    entry = argv.index(str(TOOLCHAIN.runner_entry.with_name("tool_main.py")))
    assert argv[entry + 1 :] == [
        "dry-run",
        "--result-file",
        str(run.result_file),
        "--checkpoint",
        "/copy",
    ]
    assert "spark.ui.enabled=false" in argv
    assert "spark.sql.shuffle.partitions=3" in argv
    assert argv[argv.index("--properties-file") + 1] == str(
        run.directory / "secret-conf.properties"
    )
    assert "s3-secret" not in " ".join(argv)
    assert command.environment["KAFKA_PASSWORD"] == "pw"
    assert "STREAMJOBS_SECRET_KEY" not in command.environment


def test_an_answer_is_read_only_from_a_regular_file_of_bounded_size(tmp_path: Path) -> None:
    answer = tmp_path / "result.json"
    answer.write_text(json.dumps({"compatible": True}))
    assert read_result(answer) == {"compatible": True}
    (tmp_path / "server.key").write_text(json.dumps({"key": "the server's"}))
    answer.unlink()
    answer.symlink_to(tmp_path / "server.key")
    assert read_result(answer) is None
    answer.unlink()
    answer.write_text("[1, 2]")
    assert read_result(answer) is None
    answer.write_text(" " * (MAX_RESULT_BYTES + 1))
    assert read_result(answer) is None
    assert read_result(tmp_path / "missing.json") is None


def stand_in(tmp_path: Path, script: str) -> Toolchain:
    """The installed toolchain with ``script`` in place of spark-submit."""
    program = tmp_path / "spark-submit"
    program.write_text("#!/bin/sh\n" + script)
    program.chmod(0o755)
    return Toolchain(
        spark_submit=program,
        python=TOOLCHAIN.python,
        runner_entry=TOOLCHAIN.runner_entry,
        maven_repository=TOOLCHAIN.maven_repository,
    )


def test_the_runner_writes_the_tools_files_and_reads_its_answer(tmp_path: Path) -> None:
    script = (
        'while [ "$1" != "--result-file" ]; do shift; done\n'
        'test -f "$(dirname "$2")/job.yaml" || exit 3\n'
        'echo \'{"compatible": true}\' > "$2"\n'
        "echo the tool says goodbye >&2\n"
    )
    runner = SparkSubmitToolRunner(toolchain=stand_in(tmp_path, script), environment={})
    run = tool_run(tmp_path / "run", "--manifest", str(manifest_file(tmp_path / "run")))

    result = runner.run(run)

    assert (result.exit_code, result.result, result.timed_out) == (0, {"compatible": True}, False)
    assert "the tool says goodbye" in result.stderr_tail
    written = yaml.safe_load(manifest_file(run.directory).read_text())
    assert written["metadata"]["name"] == "orders"


def test_a_tool_past_its_timeout_is_ended_with_its_whole_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = f"sleep 600 &\necho $! > {pid_file}\nwait\n"
    runner = SparkSubmitToolRunner(toolchain=stand_in(tmp_path, script), environment={})

    result = runner.run(tool_run(tmp_path / "run", timeout_seconds=2))

    assert result.timed_out
    assert (result.exit_code, result.result) == (None, None)
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while psutil.pid_exists(child) and psutil.Process(child).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the tool's child outlived the run"
        time.sleep(0.1)
    assert not (tmp_path / "run" / "secret-conf.properties").exists()
