"""Named secrets of resource bundles in the store, as ciphertext only.

The store never sees a secret's value: the services seal it before it gets here and open it
after it leaves. Records carry names and bookkeeping; ciphertexts are read apart, by name, for
the one use that needs them (a driver's launch).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from datetime import datetime
from uuid import uuid4

from sqlalchemy import Select, select, update

from streamjobs.domain.errors import AlreadyExists, NotFound, StaleVersion
from streamjobs.store.base import VersionedRepository
from streamjobs.store.tables import SecretRow

KIND = "secret"


@dataclass(frozen=True)
class SecretRecord:
    """A secret as lists show it: everything but its value."""

    id: str
    bundle: str
    name: str
    version: int
    created_by: str
    created_at: datetime
    updated_by: str
    updated_at: datetime


class SecretRepository(VersionedRepository):
    """Adds, replaces, lists and deletes the secrets of bundles."""

    _table = SecretRow
    _kind = KIND

    def add(
        self, *, bundle: str, name: str, ciphertext: bytes, actor: str, at: datetime
    ) -> SecretRecord:
        """Store a new secret at version 1; ``AlreadyExists`` if the bundle has one so named."""
        if self.find(bundle, name) is not None:
            raise AlreadyExists(KIND, name)
        row = SecretRow(
            id=str(uuid4()),
            bundle=bundle,
            name=name,
            ciphertext=ciphertext,
            created_by=actor,
            created_at=at,
            updated_by=actor,
            updated_at=at,
        )
        self._insert_unique(row, kind=KIND, name=name)
        return _record(row)

    def replace(
        self,
        bundle: str,
        name: str,
        *,
        expected_version: int,
        ciphertext: bytes,
        actor: str,
        at: datetime,
    ) -> SecretRecord:
        """Give the secret a new ciphertext and bump its version; ``Conflict`` if it is no
        longer at ``expected_version``, ``NotFound`` if it is gone."""
        current = self.get(bundle, name)
        self._update_versioned(
            current.id,
            name,
            expected_version=expected_version,
            ciphertext=ciphertext,
            updated_by=actor,
            updated_at=at,
        )
        return self.get(bundle, name)

    def get(self, bundle: str, name: str) -> SecretRecord:
        """The bundle's secret called ``name``; ``NotFound`` if there is none."""
        record = self.find(bundle, name)
        if record is None:
            raise NotFound(KIND, name)
        return record

    def find(self, bundle: str, name: str) -> SecretRecord | None:
        row = self._session.scalars(_select(bundle).where(SecretRow.name == name)).one_or_none()
        return None if row is None else _record(row)

    def list(self, bundle: str) -> builtins.list[SecretRecord]:
        """Every secret of the bundle, by name."""
        rows = self._session.scalars(_select(bundle).order_by(SecretRow.name))
        return [_record(row) for row in rows]

    def ciphertexts(self, bundle: str, names: set[str]) -> dict[str, bytes]:
        """The ciphertexts of those of ``names`` the bundle has, by name."""
        if not names:
            return {}
        rows = self._session.execute(
            select(SecretRow.name, SecretRow.ciphertext).where(
                SecretRow.bundle == bundle, SecretRow.name.in_(sorted(names))
            )
        )
        return {name: bytes(ciphertext) for name, ciphertext in rows}

    def all_ciphertexts(self) -> dict[tuple[str, str], bytes]:
        """Every secret's ciphertext by (bundle, name)."""
        rows = self._session.execute(select(SecretRow.bundle, SecretRow.name, SecretRow.ciphertext))
        return {(bundle, name): bytes(ciphertext) for bundle, name, ciphertext in rows}

    def reseal(self, bundle: str, name: str, *, was: bytes, ciphertext: bytes) -> None:
        """Store the same value sealed anew (under another key), if the secret still holds the
        ciphertext ``was``: version and dates stay. ``StaleVersion`` if it was put meanwhile."""
        resealed = self._rows_changed(
            update(SecretRow)
            .where(SecretRow.bundle == bundle, SecretRow.name == name, SecretRow.ciphertext == was)
            .values(ciphertext=ciphertext)
        )
        if not resealed:
            raise StaleVersion(f"secret {bundle}/{name} changed while it was being resealed")

    def delete(self, bundle: str, name: str) -> SecretRecord:
        """Delete the bundle's secret; ``NotFound`` if there is none. Returns what it was."""
        record = self.get(bundle, name)
        self._delete_versioned(record.id, name, None)
        return record


def _select(bundle: str) -> Select[SecretRow]:
    return (
        select(SecretRow)
        .where(SecretRow.bundle == bundle)
        .execution_options(populate_existing=True)
    )


def _record(row: SecretRow) -> SecretRecord:
    return SecretRecord(
        id=row.id,
        bundle=row.bundle,
        name=row.name,
        version=row.version,
        created_by=row.created_by,
        created_at=row.created_at,
        updated_by=row.updated_by,
        updated_at=row.updated_at,
    )
