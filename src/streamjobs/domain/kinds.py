"""The kinds of manifest streamjobs knows, telling them apart, and the order they are applied in.

One file or directory given to ``streamjobs apply`` (or to the server's ``--load-examples``) may
hold jobs and the connections and notification destinations they use, in any order. Connections
and destinations go first, so that the datasets and subscriptions of a job name ones that exist
by the time the job arrives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Any, TypeVar

from streamjobs.domain.connections import Connection, parse_connection
from streamjobs.domain.destinations import NotificationDestination, parse_destination
from streamjobs.domain.documents import not_a_mapping
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.spec import StreamingJob, parse_manifest


class Kind(StrEnum):
    """A kind of manifest, in the order manifests are applied: connections and notification
    destinations before jobs."""

    CONNECTION = "Connection"
    NOTIFICATION_DESTINATION = "NotificationDestination"
    STREAMING_JOB = "StreamingJob"

    @property
    def label(self) -> str:
        """How the CLI names a resource of this kind: ``connection/kafka-main``."""
        return self.value.lower()


APPLY_ORDER = tuple(Kind)

Item = TypeVar("Item")


def kind_of(document: object, *, source: str | None = None) -> Kind:
    """The kind a manifest declares; ``InvalidInput`` at ``kind`` if it declares none we know."""
    *others, last = (kind.value for kind in Kind)
    known = f"{', '.join(others)} or {last}"
    if not isinstance(document, Mapping):
        raise InvalidInput([FieldError("", f"a manifest {not_a_mapping(document)}")], source=source)
    kind = document.get("kind")
    if kind is None:
        raise InvalidInput([FieldError("kind", f"is required: {known}")], source=source)
    try:
        return Kind(kind)
    except ValueError:
        raise InvalidInput(
            [FieldError("kind", f"{kind!r} is not a kind streamjobs knows: use {known}")],
            source=source,
        ) from None


def in_apply_order(items: Iterable[Item], kind: Callable[[Item], Kind]) -> list[Item]:
    """``items`` with every connection and destination before every job, each kind in the
    order given."""
    return sorted(items, key=lambda item: APPLY_ORDER.index(kind(item)))


def parse_resource(
    document: Mapping[str, Any], *, checkpoint_root: str | None = None, source: str | None = None
) -> StreamingJob | Connection | NotificationDestination:
    """Parse a manifest of any known kind with that kind's rules (see ``parse_manifest``,
    ``parse_connection`` and ``parse_destination``); ``InvalidInput`` lists every broken rule."""
    kind = kind_of(document, source=source)
    if kind is Kind.CONNECTION:
        return parse_connection(document, source=source)
    if kind is Kind.NOTIFICATION_DESTINATION:
        return parse_destination(document, source=source)
    return parse_manifest(document, checkpoint_root=checkpoint_root, source=source)
