"""No two jobs share a checkpoint or write the same output, and none reads inside another's
checkpoint: the check ``JobService`` makes when it writes a job, and the claims it then keeps.

A job being written claims its outputs and its checkpoint. Each runs into the claims of every
other job that lie at it, above it or below it; each location the job reads runs into the
checkpoints at or above it (reading a directory that holds other jobs' checkpoints is allowed,
reading inside one is not). Any of these is a ``LocationTaken`` (409) at the field, naming the
other job if the actor may see it, and "another job" if not.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from streamjobs.domain.access import Actor, BundleGrant, JobAction, JobRef, job_actions
from streamjobs.domain.errors import FieldError, LocationTaken
from streamjobs.domain.job_locations import Access, JobLocation
from streamjobs.domain.location_claims import (
    ClaimKind,
    claim_uri,
    enclosing,
    enclosing_paths,
    job_claims,
    path_under,
)
from streamjobs.domain.locations import LocationError, is_within, normalized_uri
from streamjobs.domain.manifest import StreamingJob
from streamjobs.services.access import grants_for
from streamjobs.store.db import Repositories
from streamjobs.store.job_claims import ClaimHolder

_SHARED = "two jobs may not share a checkpoint or write the same output, nor one inside the other"
_READ = "a job may not read inside another job's checkpoint"


def claim_locations(
    job: StreamingJob,
    locations: Sequence[JobLocation],
    repos: Repositories,
    *,
    actor: Actor,
    checkpoint_root: str,
) -> None:
    """Store ``job``'s claims, or raise ``LocationTaken`` for each of its locations that runs
    into another job's claim. Call it in the transaction that writes the job, after the job."""
    repos.claims.lock()
    claims = job_claims(job, locations)
    finder = _ClaimFinder(repos, job.name, checkpoint_root)
    taken: list[_Taken] = []
    for claim in claims:
        uri = claim_uri(claim, checkpoint_root)
        holder = finder.first(uri, kinds=tuple(ClaimKind), below=True)
        if holder is not None:
            taken.append(_Taken(claim.field, uri, holder, _SHARED))
    for location in locations:
        read = _read_uri(location)
        if read is not None:
            holder = finder.first(read, kinds=(ClaimKind.CHECKPOINT,), below=False)
            if holder is not None:
                taken.append(_Taken(location.field, read, holder, _READ))
    if taken:
        grants = grants_for(repos, actor)
        raise LocationTaken([_conflict(each, actor, grants, checkpoint_root) for each in taken])
    repos.claims.replace(job.name, claims)


class _Taken(NamedTuple):
    field: str
    uri: str
    holder: ClaimHolder
    rule: str


class _ClaimFinder:
    """Finds other jobs' claims around a location, among URIs and derived checkpoints alike."""

    def __init__(self, repos: Repositories, job: str, checkpoint_root: str) -> None:
        self._claims = repos.claims
        self._job = job
        self._root = checkpoint_root

    def first(self, uri: str, *, kinds: Collection[ClaimKind], below: bool) -> ClaimHolder | None:
        """The first claim at or above ``uri`` (and below it, with ``below``), by job name."""
        claims, job = self._claims, self._job
        found = claims.at(enclosing(uri), derived=False, other_than=job, kinds=kinds)
        if below:
            found += claims.below(uri, derived=False, other_than=job, kinds=kinds)
        under_root = path_under(uri, self._root)
        if under_root is not None:
            found += claims.at(
                enclosing_paths(under_root), derived=True, other_than=job, kinds=kinds
            )
            if below:
                found += claims.below(under_root, derived=True, other_than=job, kinds=kinds)
        elif below and is_within(self._root, uri):
            found += claims.below("", derived=True, other_than=job, kinds=kinds)
        return min(found, key=lambda holder: (holder.job, holder.claim.location), default=None)


def _read_uri(location: JobLocation) -> str | None:
    if location.access is not Access.READ or location.location is None:
        return None
    try:
        return normalized_uri(location.location)
    except LocationError:
        return None


def _conflict(
    taken: _Taken, actor: Actor, grants: Sequence[BundleGrant], checkpoint_root: str
) -> FieldError:
    holder, uri = taken.holder, taken.uri
    visible = job_actions(actor.principal, grants, JobRef(holder.job, holder.bundle))
    job = f"job {holder.job!r}" if visible[JobAction.VIEW] is None else "another job"
    theirs = claim_uri(holder.claim, checkpoint_root)
    relation = "is" if theirs == uri else "lies inside" if is_within(uri, theirs) else "holds"
    what = "the checkpoint" if holder.claim.kind is ClaimKind.CHECKPOINT else "an output"
    return FieldError(taken.field, f"{uri} {relation} {what} of {job}; {taken.rule}")
