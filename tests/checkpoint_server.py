"""A real server (no supervisor) whose checkpoint root and data root are the test's own
directories, for tests of what is on disk at jobs' checkpoints."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from streamjobs.services.container import Services, open_services
from streamjobs.settings import Settings
from tests.live_server import live_server


@dataclass(frozen=True)
class CheckpointServer:
    url: str
    token: str
    api: httpx.Client
    checkpoints: Path
    data: Path
    services: Services

    def checkpoint_of(self, name: str) -> Path:
        """Where the server derives the checkpoint of job ``name`` (namespace ``default``)."""
        return self.checkpoints / "default" / name


@contextmanager
def checkpoint_server(database_url: str, directory: Path) -> Iterator[CheckpointServer]:
    checkpoints, data = directory / "checkpoints", directory / "data"
    settings = Settings(
        home=directory / "home",
        database_url=database_url,
        checkpoint_root=checkpoints.as_uri(),
        default_data_roots=[data.as_uri()],
    )
    services = open_services(settings)
    token = services.identity.bootstrap_admin().token
    assert token is not None
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with live_server(services) as url, httpx.Client(base_url=url, headers=headers) as api:
            yield CheckpointServer(url, token, api, checkpoints, data, services)
    finally:
        services.store.close()


def with_state(directory: Path, *, query: str = "evens") -> Path:
    """A checkpoint as the runner leaves it: one query's directory with offsets and commits."""
    for entry in ("offsets", "commits"):
        (directory / query / entry).mkdir(parents=True, exist_ok=True)
    (directory / query / "offsets" / "0").write_text("v1\n")
    (directory / query / "metadata").write_text('{"id": "q"}\n')
    return directory
