"""What ties jobs to notification destinations: a job may name only destinations that exist
(``destination_errors``, checked in the transaction that writes the job, see
``services.job_references``), and a destination a job names cannot be deleted (``jobs_naming``,
checked in the transaction that deletes it, see ``DestinationService.delete``).

On PostgreSQL the destinations a job names are read locked for share, so a job written and its
destination deleted at the same time cannot both land: one waits for the other and sees it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from streamjobs.domain.errors import FieldError
from streamjobs.store.db import Repositories


def destination_errors(
    subscriptions: Iterable[Any], repos: Repositories, *, lock_for_share: bool = True
) -> list[FieldError]:
    """An error at ``spec.notifications[i].destination`` for each subscription (a
    ``domain.alerts.Subscription``) naming a destination that does not exist. With
    ``lock_for_share`` the destinations found cannot be deleted until the transaction ends, so
    a job being written and a delete of its destination cannot both land."""
    named = [subscription.destination for subscription in subscriptions]
    if not named:
        return []
    existing = repos.destinations.existing(named, lock_for_share=lock_for_share)
    errors = []
    for index, name in enumerate(named):
        if name not in existing:
            errors.append(
                FieldError(
                    f"spec.notifications[{index}].destination",
                    f"notification destination {name!r} does not exist (see "
                    "`streamjobs get destinations`, or Settings -> Notifications)",
                )
            )
    return errors


def jobs_naming(repos: Repositories, destination: str) -> list[str]:
    """The jobs whose stored ``spec.notifications`` name ``destination``, sorted."""
    users = []
    for job, manifest in repos.jobs.manifests_mentioning(f'"{destination}"').items():
        spec = manifest.get("spec") if isinstance(manifest, Mapping) else None
        subscriptions = spec.get("notifications") if isinstance(spec, Mapping) else None
        if isinstance(subscriptions, list) and any(
            isinstance(item, Mapping) and item.get("destination") == destination
            for item in subscriptions
        ):
            users.append(job)
    return sorted(users)
