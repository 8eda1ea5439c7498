"""The Create / Configure job form, Duplicate and Edit as YAML.

Each page turns what was typed into a manifest (``web.job_forms``) and gives it to the job service,
exactly as the REST API does: the rules live there. Nothing is saved while there are errors; the
page comes back with what was typed and each error next to the field it names.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from streamjobs.domain.access import Actor, DomainPermission, require_domain_permission
from streamjobs.domain.errors import (
    AlreadyExists,
    Conflict,
    FieldError,
    InvalidInput,
    LocationTaken,
    NotFound,
)
from streamjobs.services.catalog import CatalogChoices, catalog_choices
from streamjobs.services.container import Services
from streamjobs.services.jobs import job_document
from streamjobs.store.jobs import JobRecord
from streamjobs.web.job_form_errors import FormErrors, form_errors, validation_errors, yaml_errors
from streamjobs.web.job_form_rendering import form_page, yaml_page
from streamjobs.web.job_forms import (
    ControlError,
    JobForm,
    duplicate_form,
    form_from_fields,
    form_from_manifest,
    manifest_from_form,
    new_job_manifest,
)
from streamjobs.web.job_pages import JobPages
from streamjobs.web.notices import redirect_with_notices
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.upgrade_view import checked_form, problems_view
from streamjobs.web.yaml_text import dump_yaml, read_mapping_text, without_empty

router = APIRouter()

FormFields = dict[str, list[str]]
SaveManifest = Callable[[dict[str, Any]], JobRecord]
STALE_VERSION_ADVICE = "Nothing was saved; what you typed is still below."


async def submitted_fields(request: Request) -> FormFields:
    """The submitted form, every name with all its values in order (rows repeat names)."""
    data = await request.form()
    return {key: [v for v in data.getlist(key) if isinstance(v, str)] for key in data}


@router.get("/jobs/new")
def new_job_page(
    request: Request,
    from_job: str = Query("", alias="from"),
    actor: Actor = Depends(page_actor),
) -> Response:
    """The empty form, or with ``?from=<job>`` (Duplicate) that job's, named ``<job>-copy``."""
    require_domain_permission(actor.principal, DomainPermission.CREATE_JOB)
    services = services_of(request)
    choices = catalog_choices(services.store)
    if from_job:
        form = duplicate_form(services.jobs.get(from_job, actor=actor).manifest, from_job)
    else:
        form = _new_form(choices)
    return form_page(request, form, JobPages(), choices=choices)


@router.post("/jobs/new")
def create_job(
    request: Request,
    actor: Actor = Depends(page_actor),
    fields: FormFields = Depends(submitted_fields),
) -> Response:
    services = services_of(request)
    form = form_from_fields(fields)
    return _save_form(
        request,
        form,
        JobPages(),
        base=_duplicated_manifest(services, form.duplicate_of, actor),
        save=lambda manifest: services.jobs.create(manifest, actor=actor),
    )


@router.get("/jobs/new/yaml")
def new_job_yaml_page(
    request: Request,
    from_job: str = Query("", alias="from"),
    actor: Actor = Depends(page_actor),
) -> Response:
    require_domain_permission(actor.principal, DomainPermission.CREATE_JOB)
    manifest = new_job_manifest()
    if from_job:
        manifest = copy.deepcopy(services_of(request).jobs.get(from_job, actor=actor).manifest)
        manifest["metadata"]["name"] = f"{from_job}-copy"
    return yaml_page(request, JobPages(), dump_yaml(without_empty(manifest)))


@router.post("/jobs/new/yaml")
def create_job_from_yaml(
    request: Request,
    actor: Actor = Depends(page_actor),
    fields: FormFields = Depends(submitted_fields),
) -> Response:
    """Create from the YAML, or (``edit_as``, the form's Edit as YAML) show the form as YAML."""
    services = services_of(request)
    if _first(fields, "edit_as"):
        form = form_from_fields(fields)
        base = _duplicated_manifest(services, form.duplicate_of, actor)
        return _form_as_yaml(request, form, JobPages(), base=base)
    return _save_yaml(
        request,
        _first(fields, "manifest"),
        JobPages(),
        save=lambda manifest: services.jobs.create(manifest, actor=actor),
    )


@router.get("/jobs/{name}/configure")
def configure_page(request: Request, name: str, actor: Actor = Depends(page_actor)) -> Response:
    record = services_of(request).jobs.get(name, actor=actor)
    return form_page(request, form_from_manifest(job_document(record)), JobPages(name))


@router.post("/jobs/{name}/configure")
def configure_job(
    request: Request,
    name: str,
    actor: Actor = Depends(page_actor),
    fields: FormFields = Depends(submitted_fields),
) -> Response:
    """Save the form over the job, if it is still at the version the form was opened at."""
    services = services_of(request)
    record = services.jobs.get(name, actor=actor)
    return _save_form(
        request,
        replace(form_from_fields(fields), name=name, duplicate_of=""),
        JobPages(name),
        base=record.manifest,
        save=lambda manifest: services.jobs.apply(name, manifest, actor=actor)[0],
    )


@router.post("/jobs/{name}/configure/check")
def check_job_form(
    request: Request,
    name: str,
    actor: Actor = Depends(page_actor),
    fields: FormFields = Depends(submitted_fields),
) -> Response:
    """Check compatibility: whether the spec as typed could continue from the checkpoint of the
    job's running application, saving nothing (``web.upgrade_view``); the report under the
    form (for htmx, the report alone), or the form's problems at their fields."""
    services = services_of(request)
    form = replace(form_from_fields(fields), name=name, duplicate_of="")
    built = manifest_from_form(form, services.jobs.get(name, actor=actor).manifest)
    problems = list(validation_errors(services, built.manifest)) if built.problems else []
    check = None
    if not built.problems:
        try:
            check = checked_form(services, name, built.manifest, actor)
        except InvalidInput as invalid:
            problems = list(invalid.errors)
    htmx = request.headers.get("HX-Request") == "true"
    if check is not None:
        if htmx:
            return render(request, "upgrade_check.html", check=check)
        return form_page(request, form, JobPages(name), check=check)
    if htmx:
        listed = [FieldError(item.path, item.message) for item in built.problems] + problems
        return render(request, "upgrade_check.html", check=problems_view(listed))
    errors = form_errors(built.problems, problems, form)
    return form_page(request, form, JobPages(name), errors=errors, status_code=422)


@router.get("/jobs/{name}/yaml")
def job_yaml_page(request: Request, name: str, actor: Actor = Depends(page_actor)) -> Response:
    record = services_of(request).jobs.get(name, actor=actor)
    return yaml_page(request, JobPages(name), dump_yaml(without_empty(_versioned(record))))


@router.post("/jobs/{name}/yaml")
def apply_job_yaml(
    request: Request,
    name: str,
    actor: Actor = Depends(page_actor),
    fields: FormFields = Depends(submitted_fields),
) -> Response:
    """Apply the YAML to the job, or (``edit_as``) show the Configure form as YAML."""
    services = services_of(request)
    record = services.jobs.get(name, actor=actor)
    if _first(fields, "edit_as"):
        form = replace(form_from_fields(fields), name=name, duplicate_of="")
        return _form_as_yaml(request, form, JobPages(name), base=record.manifest)
    return _save_yaml(
        request,
        _first(fields, "manifest"),
        JobPages(name),
        save=lambda manifest: services.jobs.apply(name, manifest, actor=actor)[0],
    )


def _save_form(
    request: Request,
    form: JobForm,
    pages: JobPages,
    *,
    base: Mapping[str, Any] | None,
    save: SaveManifest,
) -> Response:
    built = manifest_from_form(form, base)
    if built.problems:
        service_errors = validation_errors(services_of(request), built.manifest)
        errors = form_errors(built.problems, service_errors, form)
        return form_page(request, form, pages, errors=errors, status_code=422)
    try:
        record = save(built.manifest)
    except InvalidInput as invalid:
        errors = form_errors((), invalid.errors, form)
        return form_page(request, form, pages, errors=errors, status_code=422)
    except LocationTaken as taken:
        errors = form_errors((), taken.errors, form)
        return form_page(request, form, pages, errors=errors, status_code=409)
    except AlreadyExists as exists:
        errors = FormErrors((ControlError("name", exists.detail, path="metadata.name"),))
        return form_page(request, form, pages, errors=errors, status_code=409)
    except Conflict as conflict:
        notice = f"{conflict.detail}. {STALE_VERSION_ADVICE}"
        return form_page(request, form, pages, notice=notice, status_code=409)
    return _to_job_page(request, record, pages)


def _save_yaml(request: Request, text: str, pages: JobPages, *, save: SaveManifest) -> Response:
    read = read_mapping_text(text, what="the manifest")
    document = read.mapping
    if document is None:
        errors = FormErrors(
            tuple(ControlError("manifest", p.message, line=p.line) for p in read.problems)
        )
        return yaml_page(request, pages, text, errors=errors, status_code=422)
    try:
        record = save(document)
    except InvalidInput as invalid:
        errors = yaml_errors(read.lines, invalid.errors)
        return yaml_page(request, pages, text, errors=errors, status_code=422)
    except LocationTaken as taken:
        errors = yaml_errors(read.lines, taken.errors)
        return yaml_page(request, pages, text, errors=errors, status_code=409)
    except AlreadyExists as exists:
        errors = yaml_errors(read.lines, [FieldError("metadata.name", exists.detail)])
        return yaml_page(request, pages, text, errors=errors, status_code=409)
    except Conflict as conflict:
        notice = f"{conflict.detail}. {STALE_VERSION_ADVICE}"
        return yaml_page(request, pages, text, notice=notice, status_code=409)
    return _to_job_page(request, record, pages)


def _to_job_page(request: Request, record: JobRecord, pages: JobPages) -> Response:
    """The saved job's page; after a creation it says so if the job's checkpoint already holds
    state (its first run resumes from it)."""
    notices = services_of(request).jobs.resumed_state_warnings(record) if pages.is_new else []
    return redirect_with_notices(request, f"/jobs/{quote(record.name, safe='')}", notices)


def _form_as_yaml(
    request: Request, form: JobForm, pages: JobPages, *, base: Mapping[str, Any] | None
) -> Response:
    """The YAML page showing what the form holds; the form again if part of it cannot be YAML."""
    built = manifest_from_form(form, base)
    if built.problems:
        errors = form_errors(built.problems, (), form)
        return form_page(request, form, pages, errors=errors, status_code=422)
    return yaml_page(request, pages, dump_yaml(without_empty(built.manifest)))


def _new_form(choices: CatalogChoices) -> JobForm:
    """The new job's form: namespace, bundle and node types preselected among those there are."""
    form = JobForm()

    def pick(preferred: str, known: Sequence[str]) -> str:
        return preferred if preferred in known or not known else known[0]

    node_types = [node_type.name for node_type in choices.node_types]
    return replace(
        form,
        namespace=choices.only_namespace or form.namespace,
        bundle=pick(form.bundle, choices.bundles),
        driver=pick(form.driver, node_types),
        executor=pick(form.executor, node_types),
    )


def _duplicated_manifest(services: Services, name: str, actor: Actor) -> dict[str, Any] | None:
    """The manifest of the job a new one duplicates, so what the form does not show is copied
    too; None when it duplicates none (or that job is gone)."""
    if not name:
        return None
    try:
        return services.jobs.get(name, actor=actor).manifest
    except NotFound:
        return None


def _versioned(record: JobRecord) -> dict[str, Any]:
    """The job's manifest with its resourceVersion, so an edit of it conflicts with another."""
    manifest = copy.deepcopy(record.manifest)
    manifest["metadata"]["resourceVersion"] = str(record.version)
    return manifest


def _first(fields: FormFields, name: str) -> str:
    values = fields.get(name)
    return values[0] if values else ""
