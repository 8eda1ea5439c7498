"""Settings → Bundles: resource bundles with their quotas, what their running applications take
now, their jobs, their data roots and Spark setting policy, and who holds which permission on
them.

The list shows the bundles the bundle service lets the person see: every bundle to those with
Manage bundles, who may also create one, set its quotas (an empty field is no limit), its data
roots and Spark setting policy (one per line), edit its grants (a subject and
VIEW/RUN/UPDATE/DELETE checkboxes per row) and delete it once empty; anyone else sees the bundles
they hold a grant on, read-only. It mirrors ``/api/v1/bundles``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import Response

from streamjobs import formatting
from streamjobs.domain.access import Actor, DomainPermission, Permission, has_domain_permission
from streamjobs.domain.bundle_policy import SparkConfPolicy
from streamjobs.domain.errors import AlreadyExists, Conflict, FieldError, InvalidInput, StaleVersion
from streamjobs.domain.quotas import Quota
from streamjobs.domain.versions import resource_version
from streamjobs.services.bundles import BundleView
from streamjobs.web.bundle_grants import (
    FormFields,
    first_value,
    grant_rows_of,
    grants_of,
    row_errors,
    rows_of,
    submitted_fields,
)
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.settings_forms import (
    Failed,
    back_to,
    failed,
    notice_of,
    refused,
    whole_numbers,
)

router = APIRouter()
BUNDLES_PAGE = "/settings/bundles"
QUOTA_FIELDS = ("maxRunningApplications", "maxCores", "maxMemoryMb")
POLICY_FIELDS = ("dataRoots", "sparkConfAllowed", "sparkConfRefused")
SERVICE_PATHS = {"sparkConf.allowed": "sparkConfAllowed", "sparkConf.refused": "sparkConfRefused"}
BUNDLE_FIELDS = ("name", "description", *QUOTA_FIELDS)
OUTCOMES = {
    "created": "Bundle “{name}” created.",
    "configured": "Quotas of “{name}” saved.",
    "policy": "Data roots and Spark settings of “{name}” saved.",
    "granted": "Grants of “{name}” saved.",
    "deleted": "Bundle “{name}” deleted.",
}


@router.get(BUNDLES_PAGE)
def bundles_page(
    request: Request,
    done: Annotated[str, Query()] = "",
    name: Annotated[str, Query()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    return _bundles_page(request, actor, notice=notice_of(OUTCOMES, done, name))


@router.post(BUNDLES_PAGE)
def create_bundle(
    request: Request,
    name: Annotated[str, Form()] = "",
    description: Annotated[str, Form()] = "",
    max_running_applications: Annotated[str, Form(alias="maxRunningApplications")] = "",
    max_cores: Annotated[str, Form(alias="maxCores")] = "",
    max_memory_mb: Annotated[str, Form(alias="maxMemoryMb")] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    name = name.strip()
    values = {"name": name, "description": description}
    values |= dict(
        zip(QUOTA_FIELDS, (max_running_applications, max_cores, max_memory_mb), strict=True)
    )
    try:
        services_of(request).bundles.create(
            name, actor=actor, description=description.strip() or None, quota=_quota(values)
        )
    except InvalidInput as error:
        located = InvalidInput(_form_paths(error.errors))
        form, status = refused("bundle", values, located, BUNDLE_FIELDS)
        return _bundles_page(request, actor, failed=form, status_code=status)
    except AlreadyExists as error:
        form, status = refused("bundle", values, error, BUNDLE_FIELDS)
        return _bundles_page(request, actor, failed=form, status_code=status)
    return back_to(f"{BUNDLES_PAGE}/{name}", done="created", name=name)


@router.get(BUNDLES_PAGE + "/{name}")
def bundle_page(
    request: Request,
    name: str,
    done: Annotated[str, Query()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    return _bundle_page(request, name, actor, notice=notice_of(OUTCOMES, done, name))


@router.post(BUNDLES_PAGE + "/{name}")
def configure_bundle(
    request: Request,
    name: str,
    description: Annotated[str, Form()] = "",
    max_running_applications: Annotated[str, Form(alias="maxRunningApplications")] = "",
    max_cores: Annotated[str, Form(alias="maxCores")] = "",
    max_memory_mb: Annotated[str, Form(alias="maxMemoryMb")] = "",
    version: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Set the bundle's description and quotas, if it is still at the version the page showed."""
    values = {"description": description}
    values |= dict(
        zip(QUOTA_FIELDS, (max_running_applications, max_cores, max_memory_mb), strict=True)
    )
    try:
        services_of(request).bundles.update(
            name,
            actor=actor,
            description=description.strip() or None,
            quota=_quota(values),
            expected_version=_shown_version(version),
        )
    except InvalidInput as error:
        sent_back = failed("quota", values, _form_paths(error.errors), BUNDLE_FIELDS)
        return _bundle_page(request, name, actor, failed=sent_back, status_code=422)
    except StaleVersion:
        return _changed_meanwhile(request, name, actor)
    return back_to(f"{BUNDLES_PAGE}/{name}", done="configured", name=name)


@router.post(BUNDLES_PAGE + "/{name}/policy")
def set_policy(
    request: Request,
    name: str,
    data_roots: Annotated[str, Form(alias="dataRoots")] = "",
    allowed: Annotated[str, Form(alias="sparkConfAllowed")] = "",
    refused: Annotated[str, Form(alias="sparkConfRefused")] = "",
    version: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Replace the bundle's data roots and Spark setting policy (one entry a line), if it is
    still at the version the page showed."""
    values = dict(zip(POLICY_FIELDS, (data_roots, allowed, refused), strict=True))
    lines = {field: _entries(values[field]) for field in POLICY_FIELDS}
    try:
        services_of(request).bundles.set_policy(
            name,
            actor=actor,
            data_roots=[entry for _, entry in lines["dataRoots"]],
            spark_conf=SparkConfPolicy(
                allowed=tuple(entry for _, entry in lines["sparkConfAllowed"]),
                refused=tuple(entry for _, entry in lines["sparkConfRefused"]),
            ),
            expected_version=_shown_version(version),
        )
    except InvalidInput as error:
        located = [_at_line(error, lines) for error in error.errors]
        sent_back = failed("policy", values, located, POLICY_FIELDS)
        return _bundle_page(request, name, actor, failed=sent_back, status_code=422)
    except StaleVersion:
        return _changed_meanwhile(request, name, actor)
    return back_to(f"{BUNDLES_PAGE}/{name}", "policy", done="policy", name=name)


@router.post(BUNDLES_PAGE + "/{name}/grants")
def set_grants(
    request: Request,
    name: str,
    fields: FormFields = Depends(submitted_fields),
    actor: Actor = Depends(page_actor),
) -> Response:
    """Replace every grant of the bundle with the rows of the form (a row without any
    permission ticked is no grant), if it is still at the version the page showed."""
    rows = grant_rows_of(fields)
    owners: list[int] = []
    try:
        grants, owners = grants_of(name, rows)
        expected_version = _shown_version(first_value(fields, "version"))
        services_of(request).bundles.set_grants(
            name, grants, actor=actor, expected_version=expected_version
        )
    except InvalidInput as error:
        sent_back = Failed(form="grants", errors=row_errors(error.errors, owners))
        return _bundle_page(
            request, name, actor, failed=sent_back, grant_rows=rows, status_code=422
        )
    except StaleVersion:
        return _changed_meanwhile(request, name, actor)
    return back_to(f"{BUNDLES_PAGE}/{name}", "grants", done="granted", name=name)


@router.post(BUNDLES_PAGE + "/{name}/delete")
def delete_bundle(
    request: Request,
    name: str,
    version: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    try:
        services_of(request).bundles.delete(
            name, actor=actor, expected_version=_shown_version(version)
        )
    except Conflict as error:
        return _bundle_page(request, name, actor, error=error.detail, status_code=409)
    return back_to(BUNDLES_PAGE, done="deleted", name=name)


def _shown_version(text: str) -> int | None:
    """The version of the bundle the page showed (a form from before versions: none)."""
    return resource_version(text, path="version") if text.strip() else None


def _changed_meanwhile(request: Request, name: str, actor: Actor) -> Response:
    """The page as the bundle is now, saying why nothing was saved."""
    error = (
        f"“{name}” was changed by someone else after you opened this page, so nothing was "
        "saved. The page now shows their change; make yours again."
    )
    return _bundle_page(request, name, actor, error=error, status_code=409)


def _quota(values: dict[str, str]) -> Quota:
    numbers = whole_numbers({f"quota.{key}": values[key] for key in QUOTA_FIELDS})
    return Quota(*(numbers[f"quota.{key}"] for key in QUOTA_FIELDS))


def _entries(text: str) -> list[tuple[int, str]]:
    """The non-blank lines of a one-entry-a-line field, each with its line number."""
    lines = enumerate(text.splitlines(), start=1)
    return [(number, line.strip()) for number, line in lines if line.strip()]


def _at_line(error: FieldError, lines: dict[str, list[tuple[int, str]]]) -> FieldError:
    """The service's ``dataRoots[N]`` or ``sparkConf.allowed[N]`` as the form's field and the
    line the entry was typed on."""
    field, _, rest = error.path.partition("[")
    field = SERVICE_PATHS.get(field, field)
    if field not in lines or not rest.rstrip("]").isdigit():
        return FieldError(field, error.message)
    number = lines[field][int(rest.rstrip("]"))][0]
    return FieldError(field, f"line {number}: {error.message}")


def _form_paths(errors: tuple[FieldError, ...]) -> list[FieldError]:
    """The service's ``quota.maxCores`` is the form's ``maxCores``."""
    return [FieldError(error.path.removeprefix("quota."), error.message) for error in errors]


def _bundles_page(
    request: Request,
    actor: Actor,
    *,
    failed: Failed | None = None,
    notice: str | None = None,
    status_code: int = 200,
) -> Response:
    views = services_of(request).bundles.list(actor=actor)
    return render(
        request,
        "bundles.html",
        status_code=status_code,
        nav="bundles",
        bundles=[_bundle_row(view) for view in views],
        may_manage=has_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES),
        failed=failed,
        notice=notice,
    )


def _bundle_page(
    request: Request,
    name: str,
    actor: Actor,
    *,
    failed: Failed | None = None,
    grant_rows: list[dict[str, Any]] | None = None,
    notice: str | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    services = services_of(request)
    view = services.bundles.get(name, actor=actor)
    may_manage = has_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
    rows = grant_rows if grant_rows is not None else rows_of(view)
    if may_manage and not any(not row["subject"] for row in rows):
        rows = [*rows, {"subject": "", "permissions": set()}]
    subjects: list[str] = []
    if may_manage:
        people = services.people
        subjects = [f"user:{person.user.name}" for person in people.list_users(actor=actor)]
        subjects += [f"group:{group.name}" for group in people.list_groups(actor=actor)]
    return render(
        request,
        "bundle.html",
        status_code=status_code,
        nav="bundles",
        bundle=_bundle_row(view),
        may_manage=may_manage,
        grant_rows=rows,
        permissions=list(Permission),
        subjects=subjects,
        failed=failed,
        notice=notice,
        error=error,
    )


def _bundle_row(view: BundleView) -> dict[str, Any]:
    """What a bundle's row and page show: each figure in use against its quota."""
    quota = view.bundle.quota
    use = view.in_use
    return {
        "name": view.bundle.name,
        "version": view.bundle.version,
        "description": view.bundle.description or "",
        "jobs": view.jobs,
        "held": sorted(str(p) for p in view.held),
        "grants": rows_of(view),
        "data_roots": view.bundle.data_roots,
        "spark_conf": {
            "allowed": view.bundle.spark_conf_allowed,
            "refused": view.bundle.spark_conf_refused,
        },
        "figures": [
            _figure("Running applications", use.applications, quota.max_running_applications, str),
            _figure("Cores", use.cores, quota.max_cores, str),
            _figure("Memory", use.memory_mb, quota.max_memory_mb, formatting.memory),
        ],
        "quota": {
            "maxRunningApplications": _text(quota.max_running_applications),
            "maxCores": _text(quota.max_cores),
            "maxMemoryMb": _text(quota.max_memory_mb),
        },
    }


def _figure(label: str, used: int, limit: int | None, show: Any) -> dict[str, Any]:
    percent = None if not limit else min(100, round(100 * used / limit))
    return {
        "label": label,
        "used": show(used),
        "limit": "no limit" if limit is None else show(limit),
        "percent": percent,
        "full": limit is not None and used >= limit,
    }


def _text(value: int | None) -> str:
    return "" if value is None else str(value)
