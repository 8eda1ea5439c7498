"""What the use cases of every kind of resource (jobs, connections) do the same way.

Applying a manifest says whether it created, changed or left the resource alone; a resource's name
never changes; lists come in pages of bounded size; every change leaves an audit entry in the
transaction that makes it; and clients see a stored manifest with the metadata the server owns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

import orjson
from pydantic import BaseModel

from streamjobs.domain.access import Actor
from streamjobs.domain.clock import Clock
from streamjobs.domain.errors import AlreadyExists, FieldError, InvalidInput, StaleVersion
from streamjobs.store import TagFilter
from streamjobs.store.db import Repositories

MAX_PAGE_SIZE = 500
LARGEST_INTEGER = 2**63 - 1
"""The largest whole number that may reach the store as a query's value (an offset, an id): what
both stores' integers and OFFSET hold, so that a larger one is bad input, not an overflow."""

Item = TypeVar("Item")


class ApplyOutcome(StrEnum):
    """What an apply did, so applying the same manifest twice can say it changed nothing."""

    CREATED = "created"
    CONFIGURED = "configured"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Page(Generic[Item]):
    """One page of a list and how many items match in all."""

    items: list[Item]
    total: int
    limit: int
    offset: int


class StoredRecord(Protocol):
    """What the store keeps about every versioned resource."""

    @property
    def id(self) -> str: ...
    @property
    def manifest(self) -> dict[str, Any]: ...
    @property
    def version(self) -> int: ...
    @property
    def created_by(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def updated_by(self) -> str: ...
    @property
    def updated_at(self) -> datetime: ...


def stored_form(manifest: BaseModel) -> dict[str, Any]:
    """A parsed manifest as the store keeps it: JSON data, camelCase keys, defaults filled in."""
    return manifest.model_dump(by_alias=True, mode="json")


def iso_time(moment: datetime) -> str:
    """``moment.isoformat()``, the same text, written by orjson in a fifth of the time (a list
    of applications writes seven a row)."""
    return orjson.dumps(moment)[1:-1].decode()


def with_server_metadata(record: StoredRecord) -> dict[str, Any]:
    """The stored manifest with the metadata the server owns (``uid``, ``resourceVersion``, …),
    which ``split_server_fields`` drops again when the document is applied back."""
    document = dict(record.manifest)
    document["metadata"] = dict(
        record.manifest["metadata"],
        uid=record.id,
        resourceVersion=str(record.version),
        creationTimestamp=iso_time(record.created_at),
        createdBy=record.created_by,
        updateTimestamp=iso_time(record.updated_at),
        updatedBy=record.updated_by,
    )
    return document


def require_same_name(kind: str, name: str, manifest_name: str, *, instead: str) -> None:
    """``InvalidInput`` at ``metadata.name`` unless the manifest keeps the resource's name;
    ``instead`` says how to get the resource under a new name."""
    if manifest_name != name:
        raise InvalidInput(
            [
                FieldError(
                    "metadata.name",
                    f"a {kind}'s name cannot change (it is {name!r}, the manifest says "
                    f"{manifest_name!r}); {instead}",
                )
            ]
        )


def tag_filter(text: str) -> TagFilter:
    """A list's ``tag`` query, ``key`` or ``key=value``; ``InvalidInput`` at ``query.tag``."""
    key, separator, value = text.partition("=")
    if not key:
        raise InvalidInput([FieldError("query.tag", "give a tag as key or key=value")])
    return key, (value if separator else None)


def check_page(limit: int, offset: int) -> None:
    """``InvalidInput`` at ``query.limit`` / ``query.offset`` for a page out of bounds."""
    errors = []
    if not 1 <= limit <= MAX_PAGE_SIZE:
        errors.append(FieldError("query.limit", f"must be between 1 and {MAX_PAGE_SIZE}"))
    if not 0 <= offset <= LARGEST_INTEGER:
        errors.append(FieldError("query.offset", f"must be between 0 and {LARGEST_INTEGER}"))
    if errors:
        raise InvalidInput(errors)


def audit(
    repos: Repositories,
    clock: Clock,
    actor: Actor,
    action: str,
    *,
    kind: str,
    name: str,
    detail: dict[str, Any],
) -> None:
    """Record that ``actor`` did ``action`` (e.g. ``connection.created``) to a resource, in the
    transaction of ``repos``, so the entry lands exactly when the change does."""
    repos.audit.append(
        at=clock.now(),
        actor=actor.name,
        action=action,
        resource_kind=kind,
        resource_name=name,
        detail=detail,
        source=actor.source,
    )


Outcome = TypeVar("Outcome")

FRESH_READ_ATTEMPTS = 5
"""How often ``on_fresh_reads`` tries a change that other changes keep overtaking."""


def on_fresh_reads(
    change: Callable[[], Outcome], *, attempts: int = FRESH_READ_ATTEMPTS
) -> Outcome:
    """Run ``change`` (a whole transaction that reads what it changes) again while another
    change commits between its read and its write; the last ``StaleVersion`` is raised.

    Only for changes decided anew on each read: a change that names the version a client read
    must fail instead, so that the client sees what changed."""
    for _ in range(attempts - 1):
        try:
            return change()
        except StaleVersion:
            continue
    return change()


UNVERSIONED_APPLY_ATTEMPTS = 10
"""How often ``decided_on_content`` tries an apply that concurrent applies keep overtaking."""


def decided_on_content(
    change: Callable[[], Outcome],
    *,
    expected_version: int | None,
    attempts: int = UNVERSIONED_APPLY_ATTEMPTS,
) -> Outcome:
    """Run ``change``, an apply (a whole transaction that reads the resource and creates,
    changes or leaves it), again while a concurrent change overtakes it between its read and
    its write (``StaleVersion``, or ``AlreadyExists`` for two creates of one name), as long as
    the client named no version: such an apply wins or loses on its content, never on a race
    it did not take part in. One that names the version it read fails instead (a ``Conflict``),
    so that the client sees what changed."""
    if expected_version is not None:
        return change()
    for _ in range(attempts - 1):
        try:
            return change()
        except (StaleVersion, AlreadyExists):
            continue
    return change()
