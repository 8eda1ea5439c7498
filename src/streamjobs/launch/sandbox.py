"""The sandbox every driver starts in: a bubblewrap filesystem and process view of its own.

Inside, a driver finds the system, Java, Python, pyspark and streamjobs read-only; its job's own
files read-only; read-write only its attempt directory, its checkpoint, its identity's home (the
resolver's cache) and its bundle's data roots; an empty ``/tmp`` of its own (temporary files go to
the attempt directory's ``tmp``, on disk); and a PID namespace of its own,
so no other process's ``/proc`` is visible. ``STREAMJOBS_HOME`` (store, keys, tokens, other
applications) is not there: where a bound directory holds it, an empty directory covers it.

``sandbox_argv`` is pure: the plan in, bubblewrap's command line out. As root, bubblewrap sets up
the mounts (it can reach every source) and ``setpriv`` then becomes the job's account with no
capabilities and ``no_new_privs``; as another user, bubblewrap makes a user namespace that maps
the server's user to itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from streamjobs.launch.accounts import Account

BWRAP = "bwrap"
SETPRIV = "/usr/bin/setpriv"
SYSTEM_DIRECTORIES = ("/usr", "/etc")
MERGED_USR_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
HIDDEN_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
SANDBOX_TMP = "/tmp"
_ROOT_CAPABILITIES = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
"""What bubblewrap keeps for ``setpriv``, which drops them all before the driver starts."""


@dataclass(frozen=True)
class Bind:
    """``source`` seen at ``target`` in the sandbox (the same path unless said)."""

    source: str
    target: str = ""
    read_only: bool = False
    """Only for ``private`` binds; ``read_only`` binds are always so."""

    @property
    def destination(self) -> str:
        """Where the sandbox sees ``source``."""
        return self.target or self.source


@dataclass(frozen=True)
class SandboxPlan:
    """What one driver's sandbox holds. Later entries cover earlier ones where they overlap."""

    read_only: Sequence[Bind]
    """Software and the job's own files: bound after the data roots, so a root that holds
    software cannot make it writable."""
    read_write: Sequence[Bind]
    """The bundle's data roots."""
    private: Sequence[Bind]
    """The attempt directory, checkpoint and identity home: bound after ``hidden`` is covered,
    since they may lie inside it."""
    hidden: Sequence[str]
    """Directories covered by an empty one wherever a bind above would show them."""
    working_directory: str
    links: Sequence[tuple[str, str]] = field(default_factory=tuple)
    """Symbolic links ``(target, path)`` of a merged-/usr system (``/bin`` -> ``usr/bin``)."""
    account: Account | None = None
    """Who the driver runs as; None: the server's user, mapped in a user namespace."""


def sandbox_argv(plan: SandboxPlan, command: Sequence[str], *, bwrap: str = BWRAP) -> list[str]:
    """bubblewrap's command line that runs ``command`` in the sandbox ``plan`` describes."""
    argv = [
        bwrap,
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
    ]
    if plan.account is None:
        argv.append("--unshare-user")
    else:
        for capability in _ROOT_CAPABILITIES:
            argv += ["--cap-add", capability]
    made: set[str] = {"/"}
    for target, path in plan.links:
        argv += ["--symlink", target, path]
        made.add(path)
    argv += ["--perms", "1777", "--tmpfs", SANDBOX_TMP]
    made.add(SANDBOX_TMP)
    for bind in plan.read_write:
        argv += _parents(bind.destination, made)
        argv += ["--bind", bind.source, bind.destination]
        made.add(bind.destination)
    for bind in plan.read_only:
        argv += _parents(bind.destination, made, force=True)
        argv += ["--ro-bind", bind.source, bind.destination]
        made.add(bind.destination)
    for path in _covered(plan.hidden, [*plan.read_write, *plan.read_only]):
        argv += ["--perms", "0755", "--tmpfs", path]
    for bind in plan.private:
        argv += _parents(bind.destination, made, force=True)
        argv += ["--ro-bind" if bind.read_only else "--bind", bind.source, bind.destination]
    argv += ["--proc", "/proc", "--dev", "/dev", "--chdir", plan.working_directory, "--"]
    if plan.account is not None:
        argv += _drop_to(plan.account)
    return [*argv, *command]


def _drop_to(account: Account) -> list[str]:
    return [
        SETPRIV,
        f"--reuid={account.uid}",
        f"--regid={account.gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


def _parents(path: str, made: set[str], *, force: bool = False) -> list[str]:
    """``--dir`` for each ancestor of ``path`` not yet made, traversable by anyone: bubblewrap
    would otherwise copy the host's modes (``/root`` is 0700)."""
    argv: list[str] = []
    for parent in reversed(PurePosixPath(path).parents):
        text = str(parent)
        if text in made and not force:
            continue
        if text != "/":
            argv += ["--perms", "0755", "--dir", text]
        made.add(text)
    return argv


def _covered(hidden: Iterable[str], binds: Sequence[Bind]) -> list[str]:
    """The hidden directories some bind would show: those at or below a bind's destination."""
    shown = []
    for path in hidden:
        for bind in binds:
            if is_below(path, bind.destination):
                shown.append(path)
                break
    return shown


def is_below(path: str, root: str) -> bool:
    """Whether the host path ``path`` is ``root`` or lies under it (an empty root holds nothing)."""
    if not root:
        return False
    inner, outer = PurePosixPath(path), PurePosixPath(root)
    return inner == outer or outer in inner.parents
