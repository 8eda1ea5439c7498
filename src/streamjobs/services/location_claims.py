"""No two jobs share a checkpoint or write the same output, and no checkpoint overlaps where
another job reads: the check ``JobService`` makes when it writes a job, the claims it then keeps,
and (``claims_within``) what a checkpoint about to be deleted would take with it.

A job being written claims its outputs, its checkpoint and its inputs. Each output and the
checkpoint runs into the outputs and checkpoints of every other job that lie at it, above it or
below it; the checkpoint also runs into other jobs' inputs there, and each location the job reads
into other jobs' checkpoints there (Spark would read a stream's offsets as data, and deleting the
checkpoint would delete the input). Any of these is a ``LocationTaken`` (409) at the field, naming
the other job if the actor may see it, and "another job" if not. Within the job, an output or
input in its own checkpoint is ``InvalidInput`` (422, ``own_overlaps``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

from streamjobs.domain.access import Actor, BundleGrant, JobAction, JobRef, job_actions
from streamjobs.domain.errors import FieldError, InvalidInput, LocationTaken
from streamjobs.domain.job_locations import JobLocation
from streamjobs.domain.location_claims import (
    WRITTEN,
    ClaimKind,
    claim_uri,
    enclosing,
    enclosing_paths,
    job_claims,
    own_overlaps,
    path_under,
)
from streamjobs.domain.locations import is_within, normalized_uri
from streamjobs.domain.manifest import StreamingJob
from streamjobs.services.access import grants_for
from streamjobs.store.db import Repositories
from streamjobs.store.job_claims import ClaimHolder

_SHARED = "two jobs may not share a checkpoint or write the same output, nor one inside the other"
_READ = "a job may not read at, inside or around another job's checkpoint"
_READ_THERE = "a checkpoint may not lie at, inside or around where another job reads"


def claim_locations(
    job: StreamingJob,
    locations: Sequence[JobLocation],
    repos: Repositories,
    *,
    actor: Actor,
    checkpoint_root: str,
) -> None:
    """Store ``job``'s claims, or raise ``InvalidInput`` for each of its locations in its own
    checkpoint, else ``LocationTaken`` for each that runs into another job's claim. Call it in the
    transaction that writes the job, after the job."""
    own = own_overlaps(locations)
    if own:
        raise InvalidInput(own)
    repos.claims.lock()
    claims = job_claims(job, locations)
    finder = _ClaimFinder(repos, job.name, checkpoint_root)
    taken: list[_Taken] = []
    for claim in claims:
        uri = claim_uri(claim, checkpoint_root)
        if claim.kind is ClaimKind.INPUT:
            holder = finder.first(uri, kinds=(ClaimKind.CHECKPOINT,), below=True)
            rule = _READ
        else:
            holder = finder.first(uri, kinds=WRITTEN, below=True)
            rule = _SHARED
            if holder is None and claim.kind is ClaimKind.CHECKPOINT:
                holder = finder.first(uri, kinds=(ClaimKind.INPUT,), below=True)
                rule = _READ_THERE
        if holder is not None:
            taken.append(_Taken(claim.field, uri, holder, rule))
    if taken:
        grants = grants_for(repos, actor)
        raise LocationTaken([_conflict(each, actor, grants, checkpoint_root) for each in taken])
    repos.claims.replace(job.name, claims)


def claims_within(
    repos: Repositories, uri: str, *, job: str, bundle: str, checkpoint_root: str
) -> list[ClaimHolder]:
    """Every claim at or below ``uri`` but the checkpoint of ``job`` (of ``bundle``): other
    jobs' claims of any kind, and ``job``'s own outputs and inputs."""
    others = _ClaimFinder(repos, job, checkpoint_root).within(uri, kinds=tuple(ClaimKind))
    own = [
        ClaimHolder(job, bundle, claim)
        for claim in repos.claims.of_job(job)
        if claim.kind is not ClaimKind.CHECKPOINT
        and is_within(claim_uri(claim, checkpoint_root), uri)
    ]
    return own + others


def claim_description(
    holder: ClaimHolder, actor: Actor, grants: Sequence[BundleGrant], checkpoint_root: str
) -> str:
    """``the input file:///x of job 'a'`` (``of another job`` when ``actor`` may not see it)."""
    what = {ClaimKind.OUTPUT: "output", ClaimKind.INPUT: "input"}.get(
        holder.claim.kind, "checkpoint"
    )
    return f"the {what} {claim_uri(holder.claim, checkpoint_root)} of {_job(holder, actor, grants)}"


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
        found = self._around(uri, kinds=kinds, above=True, below=below)
        return min(found, key=_by_job, default=None)

    def within(self, uri: str, *, kinds: Collection[ClaimKind]) -> list[ClaimHolder]:
        """The claims at or below ``uri``, by job name."""
        return sorted(self._around(uri, kinds=kinds, above=False, below=True), key=_by_job)

    def _around(
        self, uri: str, *, kinds: Collection[ClaimKind], above: bool, below: bool
    ) -> list[ClaimHolder]:
        claims, job = self._claims, self._job
        at = enclosing(uri) if above else [normalized_uri(uri)]
        found = claims.at(at, derived=False, other_than=job, kinds=kinds)
        if below:
            found += claims.below(uri, derived=False, other_than=job, kinds=kinds)
        under_root = path_under(uri, self._root)
        if under_root is not None:
            at_root = enclosing_paths(under_root) if above else [under_root]
            found += claims.at(at_root, derived=True, other_than=job, kinds=kinds)
            if below:
                found += claims.below(under_root, derived=True, other_than=job, kinds=kinds)
        elif below and is_within(self._root, uri):
            found += claims.below("", derived=True, other_than=job, kinds=kinds)
        return found


def _by_job(holder: ClaimHolder) -> tuple[str, str]:
    return holder.job, holder.claim.location


def _conflict(
    taken: _Taken, actor: Actor, grants: Sequence[BundleGrant], checkpoint_root: str
) -> FieldError:
    holder, uri = taken.holder, taken.uri
    theirs = claim_uri(holder.claim, checkpoint_root)
    relation = "is" if theirs == uri else "lies inside" if is_within(uri, theirs) else "holds"
    what = {ClaimKind.OUTPUT: "an output", ClaimKind.INPUT: "an input"}.get(
        holder.claim.kind, "the checkpoint"
    )
    job = _job(holder, actor, grants)
    return FieldError(taken.field, f"{uri} {relation} {what} of {job}; {taken.rule}")


def _job(holder: ClaimHolder, actor: Actor, grants: Sequence[BundleGrant]) -> str:
    visible = job_actions(actor.principal, grants, JobRef(holder.job, holder.bundle))
    return f"job {holder.job!r}" if visible[JobAction.VIEW] is None else "another job"
