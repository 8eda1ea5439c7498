"""The host paths a driver's sandbox grants, readied without following the job's links.

Everything a job may write (its data roots, outputs, checkpoint, work directory) is also where it
may plant a symbolic link for the server to follow: a checkpoint that points at the server's
home would be chowned to the job and bound read-write. So every path the server readies or binds
is resolved first and must stay where its manifest said: a link anywhere below a data root (or in
a checkpoint the server derives) fails the launch. Ownership changes never follow links.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from streamjobs.domain.connections import split_dataset
from streamjobs.domain.locations import LocationError, local_path
from streamjobs.domain.manifest import OutputFormat
from streamjobs.launch.accounts import Account
from streamjobs.launch.base import AttemptSpec, LaunchFailed
from streamjobs.launch.command import paths_to_check
from streamjobs.launch.sandbox import is_below


@dataclass(frozen=True)
class Grant:
    """What an attempt's sandbox binds from the host, every path resolved."""

    roots: list[str]
    """The bundle's local data roots, read-write (write access is the kernel's to decide)."""
    checkpoints: list[str]
    """The job's own checkpoint, read-write and owned by its account."""
    code: list[str]
    """The job's own files (program, jars, files, pyFiles), read-only."""


def granted_paths(attempt: AttemptSpec, account: Account | None, *, hidden: Sequence[str]) -> Grant:
    """Ready the host for ``attempt``: its data roots made, its outputs shared with the bundle's
    group (as root), its checkpoint its account's; ``LaunchFailed`` for any path that a link
    leads elsewhere, or that lies in ``hidden``."""
    roots = []
    for root in attempt.data_roots:
        path = _local(root)
        if path is not None:
            Path(path).mkdir(parents=True, exist_ok=True)
            roots.append(os.path.realpath(path))
    if account is not None:
        for path in roots:
            share_with_group(path, account.gid, entry="r-x", inherited=False)
        for place in _written_places(attempt):
            path = confined(place, roots=roots, hidden=hidden, what="output")
            Path(path).mkdir(parents=True, exist_ok=True)
            share_with_group(
                confined(path, roots=roots, hidden=hidden, what="output"),
                account.gid,
                entry="rwx",
                inherited=True,
            )
    checkpoints = []
    pipeline = attempt.job.spec.pipeline
    checkpoint = pipeline.streaming.checkpoint_location if pipeline else None
    path = _local(checkpoint) if checkpoint else None
    if path is not None:
        path = confined(path, roots=roots, hidden=hidden, what="checkpoint", derived_ok=True)
        Path(path).mkdir(parents=True, exist_ok=True)
        if account is not None:
            own_tree(path, account)
        checkpoints.append(path)
    return Grant(roots=roots, checkpoints=checkpoints, code=_code_files(attempt, hidden))


def confined(
    path: str,
    *,
    roots: Sequence[str],
    hidden: Sequence[str],
    what: str,
    derived_ok: bool = False,
) -> str:
    """``path`` resolved, when it stays within one of the (resolved) data ``roots`` and out of
    ``hidden``; a server-derived location (``derived_ok``) may lie elsewhere but holds no link."""
    lexical = os.path.normpath(path)
    real = os.path.realpath(lexical)
    in_hidden = any(is_below(real, os.path.realpath(place)) for place in hidden)
    if any(is_below(real, root) for root in roots) and not in_hidden:
        return real
    if derived_ok and real == lexical:
        return real
    where = "into the server's home" if in_hidden else f"to {real}, outside the bundle's data roots"
    raise LaunchFailed(
        f"the {what} {path} is reached through a symbolic link that leads {where}; the server "
        "does not follow it"
    )


def own_tree(path: str, account: Account) -> None:
    """Give the directory ``path`` and all below it to the account; links are changed
    themselves, never followed."""
    status = os.lstat(path)
    if not stat.S_ISDIR(status.st_mode):
        raise LaunchFailed(f"{path} is not a directory")
    if status.st_uid == account.uid and status.st_gid == account.gid:
        return
    os.chown(path, account.uid, account.gid, follow_symlinks=False)
    for directory, names, files in os.walk(path):
        for name in [*names, *files]:
            os.chown(os.path.join(directory, name), account.uid, account.gid, follow_symlinks=False)


def own_directory(path: Path, account: Account) -> None:
    """Make ``path`` a directory of the account's alone (mode 700), refusing a link."""
    status = os.lstat(path)
    if not stat.S_ISDIR(status.st_mode):
        raise LaunchFailed(f"{path} is not a directory")
    os.chown(path, account.uid, account.gid, follow_symlinks=False)
    os.chmod(path, 0o700)


def share_with_group(path: str, gid: int, *, entry: str, inherited: bool) -> None:
    """Give the bundle's group ``entry`` (``r-x``, ``rwx``) on ``path`` and, when ``inherited``,
    on what is later made in it (a default ACL entry)."""
    acl = f"g:{gid}:{entry}" + (f",d:g:{gid}:{entry}" if inherited else "")
    try:
        result = subprocess.run(
            ["setfacl", "-m", acl, path], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise LaunchFailed(
            f"cannot share {path} with the bundle's group: {error} (install the acl package: "
            "`apt-get install acl`)"
        ) from None
    if result.returncode != 0:
        raise LaunchFailed(f"cannot share {path} with the bundle's group: {result.stderr.strip()}")


def _code_files(attempt: AttemptSpec, hidden: Sequence[str]) -> list[str]:
    """The job's own files, resolved: each must be a regular file outside the server's places."""
    files = []
    for path in dict.fromkeys(paths_to_check(attempt.job)):
        real = os.path.realpath(path)
        if not os.path.exists(real):
            continue
        if any(is_below(real, os.path.realpath(place)) for place in hidden):
            raise LaunchFailed(f"the job's file {path} lies in a directory jobs may not reach")
        if not stat.S_ISREG(os.stat(real).st_mode):
            raise LaunchFailed(f"the job's file {path} is not a regular file")
        files.append(real)
    return files


def _written_places(attempt: AttemptSpec) -> list[str]:
    """Where the job may write: a pipeline's local outputs (a lakehouse's warehouse for an
    Iceberg table, whose catalog writes there); a program's, all its roots."""
    pipeline = attempt.job.spec.pipeline
    if pipeline is None:
        return [path for root in attempt.data_roots if (path := _local(root)) is not None]
    connections = {connection.name: connection for connection in attempt.connections}
    places = []
    for output in pipeline.outputs:
        location = output.path
        if output.dataset is not None:
            name, rest = split_dataset(output.dataset)
            spec = connections[name].spec if name in connections else None
            base = (spec.warehouse or spec.root) if spec is not None else None
            iceberg = output.format is OutputFormat.ICEBERG
            location = base if iceberg or base is None else f"{base.rstrip('/')}/{rest}"
        path = _local(location) if location else None
        if path is not None and any(
            is_below(path, _local(root) or "") for root in attempt.data_roots
        ):
            places.append(path)
    return list(dict.fromkeys(places))


def _local(location: str | None) -> str | None:
    if not location:
        return None
    try:
        return local_path(location)
    except LocationError:
        return None
