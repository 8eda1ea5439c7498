"""What a job claims (its outputs and its checkpoint), and the lookups that find the claims
around a location."""

from __future__ import annotations

from streamjobs.domain.job_locations import job_locations
from streamjobs.domain.location_claims import (
    Claim,
    ClaimKind,
    claim_uri,
    enclosing,
    enclosing_paths,
    job_claims,
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
