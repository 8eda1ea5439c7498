"""``BubblewrapSandbox``: puts one attempt's driver command inside its sandbox, on this host.

It decides what the sandbox holds (``SandboxPlan``) from the attempt and this machine's software,
and readies the host for it: the driver's account and its bundle's group (as root), the attempt
directory and checkpoint owned by that account, the bundle's local data roots shared with the
group (a POSIX ACL, with a default entry so what jobs create there stays shared), and the
identity's home for the resolver's cache. The driver's environment gets its home and user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from streamjobs.domain.snapshots import SNAPSHOTS_DIRECTORY
from streamjobs.launch.accounts import (
    ACCOUNT_PREFIX,
    GROUP_PREFIX,
    Account,
    Accounts,
    accounts_for_this_process,
    candidate_names,
)
from streamjobs.launch.attempt_directory import WORK_DIRECTORY, private_files
from streamjobs.launch.base import AttemptSpec, LaunchFailed
from streamjobs.launch.command import DriverCommand, Toolchain
from streamjobs.launch.sandbox import (
    BWRAP,
    HIDDEN_FILES,
    MERGED_USR_LINKS,
    SYSTEM_DIRECTORIES,
    Bind,
    SandboxPlan,
    sandbox_argv,
)
from streamjobs.launch.sandbox_paths import granted_paths, own_directory

WORK_TMP = "tmp"
"""The driver's temporary files (Spark's local directories, Python's and Java's temporary
files), in its work directory on disk rather than in the sandbox's memory-backed ``/tmp``."""
EMPTY_FILE = "/dev/null"


class Sandbox(Protocol):
    """Encloses a driver's command so that it runs with only what its attempt is granted.

    Contract: ``enclose`` readies the host (accounts, directories, permissions) and returns the
    command to run instead, with its environment; it raises ``LaunchFailed`` when the sandbox
    cannot be made. Signals sent to the returned command's process group reach the driver.
    """

    def enclose(self, attempt: AttemptSpec, command: DriverCommand) -> DriverCommand: ...


class BubblewrapSandbox:
    """Drivers in bubblewrap, as their ``runAs`` account when the server is root."""

    def __init__(
        self,
        *,
        hidden: Sequence[Path],
        identity_homes: Path,
        toolchain: Toolchain,
        accounts: Accounts | None = None,
        bwrap: str | None = None,
    ) -> None:
        """``hidden``: directories no driver may see (the server's home); ``identity_homes``:
        where each identity's home (the resolver's cache) is kept."""
        self._hidden = [str(path) for path in hidden]
        self._identity_homes = identity_homes
        self._toolchain = toolchain
        self._accounts = accounts or accounts_for_this_process()
        self._bwrap = bwrap or shutil.which(BWRAP)

    def enclose(self, attempt: AttemptSpec, command: DriverCommand) -> DriverCommand:
        if self._bwrap is None:
            raise LaunchFailed(
                "bubblewrap (bwrap) is not installed, and every driver runs in its sandbox; "
                "install it (`apt-get install bubblewrap`)"
            )
        account = self._accounts.account_for(attempt.run_as, attempt.job.spec.bundle)
        hidden = [*self._hidden, str(self._identity_homes)]
        try:
            home = self._identity_home(attempt, account)
            grant = granted_paths(attempt, account, hidden=hidden)
            work = _ready_work_directory(attempt, account)
            staging = _ready_snapshot_directory(attempt, account)
        except OSError as error:
            raise LaunchFailed(
                f"cannot ready the sandbox of {attempt.job.name!r}: {error}"
            ) from None
        tmp = work / WORK_TMP
        plan = SandboxPlan(
            read_only=[
                *self._software(),
                *(Bind(path) for path in grant.code),
                *(Bind(path) for path in attempt.packaged_jars or ()),
            ],
            read_write=[Bind(path) for path in grant.roots],
            private=[
                Bind(str(home)),
                *self._maven_repository(home),
                *(Bind(path) for path in grant.checkpoints),
                Bind(str(attempt.directory), read_only=True),
                Bind(str(work)),
                Bind(str(staging)),
            ],
            hidden=hidden,
            working_directory=str(work),
            links=_merged_usr_links(),
            account=account,
        )
        environment = {
            **command.environment,
            "HOME": str(home),
            "USER": account.name if account else _user_name(),
            "LOGNAME": account.name if account else _user_name(),
            "TMPDIR": str(tmp),
            "SPARK_LOCAL_DIRS": str(tmp),
            "SPARK_SUBMIT_OPTS": f"-Duser.home={home} -Djava.io.tmpdir={tmp}",
        }
        return DriverCommand(
            argv=tuple(sandbox_argv(plan, command.argv, bwrap=self._bwrap)),
            environment=environment,
        )

    def _identity_home(self, attempt: AttemptSpec, account: Account | None) -> Path:
        """The home of the attempt's identity in its bundle: one per (identity, bundle), so a job
        of one bundle cannot leave jars in the resolver's cache for another bundle's jobs."""
        identity = account.name if account else candidate_names(ACCOUNT_PREFIX, attempt.run_as)[0]
        bundle = candidate_names(GROUP_PREFIX, attempt.job.spec.bundle)[0]
        home = self._identity_homes / f"{identity}.{bundle}"
        self._identity_homes.mkdir(mode=0o755, parents=True, exist_ok=True)
        home.mkdir(mode=0o700, exist_ok=True)
        if account is not None:
            own_directory(home, account)
        return home

    def _software(self) -> list[Bind]:
        """System, Java, Python, the virtual environment, pyspark and streamjobs, read-only."""
        toolchain = self._toolchain
        candidates = [
            *SYSTEM_DIRECTORIES,
            sys.base_prefix,
            sys.prefix,
            str(toolchain.runner_entry.parents[2]),
            str(toolchain.spark_home),
            *_java_home(),
        ]
        binds = [Bind(path) for path in _outermost(candidates) if os.path.exists(path)]
        binds += [
            Bind(path)
            for path in MERGED_USR_LINKS
            if os.path.isdir(path) and not os.path.islink(path)
        ]
        binds += [Bind(EMPTY_FILE, path) for path in HIDDEN_FILES if os.path.exists(path)]
        repository = toolchain.maven_repository
        if repository.is_dir():
            binds.append(Bind(str(repository)))
        return binds

    def _maven_repository(self, home: Path) -> list[Bind]:
        """The local Maven repository as the identity's ``~/.m2/repository`` too, where Spark's
        resolver looks first (bound after the home it lies in)."""
        repository = self._toolchain.maven_repository
        if not repository.is_dir():
            return []
        return [Bind(str(repository), str(home / ".m2" / "repository"), read_only=True)]


def _ready_work_directory(attempt: AttemptSpec, account: Account | None) -> Path:
    """The driver's own directory inside its attempt directory, with its temporary files.

    The attempt directory itself stays the server's (its logs, exit code, manifest, private files
    and stop file are the server's to write and read): the driver sees it read-only, and as root
    it is not the driver's either, so no name in it can be swapped for a link."""
    work = attempt.directory / WORK_DIRECTORY
    if work.is_symlink():
        work.unlink()
    work.mkdir(mode=0o700, exist_ok=True)
    tmp = work / WORK_TMP
    if account is not None:
        attempt.directory.chmod(0o755)
        own_directory(work, account)
        if tmp.is_symlink():
            tmp.unlink()
        tmp.mkdir(mode=0o700, exist_ok=True)
        own_directory(tmp, account)
        for name in private_files(attempt):
            os.chown(attempt.directory / name, account.uid, account.gid, follow_symlinks=False)
    else:
        tmp.mkdir(mode=0o700, exist_ok=True)
    return work


def _ready_snapshot_directory(attempt: AttemptSpec, account: Account | None) -> Path:
    """Where the runner stages the snapshots it takes (``domain.snapshots``): the driver's to
    write, and the server collects from it as from any untrusted directory."""
    staging = attempt.directory / SNAPSHOTS_DIRECTORY
    if staging.is_symlink():
        staging.unlink()
    staging.mkdir(mode=0o700, exist_ok=True)
    if account is not None:
        own_directory(staging, account)
    return staging


def _outermost(paths: list[str]) -> list[str]:
    """``paths`` without those inside another one of them, in order."""
    resolved = list(dict.fromkeys(os.path.realpath(path) for path in paths))
    return [
        path
        for path in resolved
        if not any(other != path and path.startswith(other.rstrip("/") + "/") for other in resolved)
    ]


def _java_home() -> list[str]:
    java = shutil.which("java")
    home = os.environ.get("JAVA_HOME")
    found = [home] if home else []
    if java:
        found.append(str(Path(os.path.realpath(java)).parents[1]))
    return found


def _merged_usr_links() -> list[tuple[str, str]]:
    return [(os.readlink(path), path) for path in MERGED_USR_LINKS if os.path.islink(path)]


def _user_name() -> str:
    return pwd.getpwuid(os.getuid()).pw_name
