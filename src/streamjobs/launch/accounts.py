"""The OS identities drivers run as: one unprivileged account per ``runAs``, one group per bundle.

A server running as root never runs a job's code as root, nor as another job's identity: each
``runAs`` identity maps to its own system account, created on first use, and each bundle to its
own group, which the bundle's data roots are shared with. Names are derived from the identity
(``sj-<slug>-<hash>``, ``sjb-<slug>-<hash>``) and carry a marker, so an account that someone else
created under such a name is never taken for ours: the next free suffix is used instead.

A server that is not root cannot switch users; ``CurrentUser`` says so, and drivers then run as
the server's own user (still inside the sandbox).
"""

from __future__ import annotations

import grp
import hashlib
import os
import pwd
import re
import subprocess
import threading
from dataclasses import dataclass
from typing import Protocol

from streamjobs.launch.base import LaunchFailed

ACCOUNT_PREFIX = "sj-"
GROUP_PREFIX = "sjb-"
MARKER = "streamjobs runAs "
"""The start of the comment (GECOS) field of every account streamjobs creates."""
NO_LOGIN_SHELL = "/usr/sbin/nologin"
_SLUG_LENGTH = 12
_MAX_SUFFIX = 20
_ALREADY_EXISTS = 9
"""useradd's and groupadd's exit code for a name in use."""


@dataclass(frozen=True)
class Account:
    """Who a driver runs as: user and primary group ids, and the user's name."""

    name: str
    uid: int
    gid: int


class Accounts(Protocol):
    """Maps a ``runAs`` identity and a bundle to the account a driver runs as.

    Contract: the same identity and bundle always give the same uid and gid; an account or group
    that exists for anything else is never returned; ``None`` means the driver runs as the
    server's own user (the server cannot switch users). Raises ``LaunchFailed`` when an account
    cannot be created.
    """

    def account_for(self, identity: str, bundle: str) -> Account | None: ...


class CurrentUser:
    """For a server that is not root: drivers run as the server's own user."""

    def account_for(self, identity: str, bundle: str) -> Account | None:
        return None


class SystemAccounts:
    """Creates system accounts and groups with ``useradd``/``groupadd`` (the server is root)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def account_for(self, identity: str, bundle: str) -> Account:
        with self._lock:
            gid = self._group(bundle)
            uid = self._user(identity)
        return Account(name=pwd.getpwuid(uid).pw_name, uid=uid, gid=gid)

    def _user(self, identity: str) -> int:
        marker = f"{MARKER}{_comment_safe(identity)}"
        for name in candidate_names(ACCOUNT_PREFIX, identity):
            existing = _find_user(name)
            if existing is None:
                _run(
                    [
                        "useradd",
                        "--system",
                        "--no-create-home",
                        "--home-dir",
                        "/nonexistent",
                        "--shell",
                        NO_LOGIN_SHELL,
                        "--comment",
                        marker,
                        "--user-group",
                        name,
                    ],
                    what=f"the account {name!r} for runAs {identity!r}",
                )
                existing = _find_user(name)
            if existing is not None and existing.pw_gecos == marker:
                return existing.pw_uid
        raise LaunchFailed(f"no free account name for runAs {identity!r} (tried {_MAX_SUFFIX})")

    def _group(self, bundle: str) -> int:
        for name in candidate_names(GROUP_PREFIX, bundle):
            existing = _find_group(name)
            if existing is None:
                _run(["groupadd", "--system", name], what=f"the group {name!r} of {bundle!r}")
                existing = _find_group(name)
            if existing is not None and _is_ours(existing):
                return existing.gr_gid
        raise LaunchFailed(f"no free group name for bundle {bundle!r} (tried {_MAX_SUFFIX})")


def accounts_for_this_process() -> Accounts:
    """``SystemAccounts`` when the server runs as root, else ``CurrentUser``."""
    return SystemAccounts() if os.geteuid() == 0 else CurrentUser()


def candidate_names(prefix: str, identity: str) -> list[str]:
    """The names an identity's account may have, in the order tried: ``<prefix><slug>-<hash>``,
    then with ``-2``, ``-3``... for when the first is someone else's. At most 32 characters."""
    slug = re.sub(r"[^a-z0-9]+", "-", identity.lower()).strip("-")[:_SLUG_LENGTH].strip("-")
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:8]
    base = f"{prefix}{slug}-{digest}" if slug else f"{prefix}{digest}"
    return [base, *(f"{base}-{suffix}" for suffix in range(2, _MAX_SUFFIX + 1))]


def _is_ours(group: grp.struct_group) -> bool:
    """A group we made: nobody is listed in it, and everyone whose primary group it is, is an
    account of ours (none is, as ours get their own group)."""
    if group.gr_mem:
        return False
    return all(
        user.pw_gecos.startswith(MARKER) for user in pwd.getpwall() if user.pw_gid == group.gr_gid
    )


def _comment_safe(identity: str) -> str:
    return re.sub(r"[:,=\n\r\x00]", "_", identity)


def _find_user(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _find_group(name: str) -> grp.struct_group | None:
    try:
        return grp.getgrnam(name)
    except KeyError:
        return None


def _run(argv: list[str], *, what: str) -> None:
    """Run an account tool; a name taken meanwhile (by a concurrent start) is not an error."""
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise LaunchFailed(f"cannot create {what}: {error}") from None
    if result.returncode not in (0, _ALREADY_EXISTS):
        raise LaunchFailed(f"cannot create {what}: {result.stderr.strip() or result.returncode}")
