"""The examples, and the README's copy of one, reach only what ``make run``'s default bundle
allows, and no two of them claim one place: the server loads them all at its first start."""

from __future__ import annotations

from pathlib import Path

from streamjobs.domain.connections import Connection
from streamjobs.domain.job_locations import job_locations, location_errors
from streamjobs.domain.location_claims import job_claims
from streamjobs.domain.spec import StreamingJob, load_documents, parse_manifest
from streamjobs.settings import Settings
from tests.unit.test_examples import EXAMPLES, all_examples

HOME = Path("/home/me/streamjobs/.streamjobs")
CHECKPOINT_ROOT = (HOME / "checkpoints").as_uri()


def make_run_roots() -> list[str]:
    """The ``default`` bundle's roots of a server started with no settings (the tests' own
    environment sets others)."""
    default = Settings.model_fields["default_data_roots"].default_factory
    assert default is not None
    roots: list[str] = default()  # type: ignore[call-arg]
    return roots


def example_jobs() -> tuple[list[StreamingJob], dict[str, Connection]]:
    examples = all_examples()
    connections = {item.name: item for item in examples if isinstance(item, Connection)}
    return [item for item in examples if isinstance(item, StreamingJob)], connections


def readme_copy() -> StreamingJob:
    """``sed 's/rate-to-parquet/my-ticks/' examples/rate-to-parquet.yaml``, as the README runs."""
    text = (EXAMPLES / "rate-to-parquet.yaml").read_text(encoding="utf-8")
    (document,) = load_documents(text.replace("rate-to-parquet", "my-ticks"), source="my-ticks")
    return parse_manifest(document, checkpoint_root=CHECKPOINT_ROOT)


def test_every_example_lies_under_the_default_roots() -> None:
    jobs, connections = example_jobs()
    assert make_run_roots() == ["file:///tmp/streamjobs"]
    for job in [*jobs, readme_copy()]:
        locations = job_locations(job, connections, checkpoint_root=CHECKPOINT_ROOT)
        errors = location_errors(
            locations, bundle="default", roots=make_run_roots(), protected_roots=[HOME.as_uri()]
        )
        assert errors == [], job.name


def test_no_two_examples_claim_one_place() -> None:
    jobs, connections = example_jobs()
    claimed = [
        claim.location
        for job in [*jobs, readme_copy()]
        for claim in job_claims(job, job_locations(job, connections, checkpoint_root=None))
    ]
    assert len(claimed) == len(set(claimed))
