"""Where each health rule of an application stands, for a job's Notifications tab.

Like ``services.catalog`` this reads states, not records to act on: the caller has already read
the job for the actor (``JobService.get`` checks that they may see it).
"""

from __future__ import annotations

from streamjobs.domain.health import RuleState
from streamjobs.store.db import Store


def rule_states(store: Store, application_id: str) -> dict[str, RuleState]:
    """The stored state of each of the application's health rules, by rule name (a rule not
    judged yet is absent)."""
    with store.reading() as repos:
        return repos.health.of(application_id)
