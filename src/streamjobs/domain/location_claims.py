"""The locations a job claims for itself, and which stored claims a location runs into.

Two jobs may not share a checkpoint or write the same output path or table, no job may read
at, inside or around another's checkpoint, and deleting a checkpoint must not take anything
else with it. Each job's outputs, checkpoint and inputs are stored as claims, so a new or
changed job is checked with a few indexed lookups instead of reading every manifest: another
job's claim conflicts when it equals a location, lies above it (``enclosing``) or below it (a
prefix match on ``location + "/"``). Within one job, ``own_overlaps`` refuses an output or
input at or inside its own checkpoint (and an input around it).

A checkpoint the server derives is claimed by its path under the checkpoint root
(``/<namespace>/<name>``), not by its URI, so the claim follows the root if the server's
settings move it.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import NamedTuple

from streamjobs.domain.errors import FieldError
from streamjobs.domain.job_locations import Access, JobLocation
from streamjobs.domain.locations import LocationError, is_within, normalized_uri, overlaps
from streamjobs.domain.manifest import StreamingJob
from streamjobs.domain.spec import derived_checkpoint_location

CHECKPOINT_FIELD = "spec.pipeline.streaming.checkpointLocation"
_PLACEHOLDER_ROOT = "file:///checkpoint-root"


class ClaimKind(StrEnum):
    """What a job does at a location it claims."""

    OUTPUT = "output"
    CHECKPOINT = "checkpoint"
    INPUT = "input"
    """A location it reads: others may write there, but none may checkpoint at, in or around it."""


WRITTEN = (ClaimKind.OUTPUT, ClaimKind.CHECKPOINT)
"""The kinds of claim no two jobs may hold at, inside or around one another."""


class Claim(NamedTuple):
    """One location a job claims, as stored."""

    location: str
    """A normalized URI, or for a ``derived`` checkpoint its path under the checkpoint root."""
    derived: bool
    kind: ClaimKind
    field: str
    """The manifest field that names it."""


def job_claims(job: StreamingJob, locations: Sequence[JobLocation]) -> list[Claim]:
    """The claims of ``job``: each output of ``locations``, its checkpoint, then each input,
    once each (a location it both writes and reads is claimed as written).

    Locations that do not normalize (refused by ``location_errors``) are left out, and so is
    a derived checkpoint among ``locations``: it is claimed by its path under the root."""
    claims: dict[str, Claim] = {}
    for location in locations:
        if location.access in _WRITE_ACCESS:
            _add_claim(claims, location)
    derived = derived_checkpoint_path(job)
    if derived is not None:
        claims.setdefault(derived, Claim(derived, True, ClaimKind.CHECKPOINT, CHECKPOINT_FIELD))
    for location in locations:
        if location.access is Access.READ:
            _add_claim(claims, location)
    return list(claims.values())


def own_overlaps(locations: Sequence[JobLocation]) -> list[FieldError]:
    """A ``FieldError`` for each output of a job at or inside its own checkpoint, and each input
    at, inside or around it: deleting the checkpoint would take them with it, and a query reading
    it would read the stream's offsets as data."""
    checkpoints = [_uri_of(each) for each in locations if each.access is Access.CHECKPOINT]
    checkpoint = next((uri for uri in checkpoints if uri is not None), None)
    if checkpoint is None:
        return []
    errors = []
    for location in locations:
        uri = _uri_of(location)
        if uri is None:
            continue
        relation = "is" if uri == checkpoint else "lies inside"
        if location.access is Access.WRITE and is_within(uri, checkpoint):
            rule = "an output may not lie in it: deleting the checkpoint would delete the output"
        elif location.access is Access.READ and overlaps(uri, checkpoint):
            relation = relation if is_within(uri, checkpoint) else "holds"
            rule = "a job may not read at, inside or around its own checkpoint"
        else:
            continue
        errors.append(
            FieldError(location.field, f"{uri} {relation} the job's own checkpoint; {rule}")
        )
    return errors


def derived_checkpoint_path(job: StreamingJob) -> str | None:
    """``/<namespace>/<name>``: where under the checkpoint root the server checkpoints ``job``;
    None when the job sets its own checkpoint, or has none (not a pipeline)."""
    pipeline = job.spec.pipeline
    if pipeline is None or pipeline.streaming.checkpoint_location is not None:
        return None
    uri = normalized_uri(derived_checkpoint_location(job, _PLACEHOLDER_ROOT))
    return uri.removeprefix(_PLACEHOLDER_ROOT)


def claim_uri(claim: Claim, checkpoint_root: str) -> str:
    """The claim's location as a URI, a derived checkpoint's under ``checkpoint_root``."""
    if not claim.derived:
        return claim.location
    return normalized_uri(checkpoint_root) + claim.location


def enclosing(uri: str) -> list[str]:
    """``uri`` and every location above it, nearest first, all normalized:
    ``file:///a/b`` -> ``file:///a/b``, ``file:///a``, ``file:///``."""
    scheme, _, rest = normalized_uri(uri).partition("://")
    authority, _, path = rest.partition("/")
    prefix = f"{scheme}://{authority}"
    top = prefix + "/" if scheme == "file" else prefix
    return [prefix + above for above in enclosing_paths(path)] + [top]


def enclosing_paths(path: str) -> list[str]:
    """``path`` and every path above it but ``/``, nearest first: ``/a/b`` -> ``/a/b``, ``/a``."""
    parts = [part for part in path.split("/") if part]
    return ["/" + "/".join(parts[:count]) for count in range(len(parts), 0, -1)]


def path_under(uri: str, root: str) -> str | None:
    """``uri``'s path below ``root`` (``/a/b``; ``""`` for the root itself), or None when it is
    not within it."""
    if not is_within(uri, root):
        return None
    normal_root = normalized_uri(root)
    below = normalized_uri(uri)[len(normal_root) :]
    return "/" + below if normal_root.endswith("/") and below else below


def _add_claim(claims: dict[str, Claim], location: JobLocation) -> None:
    uri = None if location.server_owned else _uri_of(location)
    if uri is not None:
        claims.setdefault(uri, Claim(uri, False, _KIND_OF[location.access], location.field))


def _uri_of(location: JobLocation) -> str | None:
    if location.location is None:
        return None
    try:
        return normalized_uri(location.location)
    except LocationError:
        return None


_KIND_OF = {
    Access.WRITE: ClaimKind.OUTPUT,
    Access.CHECKPOINT: ClaimKind.CHECKPOINT,
    Access.READ: ClaimKind.INPUT,
}
_WRITE_ACCESS = (Access.WRITE, Access.CHECKPOINT)
