"""A deleted job's checkpoint (issue 21, item 2): it stays unless the Delete asks, and the answer
says where; asked, only the job's own directory goes, never while an application runs from it;
and creating a job whose checkpoint already holds state warns that its first run resumes there.
On SQLite and PostgreSQL, against a real server (no supervisor: a run stays STARTING)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.problems import problem_of
from tests.checkpoint_server import CheckpointServer, checkpoint_server, with_state
from tests.factories import changed, console_manifest, python_manifest

JOBS = "/api/v1/jobs"
Server = CheckpointServer


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[Server]:
    with checkpoint_server(database_url, tmp_path) as running:
        yield running


def warnings_of(response: httpx.Response) -> list[str]:
    return [json.loads(header.split(" ", 2)[2]) for header in response.headers.get_list("Warning")]


def test_deleting_keeps_the_checkpoint_and_says_where(server: Server) -> None:
    assert server.api.put(f"{JOBS}/kept", json=console_manifest("kept")).status_code == 201
    checkpoint = with_state(server.checkpoint_of("kept"))

    deleted = server.api.delete(f"{JOBS}/kept")

    assert deleted.status_code == 204
    assert checkpoint.is_dir()
    [warning] = warnings_of(deleted)
    assert checkpoint.as_uri() in warning
    assert "resumes from it" in warning


def test_recreating_the_name_warns_that_it_resumes(server: Server) -> None:
    assert server.api.put(f"{JOBS}/again", json=console_manifest("again")).status_code == 201
    with_state(server.checkpoint_of("again"))
    assert server.api.delete(f"{JOBS}/again").status_code == 204

    created = server.api.put(f"{JOBS}/again", json=console_manifest("again"))

    assert created.status_code == 201
    [warning] = warnings_of(created)
    assert server.checkpoint_of("again").as_uri() in warning
    assert "resumes from there" in warning
    # the same manifest again changes nothing and says nothing more
    assert not warnings_of(server.api.put(f"{JOBS}/again", json=console_manifest("again")))


def test_post_and_duplicate_warn_as_well(server: Server) -> None:
    with_state(server.checkpoint_of("posted"))
    with_state(server.checkpoint_of("copy"))

    posted = server.api.post(JOBS, json=console_manifest("posted"))
    copied = server.api.post(f"{JOBS}/posted/duplicate", json={"name": "copy"})

    assert posted.status_code == 201
    assert len(warnings_of(posted)) == 1
    assert copied.status_code == 201
    assert len(warnings_of(copied)) == 1


def test_a_checkpoint_without_state_or_missing_says_nothing(server: Server) -> None:
    (server.checkpoint_of("empty") / "evens" / "sources").mkdir(parents=True)
    created = server.api.put(f"{JOBS}/empty", json=console_manifest("empty"))
    assert created.status_code == 201
    assert not warnings_of(created)

    deleted = server.api.delete(f"{JOBS}/empty")
    assert deleted.status_code == 204  # a directory stays, so its place is named
    assert len(warnings_of(deleted)) == 1

    assert server.api.put(f"{JOBS}/none", json=console_manifest("none")).status_code == 201
    gone = server.api.delete(f"{JOBS}/none")
    assert gone.status_code == 204
    assert not warnings_of(gone)


def test_an_explicit_checkpoint_with_state_warns(server: Server) -> None:
    explicit = with_state(server.data / "own-checkpoint")
    manifest = changed(
        console_manifest("explicit"),
        ("spec.pipeline.streaming.checkpointLocation", explicit.as_uri()),
    )

    created = server.api.put(f"{JOBS}/explicit", json=manifest)

    assert created.status_code == 201
    assert explicit.as_uri() in warnings_of(created)[0]


def test_delete_checkpoint_removes_the_derived_one(server: Server) -> None:
    assert server.api.put(f"{JOBS}/gone", json=console_manifest("gone")).status_code == 201
    checkpoint = with_state(server.checkpoint_of("gone"))

    deleted = server.api.delete(f"{JOBS}/gone", params={"deleteCheckpoint": "true"})

    assert deleted.status_code == 204
    assert not warnings_of(deleted)
    assert not checkpoint.exists()
    assert list(checkpoint.parent.iterdir()) == []  # nothing set aside is left either
    recreated = server.api.put(f"{JOBS}/gone", json=console_manifest("gone"))
    assert recreated.status_code == 201
    assert not warnings_of(recreated)


def test_delete_checkpoint_removes_an_explicit_one_inside_the_data_roots(server: Server) -> None:
    explicit = server.data / "mine" / "checkpoint"
    manifest = changed(
        console_manifest("explicit-gone"),
        ("spec.pipeline.streaming.checkpointLocation", explicit.as_uri()),
    )
    assert server.api.put(f"{JOBS}/explicit-gone", json=manifest).status_code == 201
    with_state(explicit)
    neighbour = server.data / "mine" / "keep.txt"
    neighbour.write_text("not the job's")

    deleted = server.api.delete(f"{JOBS}/explicit-gone", params={"deleteCheckpoint": "true"})

    assert deleted.status_code == 204
    assert not explicit.exists()
    assert neighbour.read_text() == "not the job's"


def test_delete_checkpoint_without_a_directory_just_deletes(server: Server) -> None:
    assert server.api.put(f"{JOBS}/bare", json=console_manifest("bare")).status_code == 201
    assert server.api.put(f"{JOBS}/py", json=python_manifest("py")).status_code == 201

    for name in ("bare", "py"):
        deleted = server.api.delete(f"{JOBS}/{name}", params={"deleteCheckpoint": "true"})
        assert deleted.status_code == 204, deleted.text
        assert server.api.get(f"{JOBS}/{name}").status_code == 404


def test_delete_checkpoint_is_refused_while_an_application_runs(server: Server) -> None:
    assert server.api.put(f"{JOBS}/busy", json=console_manifest("busy")).status_code == 201
    checkpoint = with_state(server.checkpoint_of("busy"))
    assert server.api.post(f"{JOBS}/busy/run").status_code == 201

    refused = server.api.delete(f"{JOBS}/busy", params={"deleteCheckpoint": "true"})

    assert "live application" in problem_of(refused, 409)["detail"]
    assert (checkpoint / "evens" / "offsets" / "0").is_file()
    assert server.api.get(f"{JOBS}/busy").status_code == 200


def test_a_checkpoint_that_is_a_link_out_of_the_roots_is_not_deleted(
    server: Server, tmp_path: Path
) -> None:
    assert server.api.put(f"{JOBS}/linked", json=console_manifest("linked")).status_code == 201
    elsewhere = with_state(tmp_path / "elsewhere")
    server.checkpoint_of("linked").parent.mkdir(parents=True, exist_ok=True)
    server.checkpoint_of("linked").symlink_to(elsewhere)

    refused = server.api.delete(f"{JOBS}/linked", params={"deleteCheckpoint": "true"})

    assert "symbolic link" in problem_of(refused, 409)["detail"]
    assert (elsewhere / "evens" / "offsets" / "0").is_file()
    assert server.api.get(f"{JOBS}/linked").status_code == 200


def test_a_checkpoint_under_a_linked_parent_out_of_the_roots_is_not_deleted(
    server: Server, tmp_path: Path
) -> None:
    assert server.api.put(f"{JOBS}/parent", json=console_manifest("parent")).status_code == 201
    outside = tmp_path / "outside"
    with_state(outside / "parent")
    server.checkpoints.mkdir(parents=True, exist_ok=True)
    (server.checkpoints / "default").symlink_to(outside)

    refused = server.api.delete(f"{JOBS}/parent", params={"deleteCheckpoint": "true"})

    assert "does not lie inside" in problem_of(refused, 409)["detail"]
    assert (outside / "parent" / "evens" / "offsets" / "0").is_file()


def test_a_bad_delete_checkpoint_value_is_a_422(server: Server) -> None:
    assert server.api.put(f"{JOBS}/odd", json=console_manifest("odd")).status_code == 201

    refused = server.api.delete(f"{JOBS}/odd", params={"deleteCheckpoint": "maybe"})

    assert "deleteCheckpoint" in str(problem_of(refused, 422))
    assert server.api.get(f"{JOBS}/odd").status_code == 200


def test_a_refused_delete_puts_the_checkpoint_back(server: Server) -> None:
    assert server.api.put(f"{JOBS}/stale", json=console_manifest("stale")).status_code == 201
    checkpoint = with_state(server.checkpoint_of("stale"))

    refused = server.api.delete(
        f"{JOBS}/stale", params={"deleteCheckpoint": "true"}, headers={"If-Match": '"99"'}
    )

    assert refused.status_code == 409, refused.text
    assert (checkpoint / "evens" / "offsets" / "0").is_file()
    assert sorted(path.name for path in checkpoint.parent.iterdir()) == ["stale"]
    assert server.api.get(f"{JOBS}/stale").status_code == 200
