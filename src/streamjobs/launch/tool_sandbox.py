"""``ToolSandbox``: the sandbox a tool (``launch.tool_runs``) runs in, a driver's made narrower.

A tool runs the job's own settings and SQL, so it runs as the job's account with what a driver
has of software and identity (``BubblewrapSandbox``: system, Java, Python, pyspark, streamjobs
read-only; the identity's home with the resolver's cache), and of the job's world less: its
bundle's data roots read-only (a tool reads inputs, it writes no output), the directories the run
names as readable read-only and as writable read-write, and the run's own directory, where it
works and answers. Not the job's checkpoint unless the run names it, and nothing of the
server's: its home is covered as for a driver. A directory reached through a symbolic link is
refused, so a job cannot point a bind at what it may not see.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Sequence
from pathlib import Path

from streamjobs.domain.locations import LocationError, local_path
from streamjobs.launch.accounts import Account
from streamjobs.launch.base import AttemptSpec, LaunchFailed
from streamjobs.launch.command import DriverCommand
from streamjobs.launch.sandbox import MERGED_USR_LINKS, Bind, SandboxPlan, sandbox_argv
from streamjobs.launch.sandbox_host import WORK_TMP, BubblewrapSandbox
from streamjobs.launch.sandbox_paths import own_tree, share_with_group

__all__ = ["WORK_TMP", "ToolSandbox"]


class ToolSandbox(BubblewrapSandbox):
    """Tools in bubblewrap, as the job's ``runAs`` account when the server is root."""

    def enclose_tool(
        self,
        attempt: AttemptSpec,
        command: DriverCommand,
        *,
        readable: Sequence[str],
        writable: Sequence[str],
    ) -> DriverCommand:
        """``command`` to run in the tool's sandbox: ``attempt`` is the run as a driver's
        attempt (its directory the run's). Readies the run's directory and ``writable`` for the
        job's account; ``LaunchFailed`` when the sandbox cannot be made."""
        if self._bwrap is None:
            raise LaunchFailed(
                "bubblewrap (bwrap) is not installed, and every tool runs in its sandbox; "
                "install it (`apt-get install bubblewrap`)"
            )
        account = self._accounts.account_for(attempt.run_as, attempt.job.spec.bundle)
        seen = [_unlinked(path, "readable") for path in readable]
        written = [_unlinked(path, "writable") for path in writable]
        try:
            home = self._identity_home(attempt, account)
            roots = _data_roots(attempt)
            if account is not None:
                for root in roots:  # as a driver's start does: its bundle's group may read
                    share_with_group(root, account.gid, entry="r-x", inherited=False)
            tmp = _ready(attempt.directory, written, account)
        except OSError as error:
            raise LaunchFailed(
                f"cannot ready the sandbox of a tool of {attempt.job.name!r}: {error}"
            ) from None
        plan = SandboxPlan(
            read_only=[
                *(Bind(root) for root in roots),
                *self._software(),
                *(Bind(path) for path in attempt.packaged_jars or ()),
            ],
            read_write=[],
            private=[
                Bind(str(home)),
                *self._maven_repository(home),
                *(Bind(path, read_only=True) for path in seen),
                *(Bind(path) for path in written),
                Bind(str(attempt.directory)),
            ],
            hidden=[*self._hidden, str(self._identity_homes)],
            working_directory=str(attempt.directory),
            links=[(os.readlink(path), path) for path in MERGED_USR_LINKS if os.path.islink(path)],
            account=account,
        )
        user = account.name if account else pwd.getpwuid(os.getuid()).pw_name
        environment = {
            **command.environment,
            "HOME": str(home),
            "USER": user,
            "LOGNAME": user,
            "TMPDIR": str(tmp),
            "SPARK_LOCAL_DIRS": str(tmp),
            "SPARK_SUBMIT_OPTS": f"-Duser.home={home} -Djava.io.tmpdir={tmp}",
        }
        return DriverCommand(
            argv=tuple(sandbox_argv(plan, command.argv, bwrap=self._bwrap)),
            environment=environment,
        )


def _unlinked(path: str, what: str) -> str:
    """``path`` when it is an absolute directory reached through no symbolic link."""
    normal = os.path.normpath(path)
    if not os.path.isabs(normal) or os.path.realpath(normal) != normal:
        raise LaunchFailed(f"the {what} directory {path} is reached through a symbolic link")
    if not os.path.isdir(normal):
        raise LaunchFailed(f"the {what} directory {path} does not exist")
    return normal


def _data_roots(attempt: AttemptSpec) -> list[str]:
    """The bundle's local data roots that exist, resolved."""
    roots = []
    for root in attempt.data_roots:
        try:
            path = local_path(root)
        except LocationError:
            continue
        if path is not None and os.path.isdir(path):
            roots.append(os.path.realpath(path))
    return roots


def _ready(directory: Path, writable: Sequence[str], account: Account | None) -> Path:
    """The run's directory with its temporary files, and ``writable``, the account's."""
    tmp = directory / WORK_TMP
    tmp.mkdir(mode=0o700, exist_ok=True)
    if account is not None:
        for path in [str(directory), *writable]:
            own_tree(path, account)
    return tmp
