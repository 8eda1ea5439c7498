"""The services over a real store of each backend, with a fake clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.domain.clock import FakeClock
from streamjobs.services.container import Services, open_services
from streamjobs.settings import Settings


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def services(database_url: str, tmp_path: Path, clock: FakeClock) -> Services:
    # A standalone master, so standard jobs may run too (no cluster is ever reached here).
    settings = Settings(
        home=tmp_path / "home", database_url=database_url, spark_master="spark://127.0.0.1:7077"
    )
    return open_services(settings, clock=clock)
