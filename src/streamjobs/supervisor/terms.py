"""What the supervisor reads from an application's spec: its restart policy, deployment and the
rest of its terms, read once per version of the application rather than every tick.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from streamjobs.domain.alerts import Health, HealthRule
from streamjobs.domain.locations import LocationError, local_path
from streamjobs.domain.manifest import (
    ApplicationType,
    Deployment,
    Guarantee,
    Processing,
    RestartPolicy,
)


@dataclass(frozen=True)
class ApplicationTerms:
    """What the loop reads from an application's spec, read once per application version.

    Only these blocks are read, not the whole manifest: the snapshot was validated when the
    application started, and re-validating its SQL every tick is what made ticks slow.
    """

    version: int
    policy: RestartPolicy
    suspend_on_failure: bool
    deployment: Deployment
    executors: int
    """Executors asked for (standard deployments); Spark's REST API tells only those running.
    Under dynamic allocation, the fewest kept (``minExecutors``): more come and go with the
    load, so only those missing below it are pending."""
    reports: bool
    """The driver is a pipeline's runner, which reports to the server."""
    health_rules: tuple[HealthRule, ...] = ()
    """The job's health rules (``spec.health.rules``), judged while the application runs."""
    takes_snapshots: bool = False
    """A streaming pipeline that keeps a checkpoint on this machine (guarantee not NONE):
    snapshots are taken of it, at each graceful stop too."""
    standby: bool = False
    """Keep a standby driver held ready while the application runs (``spec.instance.standby``)."""

    @classmethod
    def of(cls, spec: Mapping[str, Any], version: int) -> ApplicationTerms:
        body = spec["spec"]
        instance = body["instance"]
        deployment = Deployment(instance["deployment"])
        standard = deployment is Deployment.STANDARD
        processing = Processing.model_validate(body.get("processing", {}))
        pipeline = (body.get("application") or {}).get("type") == ApplicationType.PIPELINE
        return cls(
            version=version,
            policy=RestartPolicy.model_validate(body.get("restartPolicy", {})),
            suspend_on_failure=processing.suspend_on_failure,
            deployment=deployment,
            executors=_executors_asked(instance) if standard else 0,
            reports=pipeline,
            health_rules=tuple(Health.model_validate(body.get("health") or {}).rules),
            takes_snapshots=pipeline and _keeps_local_checkpoint(body, processing),
            standby=pipeline and bool(instance.get("standby")),
        )


def _executors_asked(instance: Mapping[str, Any]) -> int:
    if instance.get("dynamic"):
        return int(instance.get("minExecutors") or 0)
    return int(instance.get("executors") or 0)


def _keeps_local_checkpoint(body: Mapping[str, Any], processing: Processing) -> bool:
    """Whether a pipeline's resolved spec keeps a checkpoint on this machine (streaming, not
    guarantee NONE, at a local location): the one place the runner copies a snapshot from."""
    pipeline = body.get("pipeline") or {}
    location = (pipeline.get("streaming") or {}).get("checkpointLocation")
    if processing.guarantee is Guarantee.NONE or pipeline.get("batchMode", False):
        return False
    try:
        return isinstance(location, str) and local_path(location) is not None
    except LocationError:
        return False
