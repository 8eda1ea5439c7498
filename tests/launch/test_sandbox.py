"""Drivers in their sandbox, for real: who they run as, what they see, what they may touch.

A hostile program (``apps/sandbox_probe.py``) runs through ``LocalLauncher`` with a real
``spark-submit`` inside bubblewrap and reports what it could do; the kernel, not validation, must
have refused everything outside its grant.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
from pathlib import Path
from typing import Any

import pytest

from streamjobs.launch.accounts import CurrentUser, SystemAccounts
from streamjobs.launch.base import LaunchFailed
from streamjobs.launch.command import DriverCommand
from streamjobs.launch.local import LocalLauncher
from streamjobs.launch.sandbox_host import BubblewrapSandbox
from tests.factories import changed, pipeline_manifest
from tests.launch.conftest import TOOLCHAIN, Drivers, attempt_for, python_app_manifest

SERVER_ENVIRONMENT = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "LANG": "C.UTF-8",
    "STREAMJOBS_SECRET_KEY": "server-key",
    "STREAMJOBS_DATABASE_URL": "postgresql://streamjobs:pw@127.0.0.1/streamjobs",
    "AWS_SECRET_ACCESS_KEY": "server-cloud-key",
    "LD_PRELOAD": "/tmp/evil.so",
}


def run_probe(drivers: Drivers, tmp_path: Path, *arguments: str) -> dict[str, Any]:
    """Run the probe as ``alice`` in bundle ``default`` with ``tmp_path/data`` as data root, the
    server's home at ``tmp_path/home``; return its report."""
    home = tmp_path / "home"
    sandbox = BubblewrapSandbox(
        hidden=[home], identity_homes=tmp_path / "identities", toolchain=TOOLCHAIN
    )
    launcher = LocalLauncher(toolchain=TOOLCHAIN, environment=SERVER_ENVIRONMENT, sandbox=sandbox)
    report = tmp_path / "data" / "report.json"
    attempt = attempt_for(
        python_app_manifest("probe", "sandbox_probe.py", str(report), *arguments),
        attempt_directory(tmp_path),
        run_as="alice",
        data_roots=((tmp_path / "data").as_uri(),),
    )
    handle = drivers.submit(launcher, attempt)
    assert drivers.wait_exited(launcher, handle) == 0, (home / "apps").as_posix()
    return dict(json.loads(report.read_text()))


def attempt_directory(root: Path) -> Path:
    return root / "home" / "apps" / "app-1" / "1"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """A server home with its secrets, another application's directory, data outside the
    bundle's roots, and the bundle's own data root."""
    home = tmp_path / "home"
    (home / "apps" / "app-other" / "1").mkdir(parents=True)
    (home / "apps" / "app-other" / "1" / "report-token").write_text("other-token")
    (home / "secret.key").write_text("the-key")
    (home / "streamjobs.db").write_text("the-store")
    home.chmod(0o700)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "readable.txt").write_text("outside the roots")
    (tmp_path / "elsewhere").chmod(0o777)
    (tmp_path / "data").mkdir()
    return tmp_path


@pytest.mark.spark
@pytest.mark.usefixtures("java")
def test_a_driver_runs_as_its_account_and_reaches_only_its_grant(
    drivers: Drivers, world: Path
) -> None:
    home = world / "home"
    report = run_probe(
        drivers,
        world,
        *("--read", str(home / "secret.key")),
        *("--read", str(home / "streamjobs.db")),
        *("--read", str(home / "apps" / "app-other" / "1" / "report-token")),
        *("--read", str(world / "elsewhere" / "readable.txt")),
        *("--read", "/etc/shadow"),
        *("--write", str(world / "data" / "written.txt")),
        *("--write", str(world / "elsewhere" / "written.txt")),
        *("--write", str(home / "planted")),
        *("--write", "/usr/planted"),
        *("--link", str(attempt_directory(world) / "stderr.log"), str(home / "secret.key")),
        *("--link", str(attempt_directory(world) / ".exit-code.1"), str(home / "session-key")),
        *("--link", str(attempt_directory(world) / "stop"), "/etc/nologin"),
    )

    if os.geteuid() == 0:
        account = SystemAccounts().account_for("alice", "default")
        assert report["uid"] == account.uid == pwd.getpwnam(account.name).pw_uid
        assert report["uid"] != os.getuid()
        assert report["groups"] in ([], [account.gid])
    else:
        assert report["uid"] == os.getuid()
    assert set(report["reads"].values()) <= {"FileNotFoundError", "PermissionError"}, report
    assert report["writes"].pop(str(world / "data" / "written.txt")) == "ok"
    assert set(report["writes"].values()) <= {
        "FileNotFoundError",
        "PermissionError",
        "OSError",
    }, report
    assert set(report["links"].values()) <= {"PermissionError", "OSError"}, report
    assert not (world / "elsewhere" / "written.txt").exists()
    assert not (home / "planted").exists()
    assert (world / "data" / "written.txt").read_text() == "probe"


@pytest.mark.spark
@pytest.mark.usefixtures("java")
def test_a_driver_sees_no_process_and_no_variable_of_the_server(
    drivers: Drivers, tmp_path: Path
) -> None:
    (tmp_path / "data").mkdir()
    report = run_probe(drivers, tmp_path)

    assert os.getpid() not in report["pids"] or len(report["pids"]) < 10
    assert len(report["pids"]) < 10, report["pids"]
    names = set(report["environment"])
    assert not {name for name in names if name.startswith("STREAMJOBS_")}
    assert not {"AWS_SECRET_ACCESS_KEY", "LD_PRELOAD"} & names
    assert {"PATH", "LANG", "HOME", "SPARK_HOME"} <= names


@pytest.mark.parametrize("target", ["home", "elsewhere"])
def test_a_checkpoint_that_a_link_leads_elsewhere_fails_the_launch(
    drivers: Drivers, world: Path, target: str
) -> None:
    """A job that could write its data roots leaves a link where its next checkpoint goes: the
    server neither follows it (chown, bind) nor starts the driver."""
    (world / "data" / "checkpoint").symlink_to(Path("..") / target)
    home = world / "home"
    sandbox = BubblewrapSandbox(
        hidden=[home], identity_homes=world / "identities", toolchain=TOOLCHAIN
    )
    manifest = changed(
        pipeline_manifest("linked"),
        ("spec.pipeline.streaming.checkpointLocation", (world / "data" / "checkpoint").as_uri()),
        ("spec.pipeline.outputs[0].path", (world / "data" / "out").as_uri()),
    )
    attempt = attempt_for(
        manifest,
        attempt_directory(world),
        run_as="alice",
        data_roots=((world / "data").as_uri(),),
    )

    with pytest.raises(LaunchFailed, match="symbolic link"):
        drivers.submit(LocalLauncher(toolchain=TOOLCHAIN, sandbox=sandbox), attempt)
    assert (world / target).stat().st_uid == os.getuid()


def test_a_server_that_cannot_switch_users_still_hides_itself(world: Path) -> None:
    """Not root (``CurrentUser``): the driver keeps the server's user, in a user namespace, and
    still sees neither the server's home nor its processes, nor can it change its attempt
    directory; only its work directory and data roots are writable."""
    home = world / "home"
    directory = attempt_directory(world)
    directory.mkdir(parents=True)
    sandbox = BubblewrapSandbox(
        hidden=[home],
        identity_homes=world / "identities",
        toolchain=TOOLCHAIN,
        accounts=CurrentUser(),
    )
    attempt = attempt_for(
        python_app_manifest("plain", "exit_with.py", "0"),
        directory,
        data_roots=((world / "data").as_uri(),),
    )
    script = (
        f"cat {home / 'secret.key'}; ls /proc | grep -c '^[0-9]'; "
        f"touch {directory / 'planted'}; touch {directory / 'work' / 'mine'} {world / 'data' / 'x'}"
    )
    command = sandbox.enclose(
        attempt, DriverCommand(argv=("/bin/sh", "-c", script), environment={"PATH": "/usr/bin"})
    )

    finished = subprocess.run(
        list(command.argv), env=command.environment, capture_output=True, text=True, check=False
    )

    assert "--unshare-user" in command.argv
    assert "the-key" not in finished.stdout
    assert "No such file" in finished.stderr
    assert int(finished.stdout.split()[0]) < 10
    assert "Read-only file system" in finished.stderr
    assert not (directory / "planted").exists()
    assert (directory / "work" / "mine").exists()
    assert (world / "data" / "x").exists()
