"""Upgrades of a running application to its job's current spec: the modes, where an upgrade is
in its life, the watch after it, and how its two specs differ.

An upgrade stops the running application gracefully (a pipeline with an aligned snapshot of
kind ``upgrade``: the rollback point), starts the job's current spec (on the same checkpoint, on
a copy of that snapshot, or on a fresh checkpoint) and then watches the new application for
``spec.upgrade.rollbackWithinSeconds``. Failing in that window, or a health rule of it firing,
rolls the upgrade back: the previous spec and the snapshot go back, and the application starts
again (DESIGN.md "State, alerts, leadership"). ``judge_watch`` is that judgement, a pure
function of what the supervisor sees of the new application.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

import yaml

from streamjobs.domain.states import AppState


class UpgradeMode(StrEnum):
    """How the new spec starts."""

    LAST_STATE = "last-state"
    """On the same checkpoint, as it was left by the graceful stop."""
    SNAPSHOT = "snapshot"
    """On a copy of the aligned snapshot taken at the stop."""
    STATELESS = "stateless"
    """On a fresh checkpoint (the old one kept as a snapshot of kind replaced); the inputs read
    from their ``startingOffsets``."""

    @property
    def continues_state(self) -> bool:
        """Whether the new spec goes on from the old one's state, so it must fit it: the
        compatibility check runs before anything is stopped."""
        return self is not UpgradeMode.STATELESS


class UpgradeStatus(StrEnum):
    """Where an upgrade is in its life."""

    STOPPING = "STOPPING"
    """The running application is stopping gracefully (taking the upgrade snapshot)."""
    STARTING = "STARTING"
    """The new application was started on the job's current spec; it does not run yet."""
    WATCHING = "WATCHING"
    """The new application runs; it is watched until ``watch_until``."""
    SUCCEEDED = "SUCCEEDED"
    ROLLING_BACK = "ROLLING_BACK"
    """The new application failed in the window: it is being ended, to put the old one back."""
    ROLLED_BACK = "ROLLED_BACK"
    """The previous spec runs again, from the upgrade snapshot."""
    FAILED = "FAILED"
    """The upgrade could not be carried out (or rolled back); ``reason`` says why and where the
    job was left."""


ACTIVE_UPGRADE_STATUSES = frozenset(
    {
        UpgradeStatus.STOPPING,
        UpgradeStatus.STARTING,
        UpgradeStatus.WATCHING,
        UpgradeStatus.ROLLING_BACK,
    }
)
"""In progress: the supervisor moves it on each tick. A job has at most one such upgrade."""
TERMINAL_UPGRADE_STATUSES = frozenset(
    {UpgradeStatus.SUCCEEDED, UpgradeStatus.ROLLED_BACK, UpgradeStatus.FAILED}
)
"""History: nothing changes the upgrade any more."""


def changed_since_running(job_version: int, running_version: int | None) -> bool:
    """Whether the job was configured since its application started: the application runs an
    older version of it (unknown for applications stored before versions were kept)."""
    return running_version is not None and running_version < job_version


@dataclass(frozen=True)
class Upgraded:
    """The upgraded application as the watch sees it."""

    name: str
    state: AppState
    failures: int = 0
    """Attempt failures counted against its restart policy (to start and while running)."""
    firing: Mapping[str, datetime] = field(default_factory=dict)
    """Its health rules firing now, each with since when."""


class Verdict(StrEnum):
    WAIT = "wait"
    WATCH = "watch"
    """It runs: watch it until ``Judgement.watch_until``."""
    SUCCEED = "succeed"
    ROLL_BACK = "roll-back"
    FAIL = "fail"
    """It went wrong and nothing is to be rolled back (rollback is off, or it never ran)."""


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str | None = None
    watch_until: datetime | None = None


WAIT = Judgement(Verdict.WAIT)
ROLLBACK_OFF = "rollback is off (spec.upgrade.rollbackWithinSeconds: 0)"


def judge_watch(
    status: UpgradeStatus,
    upgraded: Upgraded,
    *,
    window_seconds: int,
    watch_until: datetime | None,
    now: datetime,
) -> Judgement:
    """What to do about an upgrade STARTING or WATCHING its new application.

    Trouble (the application FAILED or SUSPENDED, an attempt failure counted, a health rule
    firing that fired within the window) rolls it back, or fails the upgrade when
    ``window_seconds`` is 0. Once the application runs the watch begins; it succeeds when the
    application still runs at ``watch_until``. An application a person ended (STOPPED,
    ABORTED) ends the watch without a rollback; a finite one that COMPLETED succeeded.
    """
    trouble = _trouble(upgraded, watch_until)
    if trouble is not None:
        if window_seconds == 0:
            return Judgement(Verdict.FAIL, f"{trouble}; {ROLLBACK_OFF}")
        return Judgement(Verdict.ROLL_BACK, trouble)
    name, state = upgraded.name, upgraded.state
    if state is AppState.COMPLETED:
        return Judgement(Verdict.SUCCEED, f"the upgraded application {name} completed")
    if state in (AppState.STOPPED, AppState.ABORTED):
        if status is UpgradeStatus.STARTING:
            return Judgement(
                Verdict.FAIL, f"the upgraded application {name} was {state} before it ran"
            )
        return Judgement(
            Verdict.SUCCEED, f"the watch ended early: the upgraded application {name} was {state}"
        )
    if status is UpgradeStatus.STARTING:
        if state is not AppState.RUNNING:
            return WAIT
        if window_seconds == 0:
            return Judgement(Verdict.SUCCEED, f"{name} runs; {ROLLBACK_OFF}")
        return Judgement(Verdict.WATCH, watch_until=now + timedelta(seconds=window_seconds))
    if watch_until is not None and now >= watch_until and state is AppState.RUNNING:
        return Judgement(Verdict.SUCCEED, f"{name} ran for {window_seconds} s without failing")
    return WAIT


def _trouble(upgraded: Upgraded, watch_until: datetime | None) -> str | None:
    """Why the upgraded application is in trouble, in words; None when it is not."""
    name = upgraded.name
    if upgraded.state is AppState.FAILED:
        return f"the upgraded application {name} failed"
    if upgraded.state is AppState.SUSPENDED:
        return f"the upgraded application {name} was suspended"
    if upgraded.failures > 0:
        counted = "failure" if upgraded.failures == 1 else "failures"
        return f"the upgraded application {name} failed an attempt ({upgraded.failures} {counted})"
    fired = sorted(
        rule
        for rule, since in upgraded.firing.items()
        if watch_until is None or since <= watch_until
    )
    if fired:
        rules = ", ".join(fired)
        return f"health rule {rules} of the upgraded application {name} fired"
    return None


def spec_diff(
    before: Mapping[str, Any], after: Mapping[str, Any], *, from_label: str, to_label: str
) -> str:
    """The unified diff of two specs written as YAML; empty when they are the same."""
    lines = difflib.unified_diff(
        _yaml_lines(before), _yaml_lines(after), fromfile=from_label, tofile=to_label, lineterm=""
    )
    return "\n".join(lines)


class _ReadableDumper(yaml.SafeDumper):
    """Writes multi-line strings (a step's SQL) as ``|`` blocks, so a diff shows their lines."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value and not value.endswith((" ", "\t")) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_ReadableDumper.add_representer(str, _represent_text)


def _yaml_lines(spec: Mapping[str, Any]) -> list[str]:
    text = yaml.dump(
        dict(spec), Dumper=_ReadableDumper, sort_keys=False, allow_unicode=True, width=100
    )
    return text.splitlines()
