"""Why a job's buttons are disabled, in words.

The services decide what the signed-in person may do to a job (``JobService.permissions``: for
each action, the permission missing or None) and whether a Run would be refused for what the job
needs (``ApplicationService.run_refusal``: a missing secret, connection or node type); this
module only turns those answers into the tooltip and the accessible text each disabled button
carries, so the job page, the application page and the jobs list all say it the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamjobs.domain.access import (
    DOMAIN_PERMISSION_LABELS,
    Actor,
    DomainPermission,
    JobAction,
    Permission,
    has_domain_permission,
)
from streamjobs.domain.errors import NotFound
from streamjobs.services.container import Services


@dataclass(frozen=True)
class JobRefusals:
    """For each button of a job, why it is disabled; None when it is enabled."""

    run: str | None = None
    stop: str | None = None
    resume: str | None = None
    abort: str | None = None
    configure: str | None = None
    delete: str | None = None
    duplicate: str | None = None


def job_refusals(services: Services, name: str, bundle: str, actor: Actor) -> JobRefusals:
    """What ``actor`` may not do to the job ``name`` of ``bundle``, as the services answer it
    (``NotFound`` when they may not even see it)."""
    missing = services.jobs.permissions(name, actor=actor)

    def refusal(action: JobAction) -> str | None:
        permission = missing.get(action)
        return None if permission is None else needs_permission(permission, bundle)

    run = refusal(JobAction.RUN) or services.applications.run_refusal(name, actor=actor)
    return JobRefusals(
        run=run,
        stop=refusal(JobAction.STOP),
        resume=refusal(JobAction.RESUME),
        abort=refusal(JobAction.ABORT),
        configure=refusal(JobAction.CONFIGURE),
        delete=refusal(JobAction.DELETE),
        duplicate=create_job_refusal(actor),
    )


def abort_refusal(services: Services, job_name: str, bundle: str, actor: Actor) -> str | None:
    """Why ``actor`` may not abort an application of ``job_name``; None if they may (or if the
    job is gone, when the application has long ended and nothing can be aborted anyway)."""
    try:
        return job_refusals(services, job_name, bundle, actor).abort
    except NotFound:
        return None


def create_job_refusal(actor: Actor) -> str | None:
    """Why ``actor`` may not create (or duplicate) a streaming job; None if they may."""
    if has_domain_permission(actor.principal, DomainPermission.CREATE_JOB):
        return None
    label = DOMAIN_PERMISSION_LABELS[DomainPermission.CREATE_JOB]
    return f"Needs the “{label}” permission"


def needs_permission(permission: Permission, bundle: str) -> str:
    return f"Needs the {permission} permission on resource bundle '{bundle}'"
