"""The spark-submit command line and environment of an attempt, checked without running them."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from streamjobs.domain.connections import parse_connection
from streamjobs.domain.manifest import StreamingJob
from streamjobs.domain.spec import parse_manifest
from streamjobs.launch.attempt_directory import CONNECTIONS_FILE, MANIFEST_FILE, attempt_files
from streamjobs.launch.base import AttemptSpec, LaunchFailed, NodeSize
from streamjobs.launch.command import (
    DriverCommand,
    Toolchain,
    local_path,
    master_for,
    paths_to_check,
    spark_settings,
    spark_submit_command,
    wrapped,
)
from streamjobs.runner.__main__ import parse_args
from streamjobs.runner.main import load_connections, load_job
from tests.factories import (
    changed,
    connection_manifest,
    dataset_job_manifest,
    jvm_manifest,
    pipeline_manifest,
    python_manifest,
)
from tests.launch.conftest import attempt_for

TOOLCHAIN = Toolchain(
    spark_submit=Path("/opt/pyspark/bin/spark-submit"),
    python="/venv/bin/python",
    runner_entry=Path("/src/streamjobs/runner/__main__.py"),
    maven_repository=Path("/home/me/.m2/repository"),
)
ATTEMPT_DIR = Path("/home/me/.streamjobs/apps/app-0001/1")
CLUSTER = "spark://10.0.0.5:7077"


def command_for(
    attempt: AttemptSpec, *, master: str = "local[1]", environment: dict[str, str] | None = None
) -> DriverCommand:
    return spark_submit_command(
        attempt,
        master=master,
        ui_port=4555,
        toolchain=TOOLCHAIN,
        base_environment=environment or {"PATH": "/usr/bin"},
    )


def option_values(argv: tuple[str, ...], option: str) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == option]


def conf_of(argv: tuple[str, ...]) -> dict[str, str]:
    return dict(value.split("=", 1) for value in option_values(argv, "--conf"))


def standard(manifest: dict[str, Any], **instance: Any) -> dict[str, Any]:
    return changed(manifest, ("spec.instance", {"deployment": "standard", **instance}))


def test_a_single_node_pipeline_runs_the_runner_on_local_cores() -> None:
    attempt = attempt_for(
        pipeline_manifest("ticks"), ATTEMPT_DIR, driver=NodeSize(cores=2, memory_mb=2048)
    )
    argv = command_for(attempt, master=master_for(attempt.job, attempt.driver, None)).argv

    assert argv[0] == "/opt/pyspark/bin/spark-submit"
    assert option_values(argv, "--master") == ["local[2]"]
    assert "--deploy-mode" not in argv
    assert option_values(argv, "--driver-memory") == ["2048m"]
    conf = conf_of(argv)
    assert conf["spark.driver.cores"] == "2"
    assert conf["spark.ui.enabled"] == "true"
    assert conf["spark.ui.port"] == "4555"
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert conf["spark.app.name"] == "streamjobs:ticks"
    assert "spark.executor.cores" not in conf
    runner_at = argv.index("/src/streamjobs/runner/__main__.py")
    assert list(argv[runner_at + 1 :]) == [
        *("--manifest", f"{ATTEMPT_DIR}/job.yaml"),
        *("--application-id", "app-0001"),
        *("--stop-file", f"{ATTEMPT_DIR}/stop"),
        *("--snapshot-request-file", f"{ATTEMPT_DIR}/snapshot-request"),
        *("--snapshot-directory", f"{ATTEMPT_DIR}/snapshots"),
    ]
    assert conf["spark.scheduler.mode"] == "FAIR"


def test_a_pipeline_that_reports_reads_its_token_from_a_file_and_its_connections() -> None:
    kafka = parse_connection(connection_manifest("kafka-main"))
    attempt = attempt_for(
        dataset_job_manifest("orders", reads="kafka-main:orders"),
        ATTEMPT_DIR,
        connections=(kafka,),
        report_url="http://127.0.0.1:8000/api/v1/reports",
        report_token="s3cret-token",
    )
    argv = command_for(attempt).argv

    assert option_values(argv, "--connections") == [f"{ATTEMPT_DIR}/connections.yaml"]
    assert option_values(argv, "--report-url") == ["http://127.0.0.1:8000/api/v1/reports"]
    assert option_values(argv, "--report-token-file") == [f"{ATTEMPT_DIR}/report-token"]
    assert not any("s3cret-token" in arg for arg in argv)
    assert "spark-sql-kafka" in conf_of(argv)["spark.jars.packages"]


def test_a_held_restart_tells_the_runner_when_its_queries_may_start() -> None:
    due = datetime(2026, 11, 24, 15, 0, 5, 250000, tzinfo=UTC)
    argv = command_for(attempt_for(pipeline_manifest(), ATTEMPT_DIR, hold_until=due)).argv
    assert option_values(argv, "--hold-until") == ["2026-11-24T15:00:05.250000+00:00"]
    runner_argv = argv[argv.index(str(TOOLCHAIN.runner_entry)) + 1 :]
    assert parse_args(runner_argv).hold_until == due
    assert "--hold-until" not in command_for(attempt_for(pipeline_manifest(), ATTEMPT_DIR)).argv


@pytest.mark.parametrize(
    ("value", "words"),
    [("tomorrow", "is not an ISO 8601 time"), ("2026-11-24T15:00:05", "has no UTC offset")],
)
def test_the_runner_refuses_a_hold_it_cannot_read(
    value: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(["--manifest", "job.yaml", "--hold-until", value])
    assert exited.value.code == 2
    assert words in capsys.readouterr().err


def test_a_python_job_runs_its_file_as_a_local_path_with_its_arguments() -> None:
    manifest = changed(python_manifest("py"), ("spec.application.arguments", ["--day", "1"]))
    argv = command_for(attempt_for(manifest, ATTEMPT_DIR)).argv

    assert argv[-3:] == ("/app/job.py", "--day", "1")
    assert "--class" not in argv


def test_a_jvm_job_names_its_class_before_its_jar() -> None:
    manifest = changed(jvm_manifest("jvm"), ("spec.application.arguments", ["x"]))
    argv = command_for(attempt_for(manifest, ATTEMPT_DIR)).argv

    assert argv[-4:] == ("--class", "com.example.Job", "/opt/jobs/app.jar", "x")


def test_local_and_file_schemes_become_paths() -> None:
    assert local_path("local:///app/job.py") == "/app/job.py"
    assert local_path("file:///my%20jobs/app.jar") == "/my jobs/app.jar"
    assert local_path("relative/job.py") == "relative/job.py"
    assert local_path("spark-internal") == "spark-internal"


def test_a_standard_job_runs_in_client_mode_with_sized_executors() -> None:
    attempt = attempt_for(
        standard(python_manifest("py"), executor="medium", executors=3),
        ATTEMPT_DIR,
        executor=NodeSize(cores=2, memory_mb=4096),
    )
    argv = command_for(attempt, master=master_for(attempt.job, attempt.driver, CLUSTER)).argv

    assert option_values(argv, "--master") == [CLUSTER]
    assert option_values(argv, "--deploy-mode") == ["client"]
    conf = conf_of(argv)
    assert conf["spark.executor.cores"] == "2"
    assert conf["spark.executor.memory"] == "4096m"
    assert conf["spark.cores.max"] == "6"
    assert "spark.dynamicAllocation.enabled" not in conf


def test_dynamic_allocation_makes_the_executor_count_a_maximum() -> None:
    attempt = attempt_for(
        standard(python_manifest("py"), executors=4, dynamic=True),
        ATTEMPT_DIR,
        executor=NodeSize(cores=1, memory_mb=1024),
    )
    conf = conf_of(command_for(attempt, master=CLUSTER).argv)

    assert conf["spark.dynamicAllocation.enabled"] == "true"
    assert conf["spark.dynamicAllocation.shuffleTracking.enabled"] == "true"
    assert conf["spark.dynamicAllocation.maxExecutors"] == "4"
    assert conf["spark.cores.max"] == "4"


def test_a_standard_job_needs_a_cluster_and_an_executor_size() -> None:
    attempt = attempt_for(standard(python_manifest("py")), ATTEMPT_DIR)
    with pytest.raises(LaunchFailed, match="standard"):
        master_for(attempt.job, attempt.driver, None)
    with pytest.raises(LaunchFailed, match="executor"):
        command_for(attempt, master=CLUSTER)


def test_secrets_reach_the_environment_only() -> None:
    manifest = changed(
        python_manifest("py"),
        ("spec.configuration.env", {"TZ": "UTC"}),
        ("spec.configuration.envSecrets", {"API_KEY": "payments-api-key"}),
    )
    attempt = attempt_for(manifest, ATTEMPT_DIR, secrets={"API_KEY": "very-secret-value"})
    command = command_for(attempt, environment={"PATH": "/usr/bin", "HOME": "/home/me"})

    assert not any("very-secret-value" in arg for arg in command.argv)
    assert command.environment["API_KEY"] == "very-secret-value"
    assert command.environment["TZ"] == "UTC"
    assert command.environment["PATH"] == "/usr/bin"
    assert command.environment["PYSPARK_PYTHON"] == "/venv/bin/python"
    assert command.environment["PYSPARK_DRIVER_PYTHON"] == "/venv/bin/python"
    assert command.environment["SPARK_HOME"] == "/opt/pyspark"
    assert command.environment["SPARK_LOCAL_IP"] == "127.0.0.1"


def test_dependencies_and_java_options_are_passed_on() -> None:
    manifest = changed(
        python_manifest("py"),
        (
            "spec.dependencies",
            {
                "jars": ["/opt/lib/extra.jar"],
                "files": ["/etc/job/settings.conf", "file:///etc/job/other.conf"],
                "pyFiles": ["/opt/lib/helpers.zip"],
                "packages": ["com.example:thing_2.13:1.0.0"],
            },
        ),
        ("spec.configuration.javaOptions", "-XX:+UseG1GC -Duser.timezone=UTC"),
    )
    argv = command_for(attempt_for(manifest, ATTEMPT_DIR)).argv
    conf = conf_of(argv)

    assert option_values(argv, "--files") == ["/etc/job/settings.conf,file:///etc/job/other.conf"]
    assert option_values(argv, "--py-files") == ["/opt/lib/helpers.zip"]
    assert conf["spark.jars"] == "/opt/lib/extra.jar"
    assert conf["spark.jars.packages"] == "com.example:thing_2.13:1.0.0"
    assert option_values(argv, "--driver-java-options") == ["-XX:+UseG1GC -Duser.timezone=UTC"]
    assert conf["spark.executor.extraJavaOptions"] == "-XX:+UseG1GC -Duser.timezone=UTC"
    assert paths_to_check(attempt_for(manifest, ATTEMPT_DIR).job) == [
        "/app/job.py",
        "/opt/lib/extra.jar",
        "/etc/job/settings.conf",
        "/etc/job/other.conf",
        "/opt/lib/helpers.zip",
    ]


def test_the_operators_java_options_come_first_and_no_job_replaces_them() -> None:
    """The server's ``driver_java_options`` are Spark's administrators' options: before the
    job's own, and a stored job that names the setting (validation refuses it) does not win."""
    operator = replace(TOOLCHAIN, driver_java_options="-XX:SharedArchiveFile=/opt/spark.jsa")
    manifest = changed(
        python_manifest("py"),
        ("spec.configuration.javaOptions", "-Duser.timezone=UTC"),
        ("spec.configuration.sparkConf", {"spark.driver.defaultJavaOptions": "-javaagent:x.jar"}),
    )
    attempt = replace(
        attempt_for(python_manifest("py"), ATTEMPT_DIR),
        job=StreamingJob.model_validate(manifest),
    )
    argv = spark_submit_command(
        attempt,
        master="local[1]",
        ui_port=4555,
        toolchain=operator,
        base_environment={"PATH": "/usr/bin"},
    ).argv

    assert (
        conf_of(argv)["spark.driver.defaultJavaOptions"] == "-XX:SharedArchiveFile=/opt/spark.jsa"
    )
    assert option_values(argv, "--driver-java-options") == ["-Duser.timezone=UTC"]
    assert "spark.driver.defaultJavaOptions" not in conf_of(command_for(attempt).argv)


def test_a_cluster_mode_driver_gets_no_options_of_this_host() -> None:
    """A cluster-mode driver runs on a worker, where this host's files (an archive) are not."""
    operator = replace(TOOLCHAIN, driver_java_options="-XX:SharedArchiveFile=/opt/spark.jsa")
    attempt = attempt_for(
        standard(python_manifest("py"), executor="medium", deployMode="cluster"),
        ATTEMPT_DIR,
        executor=NodeSize(cores=1, memory_mb=1024),
    )
    settings = dict(spark_settings(attempt, master=CLUSTER, ui_port=0, toolchain=operator))
    assert "spark.driver.defaultJavaOptions" not in settings


def test_the_jobs_spark_conf_applies_but_cannot_move_what_the_server_owns() -> None:
    """Validation refuses ``spark.ui.port``; a job stored before that rule still cannot move it."""
    manifest = changed(
        python_manifest("py"),
        (
            "spec.configuration.sparkConf",
            {"spark.sql.shuffle.partitions": "8", "spark.ui.port": "4040"},
        ),
    )
    unvalidated = StreamingJob.model_validate(manifest)
    attempt = replace(attempt_for(python_manifest("py"), ATTEMPT_DIR), job=unvalidated)
    conf = conf_of(command_for(attempt).argv)

    assert conf["spark.sql.shuffle.partitions"] == "8"
    assert conf["spark.ui.port"] == "4555"


def test_the_command_runs_under_the_wrapper() -> None:
    command = DriverCommand(argv=("spark-submit", "app.py"), environment={})
    assert wrapped(command, python="/venv/bin/python", exit_code_file=Path("/a/exit-code")) == (
        "/venv/bin/python",
        *("-I", "-m", "streamjobs.launch.wrapper", "--exit-code-file", "/a/exit-code"),
        *("--", "spark-submit", "app.py"),
    )


def test_the_files_written_for_the_runner_parse_back(tmp_path: Path) -> None:
    lake = parse_connection(connection_manifest("lake", "lakehouse"))
    kafka = parse_connection(
        connection_manifest("kafka-main", secretOptions={"kafka.sasl.jaas.config": "kafka-jaas"})
    )
    manifest = dataset_job_manifest("orders", reads="kafka-main:orders", writes="lake:raw/orders")
    attempt = attempt_for(manifest, tmp_path, connections=(kafka, lake))
    for name, content in attempt_files(attempt).items():
        (tmp_path / name).write_text(content)

    assert load_job(str(tmp_path / MANIFEST_FILE), checkpoint_root=None) == attempt.job
    assert load_connections(str(tmp_path / CONNECTIONS_FILE)) == {"kafka-main": kafka, "lake": lake}
    documents = list(yaml.safe_load_all((tmp_path / CONNECTIONS_FILE).read_text()))
    assert documents[0]["spec"]["secretOptions"] == {"kafka.sasl.jaas.config": "kafka-jaas"}
    assert parse_manifest(yaml.safe_load((tmp_path / MANIFEST_FILE).read_text())) == attempt.job


def test_the_installed_toolchain_is_pysparks_spark_submit_and_this_runner() -> None:
    toolchain = Toolchain.installed()
    assert toolchain.spark_submit.name == "spark-submit"
    assert toolchain.spark_submit.is_file()
    assert toolchain.runner_entry.match("streamjobs/runner/__main__.py")
