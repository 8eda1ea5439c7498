"""Rendering the job form and its Edit as YAML page: what ``job_form.html`` and ``job_yaml.html``
are given (the catalog's choices, the form's fixed controls, the health rule choices, the
syntax of tag keys and values for the browser's live check, and Check compatibility for an
existing job), for the routes of ``web.routes.job_form``.
"""

from __future__ import annotations

from typing import Any, get_args

from fastapi import Request
from fastapi.responses import Response

from streamjobs.domain.formats import Syntax, TagKey, TagValue
from streamjobs.services.catalog import CatalogChoices, catalog_choices
from streamjobs.web.health_rule_rows import (
    ACTION_CHOICES,
    COMPARISON_CHOICES,
    METRIC_CHOICES,
    RuleRow,
)
from streamjobs.web.job_form_controls import (
    APPLICATION_TYPES,
    CONFIGURATION_GROUPS,
    DEPENDENCY_GROUPS,
    DEPLOY_MODES,
    DEPLOYMENTS,
    DYNAMIC_CHOICES,
    GUARANTEES,
    RESTART_POLICIES,
    TAGS,
    standard_deployment_note,
)
from streamjobs.web.job_form_errors import FormErrors
from streamjobs.web.job_forms import JobForm
from streamjobs.web.job_pages import JobPages
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.upgrade_view import CheckView, form_check


def form_page(
    request: Request,
    form: JobForm,
    pages: JobPages,
    *,
    choices: CatalogChoices | None = None,
    errors: FormErrors | None = None,
    notice: str | None = None,
    check: CheckView | None = None,
    status_code: int = 200,
) -> Response:
    """The form; for an existing job with Check compatibility (``check``: its answer)."""
    services = services_of(request)
    choices = choices or catalog_choices(services.store)
    job = None if pages.name is None else services.jobs.get(pages.name, actor=page_actor(request))
    return render(
        request,
        "job_form.html",
        status_code=status_code,
        nav="jobs",
        form=form,
        pages=pages,
        errors=errors or FormErrors(),
        notice=notice,
        choices=choices,
        node_types=[
            (
                n.name,
                f"{n.name} · {n.cores} {'core' if n.cores == 1 else 'cores'}, {n.memory_mb} MB",
            )
            for n in choices.node_types
        ],
        bundles=[(name, name) for name in choices.bundles],
        application_types=APPLICATION_TYPES,
        deployments=DEPLOYMENTS,
        deploy_modes=DEPLOY_MODES,
        dynamic_choices=DYNAMIC_CHOICES,
        restart_policies=RESTART_POLICIES,
        guarantees=GUARANTEES,
        tags_group=TAGS,
        configuration_groups=CONFIGURATION_GROUPS,
        standard_deployment_note=standard_deployment_note(services_of(request).launchers),
        dependency_groups=DEPENDENCY_GROUPS,
        tag_key_syntax=_syntax(TagKey),
        tag_value_syntax=_syntax(TagValue),
        health_metrics=METRIC_CHOICES,
        health_comparisons=COMPARISON_CHOICES,
        health_actions=ACTION_CHOICES,
        health_default=RuleRow(),
        form_check=form_check(services, job, page_actor(request), check) if job else None,
    )


def yaml_page(
    request: Request,
    pages: JobPages,
    text: str,
    *,
    errors: FormErrors | None = None,
    notice: str | None = None,
    status_code: int = 200,
) -> Response:
    """The Edit as YAML page holding ``text``."""
    return render(
        request,
        "job_yaml.html",
        status_code=status_code,
        nav="jobs",
        pages=pages,
        text=text,
        errors=errors or FormErrors(),
        notice=notice,
    )


def _syntax(annotated: Any) -> Syntax:
    """The string syntax of a manifest type such as ``TagKey``, for the browser's live check."""
    return next(item for item in get_args(annotated) if isinstance(item, Syntax))
