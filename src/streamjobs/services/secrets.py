"""The secret use cases: put, list and delete the named secrets of a bundle, and resolve them for
a driver's launch.

Values go into the store sealed (``SecretBox``) and come out only through ``resolve``, which the
supervisor calls when it starts a driver: no other path returns a value, so no API response, page
or audit entry can hold one. Every change leaves an audit entry naming the bundle and the secret.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from streamjobs.domain.access import Actor, Permission
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import InvalidInput, NotFound
from streamjobs.domain.secrets import name_errors, value_errors
from streamjobs.services.access import require_bundle_permission
from streamjobs.services.resources import audit, on_fresh_reads
from streamjobs.services.secret_box import SecretBox
from streamjobs.store.db import Repositories, Store
from streamjobs.store.secrets import SecretRecord

KIND = "secret"


class PutOutcome(StrEnum):
    CREATED = "created"
    REPLACED = "replaced"


@dataclass(frozen=True)
class Resealed:
    """What ``reseal_all`` did: how many secrets it sealed anew, of how many stored."""

    resealed: int
    secrets: int


class SecretService:
    """Keeps the secrets of bundles on behalf of an actor."""

    def __init__(self, *, store: Store, clock: Clock, box: SecretBox) -> None:
        self._store = store
        self._clock = clock
        self._box = box

    def put(
        self, bundle: str, name: str, value: str, *, actor: Actor
    ) -> tuple[SecretRecord, PutOutcome]:
        """Create the secret, or replace its value (a new version)."""
        errors = name_errors(name) + value_errors(value)
        if errors:
            raise InvalidInput(errors)
        ciphertext = self._box.seal(value, context=_context(bundle, name))
        now = self._clock.now()
        with self._store.transaction() as repos:
            require_bundle_permission(repos, actor, bundle, Permission.UPDATE, "changing a secret")
            current = repos.secrets.find(bundle, name)
            if current is None:
                record = repos.secrets.add(
                    bundle=bundle, name=name, ciphertext=ciphertext, actor=actor.name, at=now
                )
                outcome = PutOutcome.CREATED
            else:
                record = repos.secrets.replace(
                    bundle,
                    name,
                    expected_version=current.version,
                    ciphertext=ciphertext,
                    actor=actor.name,
                    at=now,
                )
                outcome = PutOutcome.REPLACED
            self._audit(repos, actor, f"secret.{outcome}", record)
        return record, outcome

    def list(self, bundle: str, *, actor: Actor) -> builtins.list[SecretRecord]:
        """The bundle's secrets, by name, without their values (for those who may see its jobs)."""
        with self._store.transaction() as repos:
            require_bundle_permission(repos, actor, bundle, Permission.VIEW, "listing secrets")
            return repos.secrets.list(bundle)

    def delete(self, bundle: str, name: str, *, actor: Actor) -> None:
        """Delete the secret; ``NotFound`` if the bundle has none so named."""
        if name_errors(name):
            raise NotFound(KIND, name)
        with self._store.transaction() as repos:
            require_bundle_permission(repos, actor, bundle, Permission.UPDATE, "deleting a secret")
            record = repos.secrets.delete(bundle, name)
            self._audit(repos, actor, "secret.deleted", record)

    def resolve(self, bundle: str, names: Iterable[str]) -> dict[str, str]:
        """The values of those of ``names`` the bundle has, by name; a name it lacks (or that no
        secret can have) is left out, for the caller to say where it was needed."""
        wanted = {name for name in names if not name_errors(name)}
        with self._store.transaction() as repos:
            sealed = repos.secrets.ciphertexts(bundle, wanted)
        return {
            name: self._box.open(ciphertext, context=_context(bundle, name))
            for name, ciphertext in sealed.items()
        }

    def reseal_all(self) -> Resealed:
        """Seal every stored secret that is not under the sealing key anew under it, in one
        transaction (the server's machine only: for a rotated key), made again from a fresh read
        if a secret is put meanwhile. A secret none of the keys opens stops it, and then nothing
        is resealed."""
        return on_fresh_reads(self._reseal_all)

    def _reseal_all(self) -> Resealed:
        with self._store.transaction() as repos:
            sealed = repos.secrets.all_ciphertexts()
            stale = {
                where: ciphertext
                for where, ciphertext in sealed.items()
                if not self._box.opens_with_first_key(ciphertext, context=_context(*where))
            }
            for (bundle, name), ciphertext in sorted(stale.items()):
                value = self._box.open(ciphertext, context=_context(bundle, name))
                resealed = self._box.seal(value, context=_context(bundle, name))
                repos.secrets.reseal(bundle, name, was=ciphertext, ciphertext=resealed)
        return Resealed(resealed=len(stale), secrets=len(sealed))

    def _audit(self, repos: Repositories, actor: Actor, action: str, record: SecretRecord) -> None:
        audit(
            repos,
            self._clock,
            actor,
            action,
            kind=KIND,
            name=f"{record.bundle}/{record.name}",
            detail={"bundle": record.bundle, "secret": record.name, "version": record.version},
        )


def _context(bundle: str, name: str) -> str:
    return f"{bundle}/{name}"
