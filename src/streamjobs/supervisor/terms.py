"""What the supervisor reads from an application's spec: its restart policy, deployment and the
rest of its terms, read once per version of the application rather than every tick.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from streamjobs.domain.alerts import Health, HealthRule
from streamjobs.domain.manifest import ApplicationType, Deployment, Processing, RestartPolicy


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
    """Executors asked for (standard deployments); Spark's REST API tells only those running."""
    reports: bool
    """The driver is a pipeline's runner, which reports to the server."""
    health_rules: tuple[HealthRule, ...] = ()
    """The job's health rules (``spec.health.rules``), judged while the application runs."""

    @classmethod
    def of(cls, spec: Mapping[str, Any], version: int) -> ApplicationTerms:
        body = spec["spec"]
        instance = body["instance"]
        deployment = Deployment(instance["deployment"])
        standard = deployment is Deployment.STANDARD
        return cls(
            version=version,
            policy=RestartPolicy.model_validate(body.get("restartPolicy", {})),
            suspend_on_failure=Processing.model_validate(
                body.get("processing", {})
            ).suspend_on_failure,
            deployment=deployment,
            executors=int(instance.get("executors") or 0) if standard else 0,
            reports=(body.get("application") or {}).get("type") == ApplicationType.PIPELINE,
            health_rules=tuple(Health.model_validate(body.get("health") or {}).rules),
        )
