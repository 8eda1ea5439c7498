"""What a job claims (its outputs, its checkpoint and its inputs), what it may not do within its
own checkpoint, and the lookups that find the claims around a location."""

from __future__ import annotations

from streamjobs.domain.job_locations import job_locations
from streamjobs.domain.location_claims import (
    CHECKPOINT_FIELD,
    Claim,
    ClaimKind,
    claim_uri,
    enclosing,
    enclosing_paths,
    job_claims,
    own_overlaps,
    path_under,
)
from streamjobs.domain.spec import parse_manifest
from tests.factories import changed, pipeline_manifest, python_manifest

ROOT = "file:///var/lib/streamjobs/checkpoints"


def claims_of(manifest: dict[str, object]) -> list[Claim]:
    job = parse_manifest(manifest, checkpoint_root=ROOT)
    return job_claims(job, job_locations(job, {}, checkpoint_root=ROOT))


def test_a_job_claims_its_outputs_and_its_derived_checkpoint_by_its_path_under_the_root() -> None:
    manifest = changed(
        pipeline_manifest("orders to lake"),
        ("spec.pipeline.outputs[0].path", "/data/out/"),
        (
            "spec.pipeline.outputs[1]",
            {"name": "evens", "format": "json", "path": "file:///data/out"},
        ),
        ("spec.pipeline.outputs[2]", {"name": "evens", "format": "console"}),
    )
    assert claims_of(manifest) == [
        Claim("file:///data/out", False, ClaimKind.OUTPUT, "spec.pipeline.outputs[0].path"),
        Claim(
            "/default/orders to lake",
            True,
            ClaimKind.CHECKPOINT,
            "spec.pipeline.streaming.checkpointLocation",
        ),
    ]


def test_a_checkpoint_the_job_sets_is_claimed_by_its_uri() -> None:
    manifest = changed(
        pipeline_manifest("orders"), ("spec.pipeline.streaming.checkpointLocation", "/data/cp/")
    )
    assert claims_of(manifest)[-1] == Claim(
        "file:///data/cp", False, ClaimKind.CHECKPOINT, "spec.pipeline.streaming.checkpointLocation"
    )


def test_a_program_claims_nothing() -> None:
    assert claims_of(python_manifest()) == []


def test_a_derived_claim_follows_the_checkpoint_root() -> None:
    claim = Claim("/default/orders", True, ClaimKind.CHECKPOINT, "f")
    assert claim_uri(claim, ROOT + "/") == f"{ROOT}/default/orders"
    assert claim_uri(claim, "s3a://Bucket/cp") == "s3a://bucket/cp/default/orders"
    plain = Claim("file:///data/out", False, ClaimKind.OUTPUT, "f")
    assert claim_uri(plain, ROOT) == "file:///data/out"


def test_enclosing_lists_a_location_and_every_one_above_it() -> None:
    assert enclosing("/data/a/b/") == [
        "file:///data/a/b",
        "file:///data/a",
        "file:///data",
        "file:///",
    ]
    assert enclosing("file:///") == ["file:///"]
    assert enclosing("s3a://Lake/x/y") == ["s3a://lake/x/y", "s3a://lake/x", "s3a://lake"]
    assert enclosing_paths("/default/orders") == ["/default/orders", "/default"]
    assert enclosing_paths("") == []


def test_path_under_is_the_path_below_a_root() -> None:
    assert path_under("/data/a/b", "file:///data") == "/a/b"
    assert path_under("/data", "/data/") == ""
    assert path_under("/a/b", "file:///") == "/a/b"
    assert path_under("/database", "/data") is None
    assert path_under("s3a://lake/x", "/data") is None


def test_a_job_claims_what_it_reads_after_what_it_writes() -> None:
    manifest = changed(
        pipeline_manifest("chain"),
        (
            "spec.pipeline.inputs[0]",
            {"name": "ticks", "format": "json", "schema": "a INT", "path": "/data/in"},
        ),
        (
            "spec.pipeline.inputs[1]",
            {"name": "again", "format": "json", "schema": "a INT", "path": "/data/out"},
        ),
        ("spec.pipeline.outputs[0].path", "/data/out"),
    )
    assert claims_of(manifest) == [
        Claim("file:///data/out", False, ClaimKind.OUTPUT, "spec.pipeline.outputs[0].path"),
        Claim("/default/chain", True, ClaimKind.CHECKPOINT, CHECKPOINT_FIELD),
        Claim("file:///data/in", False, ClaimKind.INPUT, "spec.pipeline.inputs[0].path"),
    ]


def own_overlaps_of(manifest: dict[str, object]) -> dict[str, str]:
    job = parse_manifest(manifest, checkpoint_root=ROOT)
    locations = job_locations(job, {}, checkpoint_root=ROOT)
    return {error.path: error.message for error in own_overlaps(locations)}


def test_an_output_at_or_inside_the_jobs_own_checkpoint_is_an_error() -> None:
    inside = changed(
        pipeline_manifest("c"),
        (CHECKPOINT_FIELD, "/data/c"),
        ("spec.pipeline.outputs[0].path", "/data/c/out"),
    )
    same = changed(inside, ("spec.pipeline.outputs[0].path", "/data/c/"))
    beside = changed(inside, ("spec.pipeline.outputs[0].path", "/data/cc"))
    rule = "an output may not lie in it: deleting the checkpoint would delete the output"
    assert own_overlaps_of(inside) == {
        "spec.pipeline.outputs[0].path": (
            f"file:///data/c/out lies inside the job's own checkpoint; {rule}"
        )
    }
    assert own_overlaps_of(same) == {
        "spec.pipeline.outputs[0].path": f"file:///data/c is the job's own checkpoint; {rule}"
    }
    assert own_overlaps_of(beside) == {}


def test_reading_at_inside_or_around_the_jobs_own_checkpoint_is_an_error() -> None:
    base = changed(pipeline_manifest("r"), (CHECKPOINT_FIELD, "/data/cp"))
    rule = "a job may not read at, inside or around its own checkpoint"
    for path, relation in (("/data", "holds"), ("/data/cp", "is"), ("/data/cp/x", "lies inside")):
        source = {"name": "ticks", "format": "json", "schema": "a INT", "path": path}
        errors = own_overlaps_of(changed(base, ("spec.pipeline.inputs[0]", source)))
        assert errors == {
            "spec.pipeline.inputs[0].path": (
                f"file://{path} {relation} the job's own checkpoint; {rule}"
            )
        }
    elsewhere = {"name": "ticks", "format": "json", "schema": "a INT", "path": "/data/cpx"}
    assert own_overlaps_of(changed(base, ("spec.pipeline.inputs[0]", elsewhere))) == {}
