"""A Delete that asks for the checkpoint to go takes only a streaming checkpoint (issue 21 review):
the server deletes with its own privileges, so a directory the manifest names must hold nothing
but what the runner and Spark write there, and must not be or hold any bundle's data root or any
place a job claims; and no job may be written whose checkpoint would take another's input, or its
own output, with it. On SQLite and PostgreSQL, against a real server (no supervisor)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.domain.location_claims import CHECKPOINT_FIELD, Claim, ClaimKind
from streamjobs.services.checkpoint_state import CheckpointRemoval
from tests.api.problems import problem_of
from tests.checkpoint_server import CheckpointServer, checkpoint_server, with_state
from tests.factories import changed, console_manifest

JOBS = "/api/v1/jobs"
ADMIN = Actor(Principal("admin", is_admin=True))
Server = CheckpointServer


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[Server]:
    with checkpoint_server(database_url, tmp_path) as running:
        yield running


def checkpointing_at(name: str, checkpoint: Path, *changes: tuple[str, Any]) -> dict[str, Any]:
    return changed(console_manifest(name), (CHECKPOINT_FIELD, checkpoint.as_uri()), *changes)


def reading(name: str, location: Path) -> dict[str, Any]:
    """A job whose only input reads the JSON files at ``location``."""
    source = {"name": "ticks", "format": "json", "path": location.as_uri(), "schema": "a INT"}
    return changed(console_manifest(name), ("spec.pipeline.inputs[0]", source))


def create(server: Server, name: str, manifest: dict[str, Any]) -> httpx.Response:
    return server.api.put(f"{JOBS}/{name}", json=manifest)


def delete_with_checkpoint(server: Server, name: str) -> httpx.Response:
    return server.api.delete(f"{JOBS}/{name}", params={"deleteCheckpoint": "true"})


def field_errors(response: httpx.Response, status: int) -> dict[str, str]:
    return {error["path"]: error["message"] for error in problem_of(response, status)["errors"]}


def files_under(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


def test_a_directory_that_is_not_a_checkpoint_is_not_deleted(server: Server) -> None:
    precious = server.data / "precious"
    precious.mkdir(parents=True)
    for name in ("report.csv", "a.csv", "b.csv", "c.csv", "d.csv", "e.csv"):
        (precious / name).write_text("x")
    assert create(server, "a", checkpointing_at("a", precious)).status_code == 201

    refused = problem_of(delete_with_checkpoint(server, "a"), 409)["detail"]

    assert "a.csv, b.csv, c.csv, d.csv, e.csv and 1 more" in refused
    assert "nothing was deleted" in refused
    assert (precious / "report.csv").read_text() == "x"
    assert server.api.get(f"{JOBS}/a").status_code == 200


def test_a_query_directory_holding_more_than_a_checkpoint_is_not_deleted(server: Server) -> None:
    checkpoint = with_state(server.data / "cp")
    (checkpoint / "evens" / "part-0.parquet").write_text("rows")
    assert create(server, "mixed", checkpointing_at("mixed", checkpoint)).status_code == 201

    refused = problem_of(delete_with_checkpoint(server, "mixed"), 409)["detail"]

    assert "(evens/part-0.parquet)" in refused
    assert (checkpoint / "evens" / "offsets" / "0").is_file()


def test_a_checkpoint_as_spark_leaves_it_is_deleted(server: Server) -> None:
    """Per-output queries and a forEachBatch query, with sources, state, checksums and a file
    Spark was still writing."""
    checkpoint = server.data / "cp"
    assert create(server, "full", checkpointing_at("full", checkpoint)).status_code == 201
    for query in ("evens", "odds", "foreachBatch"):
        with_state(checkpoint, query=query)
        (checkpoint / query / "sources" / "0").mkdir(parents=True)
        (checkpoint / query / "state" / "0" / "0").mkdir(parents=True)
        (checkpoint / query / ".metadata.crc").write_bytes(b"crc")
        (checkpoint / query / "..metadata.6b59.tmp.crc").write_bytes(b"crc")
        (checkpoint / query / ".metadata.6b59.tmp").write_text("{}")

    deleted = delete_with_checkpoint(server, "full")

    assert deleted.status_code == 204, deleted.text
    assert not checkpoint.exists()


def test_another_bundles_data_root_is_not_deleted(server: Server) -> None:
    other = server.data / "other"
    (other / "nested").mkdir(parents=True)
    server.services.bundles.create("other", actor=ADMIN, data_roots=[other.as_uri()])
    holding = server.data / "holding"
    inner = holding / "evens" / "state"
    inner.mkdir(parents=True)
    server.services.bundles.create("inner", actor=ADMIN, data_roots=[inner.as_uri()])
    assert create(server, "b", checkpointing_at("b", other)).status_code == 201
    assert create(server, "c", checkpointing_at("c", holding)).status_code == 201

    at_root = problem_of(delete_with_checkpoint(server, "b"), 409)["detail"]
    around_root = problem_of(delete_with_checkpoint(server, "c"), 409)["detail"]

    assert f"it holds the data root {other.as_uri()} of another bundle" in at_root
    assert f"the data root {inner.as_uri()} of another bundle" in around_root
    assert (other / "nested").is_dir()
    assert inner.is_dir()


def test_a_checkpoint_at_or_around_anothers_input_is_refused(server: Server) -> None:
    incoming = server.data / "incoming"
    assert create(server, "reader", reading("reader", incoming)).status_code == 201

    for name, checkpoint, relation in (
        ("same", incoming, "is"),
        ("around", server.data, "holds"),
        ("inside", incoming / "cp", "lies inside"),
    ):
        refused = field_errors(create(server, name, checkpointing_at(name, checkpoint)), 409)
        assert refused == {
            CHECKPOINT_FIELD: (
                f"{checkpoint.as_uri()} {relation} an input of job 'reader'; a checkpoint may "
                "not lie at, inside or around where another job reads"
            )
        }


def test_reading_at_or_around_anothers_checkpoint_is_refused(server: Server) -> None:
    checkpoint = server.data / "in" / "cp"
    assert create(server, "owner", checkpointing_at("owner", checkpoint)).status_code == 201

    refused = field_errors(create(server, "reader", reading("reader", checkpoint.parent)), 409)

    assert refused["spec.pipeline.inputs[0].path"] == (
        f"{checkpoint.parent.as_uri()} holds the checkpoint of job 'owner'; a job may not read "
        "at, inside or around another job's checkpoint"
    )


def test_an_output_or_input_in_the_jobs_own_checkpoint_is_refused(server: Server) -> None:
    checkpoint = server.data / "c"
    output = ("spec.pipeline.outputs[0]", {"name": "evens", "format": "parquet"})
    inside = checkpointing_at(
        "c", checkpoint, output, ("spec.pipeline.outputs[0].path", (checkpoint / "out").as_uri())
    )
    around = changed(reading("c", server.data), (CHECKPOINT_FIELD, checkpoint.as_uri()))

    assert field_errors(create(server, "c", inside), 422) == {
        "spec.pipeline.outputs[0].path": (
            f"{(checkpoint / 'out').as_uri()} lies inside the job's own checkpoint; an output "
            "may not lie in it: deleting the checkpoint would delete the output"
        )
    }
    assert field_errors(create(server, "c", around), 422) == {
        "spec.pipeline.inputs[0].path": (
            f"{server.data.as_uri()} holds the job's own checkpoint; a job may not read at, "
            "inside or around its own checkpoint"
        )
    }
    assert server.api.get(f"{JOBS}/c").status_code == 404


def test_a_claim_stored_before_these_rules_keeps_its_place(server: Server) -> None:
    """An older server stored jobs without these refusals: a Delete still refuses to take
    another job's input or the job's own output with the checkpoint."""
    checkpoint = with_state(server.data / "cp")
    assert create(server, "d", checkpointing_at("d", checkpoint)).status_code == 201
    assert create(server, "e", checkpointing_at("e", server.data / "cp-e")).status_code == 201
    with_state(server.data / "cp-e")
    assert create(server, "reader", reading("reader", server.data / "in")).status_code == 201
    sources = (checkpoint / "evens" / "sources").as_uri()
    own_output = (server.data / "cp-e" / "evens" / "state").as_uri()
    with server.services.store.transaction() as repos:
        repos.claims.replace("reader", [Claim(sources, False, ClaimKind.INPUT, "f")])
        repos.claims.replace(
            "e",
            [
                Claim((server.data / "cp-e").as_uri(), False, ClaimKind.CHECKPOINT, "f"),
                Claim(own_output, False, ClaimKind.OUTPUT, "f"),
            ],
        )

    theirs = problem_of(delete_with_checkpoint(server, "d"), 409)["detail"]
    own = problem_of(delete_with_checkpoint(server, "e"), 409)["detail"]

    assert f"it holds the input {sources} of job 'reader'; nothing was deleted" in theirs
    assert f"it holds the output {own_output} of job 'e'" in own
    assert files_under(checkpoint) == files_under(with_state(server.data / "copy"))


def test_a_checkpoint_that_cannot_be_put_back_does_not_hide_the_refusal(
    server: Server, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert create(server, "stuck", console_manifest("stuck")).status_code == 201
    with_state(server.checkpoint_of("stuck"))

    def failing_undo(_removal: CheckpointRemoval) -> None:
        raise OSError("the disk went away")

    monkeypatch.setattr(CheckpointRemoval, "undo", failing_undo)

    refused = server.api.delete(
        f"{JOBS}/stuck", params={"deleteCheckpoint": "true"}, headers={"If-Match": '"99"'}
    )

    assert refused.status_code == 409, refused.text
    assert "could not put the checkpoint" in caplog.text
    [aside] = list(server.checkpoint_of("stuck").parent.iterdir())
    assert aside.name.startswith(".deleted-stuck-")
    assert server.api.get(f"{JOBS}/stuck").status_code == 200
