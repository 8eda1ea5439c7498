"""``SystemAccounts`` with the real ``useradd``: one account per runAs identity, one group per
bundle, never an account someone else made under the same name."""

from __future__ import annotations

import grp
import os
import pwd
import subprocess
import uuid
from collections.abc import Iterator

import pytest

from streamjobs.launch.accounts import GROUP_PREFIX, MARKER, SystemAccounts, candidate_names

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only root creates accounts")


@pytest.fixture
def identity() -> Iterator[str]:
    """A fresh identity; every account and group made for it is removed afterwards."""
    name = f"probe-{uuid.uuid4().hex[:8]}"
    yield name
    for candidate in candidate_names("sj-", name)[:3]:
        subprocess.run(["userdel", candidate], capture_output=True, check=False)
    for candidate in candidate_names(GROUP_PREFIX, name)[:3]:
        subprocess.run(["groupdel", candidate], capture_output=True, check=False)


def test_an_identity_gets_its_own_unprivileged_account_once(identity: str) -> None:
    accounts = SystemAccounts()
    first = accounts.account_for(identity, identity)
    again = accounts.account_for(identity, identity)

    assert first == again
    entry = pwd.getpwuid(first.uid)
    assert entry.pw_name == candidate_names("sj-", identity)[0]
    assert entry.pw_gecos == f"{MARKER}{identity}"
    assert entry.pw_shell.endswith("nologin")
    assert first.uid != 0
    assert grp.getgrgid(first.gid).gr_name == candidate_names(GROUP_PREFIX, identity)[0]


def test_an_account_someone_else_made_under_the_name_is_never_taken(identity: str) -> None:
    taken = candidate_names("sj-", identity)[0]
    subprocess.run(["useradd", "--system", "--comment", "someone else", taken], check=True)

    account = SystemAccounts().account_for(identity, identity)

    assert account.name == f"{taken}-2"
    assert account.uid != pwd.getpwnam(taken).pw_uid
