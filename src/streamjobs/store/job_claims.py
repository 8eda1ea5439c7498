"""The locations jobs claim (their outputs, checkpoints and inputs), kept beside the jobs so that
a job being written is checked against the others with indexed lookups, not by reading every
manifest.

A job's claims are replaced whenever it is written and go with it when it is deleted (the
foreign key cascades). What counts as a conflict is the services' to decide; this module finds
the claims at, above or below a location.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import Select, delete, func, insert, select

from streamjobs.domain.location_claims import Claim, ClaimKind
from streamjobs.store.base import Repository
from streamjobs.store.tables import JobClaimRow, JobRow

CLAIMS_LOCK_ID = 0x434C4149
"""PostgreSQL advisory lock key ("CLAI") held by a transaction that checks and writes claims,
so two jobs written at once cannot both take the same place."""


@dataclass(frozen=True)
class ClaimHolder:
    """A claim of another job, with what a message about it needs."""

    job: str
    bundle: str
    claim: Claim


class ClaimRepository(Repository):
    """Replaces a job's claims and finds the claims of other jobs around a location."""

    def lock(self) -> None:
        """Hold the claims until this transaction ends, against other writers of claims. On
        SQLite every writing transaction already excludes the others (a job's row is written
        before its claims are checked)."""
        if self._session.get_bind().dialect.name == "postgresql":
            self._read(_ADVISORY_LOCK)

    def replace(self, job: str, claims: Sequence[Claim]) -> None:
        """Make ``claims`` the claims of the job called ``job``."""
        job_id = self._session.scalar(select(JobRow.id).where(JobRow.name == job))
        if job_id is None:
            return
        self._session.execute(delete(JobClaimRow).where(JobClaimRow.job_id == job_id))
        if claims:
            rows = [
                {
                    "job_id": job_id,
                    "location": claim.location,
                    "derived": claim.derived,
                    "kind": str(claim.kind),
                    "field": claim.field,
                }
                for claim in claims
            ]
            self._session.execute(insert(JobClaimRow), rows)

    def of_job(self, job: str) -> list[Claim]:
        """The claims of the job called ``job``, by location."""
        statement = (
            select(JobClaimRow)
            .join(JobRow, JobRow.id == JobClaimRow.job_id)
            .where(JobRow.name == job)
            .order_by(JobClaimRow.location)
        )
        return [_claim(row) for row in self._session.scalars(statement)]

    def at(
        self,
        locations: Collection[str],
        *,
        derived: bool,
        other_than: str,
        kinds: Collection[ClaimKind] = tuple(ClaimKind),
    ) -> list[ClaimHolder]:
        """Claims of jobs but ``other_than`` at any of ``locations`` (exactly)."""
        if not locations:
            return []
        statement = _others(derived, other_than, kinds).where(
            JobClaimRow.location.in_(list(locations))
        )
        return self._holders(statement)

    def below(
        self,
        location: str,
        *,
        derived: bool,
        other_than: str,
        kinds: Collection[ClaimKind] = tuple(ClaimKind),
    ) -> list[ClaimHolder]:
        """Claims of jobs but ``other_than`` strictly below ``location``; ``""`` (the top of
        the derived checkpoints) finds every derived one."""
        prefix = location.rstrip("/") + "/"
        statement = _others(derived, other_than, kinds).where(
            JobClaimRow.location.startswith(prefix, autoescape=True)
        )
        return self._holders(statement)

    def _holders(self, statement: Select[JobClaimRow, str, str]) -> list[ClaimHolder]:
        return [
            ClaimHolder(job=name, bundle=bundle, claim=_claim(row))
            for row, name, bundle in self._session.execute(statement.limit(_MOST_REPORTED))
        ]


_ADVISORY_LOCK = select(func.pg_advisory_xact_lock(CLAIMS_LOCK_ID))
_MOST_REPORTED = 20
"""A location held by more claims than this is refused all the same; the rest add nothing."""


def _others(
    derived: bool, other_than: str, kinds: Collection[ClaimKind]
) -> Select[JobClaimRow, str, str]:
    return (
        select(JobClaimRow, JobRow.name, JobRow.bundle)
        .join(JobRow, JobRow.id == JobClaimRow.job_id)
        .where(
            JobClaimRow.derived == derived,
            JobRow.name != other_than,
            JobClaimRow.kind.in_([str(kind) for kind in kinds]),
        )
        .order_by(JobRow.name, JobClaimRow.location)
    )


def _claim(row: JobClaimRow) -> Claim:
    return Claim(
        location=row.location, derived=row.derived, kind=ClaimKind(row.kind), field=row.field
    )
