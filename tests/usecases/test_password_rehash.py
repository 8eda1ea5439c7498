"""A changed ``STREAMJOBS_PASSWORD_COST`` reaches each user's stored hash at their next good
sign-in, on each store backend; a wrong password or an unchanged cost rewrites nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import Unauthenticated
from streamjobs.services.container import Services, open_services
from streamjobs.settings import Settings

ADMIN = Actor(Principal("admin", is_admin=True), source="test")
PASSWORD = "correct horse battery"
OLD, NEW = "m=1024,t=1,p=1", "m=2048,t=2,p=1"


def services_at(cost: str, tmp_path: Path, database_url: str) -> Services:
    settings = Settings(home=tmp_path / "home", database_url=database_url, password_cost=cost)
    return open_services(settings, clock=FakeClock())


def stored_hash(services: Services, user: str) -> str:
    with services.store.transaction() as repos:
        record = repos.users.get(user)
    assert record.password_hash is not None
    return record.password_hash


def test_a_good_sign_in_moves_the_hash_to_the_new_cost(tmp_path: Path, database_url: str) -> None:
    before = services_at(OLD, tmp_path, database_url)
    before.people.create_user("alice", actor=ADMIN, password=PASSWORD)
    old_hash = stored_hash(before, "alice")
    assert f"${OLD}$" in old_hash
    before.store.close()

    after = services_at(NEW, tmp_path, database_url)
    with pytest.raises(Unauthenticated):
        after.sign_in.sign_in("alice", "wrong password!", address="10.0.0.1")
    assert stored_hash(after, "alice") == old_hash, "a wrong password rewrites nothing"

    after.sign_in.sign_in("alice", PASSWORD, address="10.0.0.1")
    new_hash = stored_hash(after, "alice")
    assert f"${NEW}$" in new_hash
    after.sign_in.sign_in("alice", PASSWORD, address="10.0.0.1")
    assert stored_hash(after, "alice") == new_hash, "a hash of the cost in force is kept"
    assert after.sign_in.sign_in("alice", PASSWORD, address="10.0.0.1").principal.name == "alice"
