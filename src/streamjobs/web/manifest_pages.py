"""The flow the Connections and Notifications pages share for a named manifest resource:
creating and editing one as YAML, deleting one, and saying who may change them.

Both hand the YAML to their service exactly as the API takes it, so the rules and permissions
are the API's; this module shows each error at the line of the field it names, a stale edit or
a taken name as the page again with what was typed, and a refused delete as the resource's page
with the reason. Each page module keeps its own routes, templates and wording.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Protocol
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from streamjobs.domain.access import (
    DOMAIN_PERMISSION_LABELS,
    Actor,
    DomainPermission,
    has_domain_permission,
    require_domain_permission,
)
from streamjobs.domain.errors import AlreadyExists, Conflict, FieldError, InvalidInput
from streamjobs.domain.versions import resource_version
from streamjobs.services.container import Services
from streamjobs.web.job_form_errors import FormErrors, yaml_errors
from streamjobs.web.job_forms import ControlError
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.yaml_text import dump_yaml, read_mapping_text, without_empty

STALE_ADVICE = "Nothing was saved; what you typed is still below."


class ManifestRecord(Protocol):
    """A stored manifest resource: its name, version and the manifest as stored."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> int: ...

    @property
    def manifest(self) -> dict[str, Any]: ...


class JobUsers(Protocol):
    """The jobs naming a resource: how many, those the reader may see, and the rest's count."""

    @property
    def count(self) -> int: ...

    @property
    def visible(self) -> Sequence[str]: ...

    @property
    def hidden(self) -> int: ...


class ManifestService(Protocol):
    """What the pages need of a resource's service; permissions and validation are its own."""

    def get(self, name: str) -> Any: ...

    def create(self, document: Any, *, actor: Actor) -> Any: ...

    def apply(self, name: str, document: Any, *, actor: Actor) -> tuple[Any, Any]: ...

    def delete(self, name: str, *, actor: Actor, expected_version: int | None = None) -> Any: ...


SaveManifest = Callable[[dict[str, Any]], tuple[Any, str]]
"""The service's create or apply, answering the record and the outcome's word."""
DeleteAt = Callable[[int | None], object]
"""The service's delete, given the version it must still be at (None: any)."""
RefusedPage = Callable[[str], Response]
"""The resource's page again, at 409, with why the delete was refused."""


@dataclass(frozen=True)
class ManifestPages:
    """Where one kind's pages are and which template edits it as YAML."""

    list_page: str
    yaml_template: str
    nav: str

    def path(self, name: str) -> str:
        return f"{self.list_page}/{quote(name, safe='')}"

    def yaml_page(
        self,
        request: Request,
        name: str | None,
        text: str,
        *,
        errors: FormErrors | None = None,
        notice: str | None = None,
        status_code: int = 200,
    ) -> Response:
        """The YAML editor: a new resource's (``name`` None) or the named one's."""
        action = f"{self.list_page}/new" if name is None else f"{self.path(name)}/yaml"
        return render(
            request,
            self.yaml_template,
            status_code=status_code,
            nav=self.nav,
            name=name,
            action=action,
            cancel=self.list_page if name is None else self.path(name),
            text=text,
            errors=errors or FormErrors(),
            notice=notice,
        )

    def edit_page(self, request: Request, record: ManifestRecord) -> Response:
        """The YAML editor holding the stored manifest with its resourceVersion, so that a save
        of it conflicts with another change made meanwhile."""
        manifest = copy.deepcopy(record.manifest)
        manifest["metadata"]["resourceVersion"] = str(record.version)
        return self.yaml_page(request, record.name, dump_yaml(without_empty(manifest)))

    def save_yaml(
        self, request: Request, name: str | None, text: str, *, save: SaveManifest
    ) -> Response:
        """Give the YAML to ``save`` (the service's create or apply); the page again with every
        error at its line when it is refused, the resource's page when it is saved."""
        read = read_mapping_text(text, what="the manifest")
        if read.mapping is None:
            errors = FormErrors(
                tuple(ControlError("manifest", p.message, line=p.line) for p in read.problems)
            )
            return self.yaml_page(request, name, text, errors=errors, status_code=422)
        try:
            record, outcome = save(read.mapping)
        except InvalidInput as invalid:
            errors = yaml_errors(read.lines, invalid.errors)
            return self.yaml_page(request, name, text, errors=errors, status_code=422)
        except AlreadyExists as exists:
            errors = yaml_errors(read.lines, [FieldError("metadata.name", exists.detail)])
            return self.yaml_page(request, name, text, errors=errors, status_code=409)
        except Conflict as conflict:
            notice = f"{conflict.detail}. {STALE_ADVICE}"
            return self.yaml_page(request, name, text, notice=notice, status_code=409)
        return RedirectResponse(f"{self.path(record.name)}?done={outcome}", status_code=303)

    def delete(
        self, name: str, version: str, *, delete: DeleteAt, refused: RefusedPage
    ) -> Response:
        """Delete at the version the form names (blank: any); the list saying so, or the
        resource's page with the reason the service refused (jobs use it, or it changed)."""
        expected = resource_version(version, path="version") if version.strip() else None
        try:
            delete(expected)
        except Conflict as refusal:
            return refused(refusal.detail)
        return RedirectResponse(
            f"{self.list_page}?done=deleted&name={quote(name, safe='')}", status_code=303
        )


def applied(outcome: object) -> str:
    """The page's word for an apply's outcome: ``unchanged`` or ``saved``."""
    return "unchanged" if str(outcome) == "unchanged" else "saved"


def manage_refusal(actor: Actor) -> str | None:
    """Why ``actor`` may not create, change or delete connections and notification destinations
    (both take "Manage bundles"); None if they may."""
    if has_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES):
        return None
    return f"Needs the “{DOMAIN_PERMISSION_LABELS[DomainPermission.MANAGE_BUNDLES]}” permission"


def jobs_in_words(users: JobUsers) -> str:
    """``3 jobs: 'a', 'b', 1 you cannot see``."""
    named = [repr(job) for job in users.visible]
    if users.hidden:
        named.append(f"{users.hidden} you cannot see")
    return f"{users.count} job{'' if users.count == 1 else 's'}: {', '.join(named)}"


def add_yaml_routes(
    router: APIRouter,
    pages: ManifestPages,
    *,
    noun: str,
    service: Callable[[Services], ManifestService],
    new_manifest: str,
    refused_page: Callable[[Request, str, Actor, str], Response],
) -> None:
    """Add the new, create, edit-as-YAML, apply and delete routes under ``pages.list_page``
    (named ``new_<noun>_page``, ``create_<noun>``...). Call it before the module adds its
    ``/{name}`` page, so that ``/new`` is not taken for a name. ``new_manifest`` is the new
    page's example; ``refused_page`` the resource's page, at 409, saying why delete was refused."""

    def new_page(request: Request, actor: Actor = Depends(page_actor)) -> Response:
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        return pages.yaml_page(request, None, new_manifest)

    def create(
        request: Request,
        manifest: Annotated[str, Form()] = "",
        actor: Actor = Depends(page_actor),
    ) -> Response:
        resources = service(services_of(request))
        return pages.save_yaml(
            request,
            None,
            manifest,
            save=lambda document: (resources.create(document, actor=actor), "created"),
        )

    def yaml_page(request: Request, name: str, actor: Actor = Depends(page_actor)) -> Response:
        require_domain_permission(actor.principal, DomainPermission.MANAGE_BUNDLES)
        return pages.edit_page(request, service(services_of(request)).get(name))

    def apply_yaml(
        request: Request,
        name: str,
        manifest: Annotated[str, Form()] = "",
        actor: Actor = Depends(page_actor),
    ) -> Response:
        resources = service(services_of(request))

        def save(document: dict[str, Any]) -> tuple[Any, str]:
            record, outcome = resources.apply(name, document, actor=actor)
            return record, applied(outcome)

        return pages.save_yaml(request, name, manifest, save=save)

    def delete(
        request: Request,
        name: str,
        version: Annotated[str, Form()] = "",
        actor: Actor = Depends(page_actor),
    ) -> Response:
        resources = service(services_of(request))
        return pages.delete(
            name,
            version,
            delete=lambda expected: resources.delete(name, actor=actor, expected_version=expected),
            refused=lambda reason: refused_page(request, name, actor, reason),
        )

    base = pages.list_page
    router.add_api_route(base + "/new", new_page, methods=["GET"], name=f"new_{noun}_page")
    router.add_api_route(base + "/new", create, methods=["POST"], name=f"create_{noun}")
    router.add_api_route(
        base + "/{name}/yaml", yaml_page, methods=["GET"], name=f"{noun}_yaml_page"
    )
    router.add_api_route(
        base + "/{name}/yaml", apply_yaml, methods=["POST"], name=f"apply_{noun}_yaml"
    )
    router.add_api_route(base + "/{name}/delete", delete, methods=["POST"], name=f"delete_{noun}")
