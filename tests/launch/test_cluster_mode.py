"""Cluster deploy mode on a real Spark standalone cluster: drivers submitted through the master's
REST submission server run on a worker, are followed, stopped and killed by submission id, found
again by a new launcher, and their logs are read from the workers over HTTP."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from streamjobs.composition import Server, build_server
from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.failure_causes import failure_cause
from streamjobs.domain.manifest import Deployment
from streamjobs.domain.states import AppState
from streamjobs.http.documents import attempt_document
from streamjobs.launch.base import (
    DriverHandle,
    DriverHealth,
    DriverState,
    LaunchFailed,
    NodeSize,
)
from streamjobs.launch.cluster import DRIVER_LOG_TAILS, KILLED_EXIT_CODE
from streamjobs.launch.cluster_request import PYTHON_RUNNER, submission_request
from streamjobs.launch.driver_process import LAUNCH_FILE
from streamjobs.launch.local import LocalLauncher
from streamjobs.launch.ports import free_loopback_port
from streamjobs.launch.rest_submission import REST_URL_SETTING, RestSubmissionClient
from streamjobs.launch.spark_ui import read_executors
from streamjobs.launch.standalone import StandaloneLauncher
from streamjobs.launch.worker_logs import WorkerLog
from streamjobs.settings import Settings
from streamjobs.store import AttemptRecord
from tests.factories import pipeline_manifest
from tests.launch.conftest import (
    TOOLCHAIN,
    Drivers,
    StandaloneCluster,
    attempt_for,
    python_app_manifest,
    wait_until,
)
from tests.launch.test_local_launcher import parquet_files, ticks_to_parquet

DRIVER = NodeSize(cores=1, memory_mb=512)
EXECUTOR = NodeSize(cores=1, memory_mb=512)
CLUSTER_INSTANCE = {
    "deployment": "standard",
    "deployMode": "cluster",
    "executor": "tiny",
    "executors": 1,
}


def cluster_launcher(cluster: StandaloneCluster) -> StandaloneLauncher:
    """A launcher that reads every log over HTTP (no worker directories given), as a server
    whose workers are on other hosts does."""
    return StandaloneLauncher(
        toolchain=TOOLCHAIN,
        master_url=cluster.master_url,
        rest_url=cluster.rest_url,
        master_web_url=cluster.web_url,
    )


def cluster_app(name: str, *arguments: str) -> dict[str, Any]:
    return python_app_manifest(name, "exit_with.py", *arguments, instance=CLUSTER_INSTANCE)


def located(launcher: StandaloneLauncher, handle: DriverHandle) -> DriverHandle | None:
    """The handle with the driver's worker host and UI port once both are known."""
    assert launcher.poll(handle).state is DriverState.RUNNING, "the driver ended"
    found = launcher.locate(handle)
    return found if found.ui_port and found.driver_host else None


def driver_state(cluster: StandaloneCluster, handle: DriverHandle) -> str | None:
    assert handle.submission_id is not None
    return RestSubmissionClient(cluster.rest_url).status(handle.submission_id).driver_state


@pytest.mark.spark
def test_a_cluster_mode_pipeline_runs_on_a_worker_and_a_new_launcher_stops_it(
    drivers: Drivers, standalone_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    launcher = cluster_launcher(standalone_cluster)
    manifest = ticks_to_parquet(tmp_path)
    manifest["spec"]["instance"] = CLUSTER_INSTANCE
    attempt = attempt_for(
        manifest, tmp_path / "attempt", driver=DRIVER, executor=EXECUTOR, fence="fence-1"
    )
    handle = drivers.submit(launcher, attempt)

    assert handle.pid == 0
    assert handle.submission_id is not None
    assert handle.master == standalone_cluster.master_url
    launch = json.loads((tmp_path / "attempt" / LAUNCH_FILE).read_text())
    assert launch["submission_id"] == handle.submission_id
    running = wait_until(
        lambda: located(launcher, handle), timeout=180, what="the driver's UI on its worker"
    )
    assert running.driver_host == "127.0.0.1"
    wait_until(lambda: parquet_files(tmp_path / "out"), timeout=180, what="parquet files")
    figures = wait_until(lambda: read_executors(running), timeout=60, what="the driver's REST API")
    assert figures.spark_application_id.startswith("app-")

    logs = wait_until(
        lambda: (found := launcher.log_sources(running)).get("executor-0") and found,
        timeout=60,
        what="the executor's log",
    )
    assert {"driver", "driver-stdout", "executor-0", "executor-0-stdout"} <= set(logs)
    assert all(isinstance(source, WorkerLog) for source in logs.values())
    driver_log = logs["driver"].read_range(0, 200_000)
    assert b"Successfully started service 'SparkUI'" in driver_log
    assert any("Executor" in line for line in logs["executor-0"].tail_lines(10_000))

    restarted = cluster_launcher(standalone_cluster)
    assert restarted.poll(handle).state is DriverState.RUNNING
    recovered = restarted.recover(tmp_path / "attempt", "fence-1")
    assert isinstance(recovered, DriverHandle)
    assert recovered.submission_id == handle.submission_id
    restarted.stop(handle)
    assert drivers.wait_exited(restarted, handle) == 0
    assert driver_state(standalone_cluster, handle) == "FINISHED"
    assert list((tmp_path / "checkpoint").rglob("commits/0"))
    assert not (tmp_path / "attempt" / DRIVER_LOG_TAILS["driver"]).exists()
    after_the_driver = restarted.log_sources(handle)  # now from the workers' own lists
    assert {"driver", "executor-0", "executor-0-stdout"} <= set(after_the_driver)
    assert after_the_driver["executor-0"].size() > 0


@pytest.mark.spark
def test_abort_kills_a_cluster_mode_driver(
    drivers: Drivers, standalone_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    launcher = cluster_launcher(standalone_cluster)
    manifest = cluster_app("waits", "0", str(tmp_path / "never"))
    handle = drivers.submit(
        launcher, attempt_for(manifest, tmp_path / "a", driver=DRIVER, executor=EXECUTOR)
    )

    def started() -> bool:
        assert launcher.poll(handle).state is DriverState.RUNNING
        stdout = launcher.log_sources(handle).get("driver-stdout")
        return stdout is not None and "exit_with starting" in stdout.tail_text()

    wait_until(started, timeout=180, what="the program to start on its worker")
    launcher.abort(handle)
    assert drivers.wait_exited(launcher, handle) == KILLED_EXIT_CODE
    assert driver_state(standalone_cluster, handle) == "KILLED"
    kept = (tmp_path / "a" / DRIVER_LOG_TAILS["driver-stdout"]).read_text()
    assert "exit_with starting" in kept
    launcher.abort(handle)
    launcher.kill(handle)
    assert launcher.poll(handle).exit_code == KILLED_EXIT_CODE


@pytest.mark.spark
def test_a_failed_cluster_mode_driver_leaves_its_code_and_the_ends_of_its_logs(
    drivers: Drivers, standalone_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    launcher = cluster_launcher(standalone_cluster)
    handle = drivers.submit(
        launcher,
        attempt_for(cluster_app("fails", "3"), tmp_path / "a", driver=DRIVER, executor=EXECUTOR),
    )

    assert drivers.wait_exited(launcher, handle) == 3
    assert driver_state(standalone_cluster, handle) == "FAILED"
    directory = tmp_path / "a"
    stderr = (directory / DRIVER_LOG_TAILS["driver"]).read_text()
    stdout = (directory / DRIVER_LOG_TAILS["driver-stdout"]).read_text()
    assert "exit_with exiting 3" in stdout
    assert failure_cause(stderr, stdout) is not None
    assert "exit_with exiting 3" in launcher.log_sources(handle)["driver-stdout"].tail_text()


def test_an_unreachable_rest_server_is_a_launch_failure_naming_its_setting(
    tmp_path: Path,
) -> None:
    launcher = StandaloneLauncher(
        master_url="spark://127.0.0.1:7077",
        rest_url=f"http://127.0.0.1:{free_loopback_port()}",
        toolchain=TOOLCHAIN,
    )
    attempt = attempt_for(
        cluster_app("nowhere", "0"), tmp_path / "a", driver=DRIVER, executor=EXECUTOR
    )

    with pytest.raises(LaunchFailed, match=REST_URL_SETTING):
        launcher.submit(attempt)
    assert launcher.recover(tmp_path / "a", attempt.fence) == DriverHealth(DriverState.EXITED)


def test_a_master_that_does_not_answer_leaves_a_cluster_driver_running(tmp_path: Path) -> None:
    launcher = StandaloneLauncher(
        master_url="spark://127.0.0.1:7077",
        rest_url=f"http://127.0.0.1:{free_loopback_port()}",
        master_web_url=f"http://127.0.0.1:{free_loopback_port()}",
    )
    handle = launcher.cluster.handle(tmp_path, "driver-20260101000000-0001")

    assert launcher.poll(handle).state is DriverState.RUNNING
    assert launcher.locate(handle) == handle
    launcher.abort(handle)
    launcher.kill(handle)
    assert launcher.log_sources(handle) == {}


def test_a_cluster_mode_job_needs_a_standalone_master(tmp_path: Path) -> None:
    attempt = attempt_for(
        cluster_app("no-cluster", "0"), tmp_path / "a", driver=DRIVER, executor=EXECUTOR
    )

    with pytest.raises(LaunchFailed, match="standalone master"):
        LocalLauncher().submit(attempt)
    assert not (tmp_path / "a").exists()


def test_spark_settings_from_secrets_are_refused_in_cluster_mode(tmp_path: Path) -> None:
    attempt = attempt_for(
        cluster_app("conf-secret", "0"),
        tmp_path / "a",
        driver=DRIVER,
        executor=EXECUTOR,
        spark_conf_secrets={"spark.hadoop.fs.s3a.secret.key": "s3cr3t"},
    )

    with pytest.raises(LaunchFailed, match=r'sparkConfSecrets\["spark\.hadoop\.fs\.s3a\.secret'):
        submission_request(
            attempt, master="spark://m:7077", toolchain=TOOLCHAIN, spark_version="4.1.4"
        )


def test_a_python_program_is_submitted_to_spark_s_python_runner(tmp_path: Path) -> None:
    manifest = cluster_app("runner", "0", "x")
    manifest["spec"]["configuration"] = {"env": {"TZ": "UTC"}, "envSecrets": {"KEY": "key"}}
    attempt = attempt_for(
        manifest, tmp_path / "a", driver=DRIVER, executor=EXECUTOR, secrets={"KEY": "value"}
    )

    request = submission_request(
        attempt, master="spark://m:7077", toolchain=TOOLCHAIN, spark_version="4.1.4"
    )

    program = str(Path(__file__).parent / "apps" / "exit_with.py")
    assert request.main_class == PYTHON_RUNNER
    assert request.app_resource == Path(program).as_uri()
    assert list(request.app_args) == [program, "", "0", "x"]
    properties = request.spark_properties
    assert properties["spark.master"] == "spark://m:7077"
    assert properties["spark.submit.deployMode"] == "cluster"
    assert properties["spark.app.name"] == "streamjobs:runner"
    assert properties["spark.driver.memory"] == "512m"
    assert properties["spark.pyspark.python"] == TOOLCHAIN.python
    assert not {"spark.ui.port", "spark.driver.host", "spark.driver.bindAddress"} & set(properties)
    assert request.environment_variables == {
        "TZ": "UTC",
        "KEY": "value",
        "PYSPARK_PYTHON": TOOLCHAIN.python,
        "PYSPARK_DRIVER_PYTHON": TOOLCHAIN.python,
    }
    assert "value" not in json.dumps(properties)


ADMIN = Actor(Principal("admin", is_admin=True))


def cluster_server(cluster: StandaloneCluster, home: Path) -> Server:
    """A server with a supervisor over ``home``'s store whose standard jobs go to ``cluster``."""
    settings = Settings(
        home=home,
        public_url="http://127.0.0.1:1",
        heartbeat_timeout_seconds=600,
        spark_master=cluster.master_url,
        spark_master_rest_url=cluster.rest_url,
        spark_master_web_url=cluster.web_url,
    )
    launchers = {
        Deployment.SINGLE_NODE: LocalLauncher(toolchain=TOOLCHAIN),
        Deployment.STANDARD: cluster_launcher(cluster),
    }
    return build_server(settings, launchers=launchers, supervise=True)


def ticked_until(
    server: Server, application_id: str, done: Callable[[AttemptRecord], bool], what: str
) -> AttemptRecord:
    """Tick the server's supervisor until the application's latest attempt is ``done``."""
    assert server.supervisor is not None

    def latest() -> AttemptRecord | None:
        server.supervisor.run_once()  # type: ignore[union-attr]
        attempts = server.services.applications.get(application_id, actor=ADMIN).attempts
        found = attempts[-1] if attempts and done(attempts[-1]) else None
        if found is None:
            time.sleep(0.5)
        return found

    return wait_until(latest, timeout=240, what=what)


@pytest.mark.spark
def test_the_supervisor_follows_a_cluster_mode_pipeline_across_a_server_restart(
    standalone_cluster: StandaloneCluster, tmp_path: Path
) -> None:
    name = f"cluster-{uuid.uuid4().hex[:8]}"
    manifest = pipeline_manifest(name, instance={**CLUSTER_INSTANCE, "driver": "tiny"})
    manifest["spec"]["pipeline"]["streaming"] = {"triggerDuration": "1 second"}
    submitted: list[str] = []
    try:
        server = cluster_server(standalone_cluster, tmp_path / "home")
        try:
            application_id, attempt = run_until_located(server, manifest, submitted)
            logs = server.services.logs
            instances = wait_until(
                lambda: (
                    (found := logs.instances(application_id, actor=ADMIN)).get("executor-0")
                    and found
                ),
                timeout=60,
                what="the executor's log",
            )
            assert instances["driver"]
            assert logs.read(application_id, actor=ADMIN, instance="driver", tail=5).text
            before = server.services.applications.get(application_id, actor=ADMIN).attempts
        finally:
            server.close()

        restarted = cluster_server(standalone_cluster, tmp_path / "home")
        try:
            after = ticked_until(restarted, application_id, lambda _: True, "a first tick")
            assert before == [after]
            restarted.services.applications.stop(name, actor=ADMIN)
            ended = ticked_until(
                restarted,
                application_id,
                lambda attempt: attempt.ended_at is not None,
                "the stopped driver to end",
            )
            assert ended.exit_code == 0
            assert ended.submission_id == attempt.submission_id
            application = restarted.services.applications.get(application_id, actor=ADMIN)
            assert application.application.state is AppState.STOPPED
        finally:
            restarted.close()
    finally:
        for submission_id in submitted:
            RestSubmissionClient(standalone_cluster.rest_url).kill(submission_id)


def run_until_located(
    server: Server, manifest: dict[str, Any], submitted: list[str]
) -> tuple[str, AttemptRecord]:
    """Run the job of ``manifest`` on ``server`` until it runs, its driver's worker and UI port
    recorded; its submission id goes to ``submitted``."""
    with server.services.store.transaction() as repos:
        repos.node_types.put("tiny", cores=1, memory_mb=512)
    server.services.jobs.create(manifest, actor=ADMIN)
    application_id = server.services.applications.run(manifest["metadata"]["name"], actor=ADMIN).id
    attempt = ticked_until(
        server,
        application_id,
        lambda attempt: attempt.submission_id is not None,
        "the driver's submission",
    )
    assert attempt.submission_id is not None
    submitted.append(attempt.submission_id)
    attempt = ticked_until(
        server,
        application_id,
        lambda attempt: bool(attempt.ui_port and attempt.driver_host),
        "the driver's worker and UI port to be recorded",
    )
    assert (attempt.pid, attempt.launched_on, attempt.driver_host) == (0, None, "127.0.0.1")
    document = attempt_document(attempt)
    assert document["deployMode"] == "cluster"
    assert document["submissionId"] == attempt.submission_id
    ticked_until(
        server,
        application_id,
        lambda _: (
            server.services.applications.get(application_id, actor=ADMIN).application.state
            is AppState.RUNNING
        ),
        "the application to run",
    )
    return application_id, attempt
