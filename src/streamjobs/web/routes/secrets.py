"""Settings → Secrets: a bundle's secrets by name, adding or replacing one (its value is typed
into a password field and never shown again, not even on a form sent back with errors) and
deleting one after a confirmation. It offers only the bundles whose secrets the person may see,
and the changes only to those holding UPDATE on the bundle."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from streamjobs.domain.access import Actor, Permission
from streamjobs.domain.errors import FieldError, InvalidInput, NotFound
from streamjobs.domain.secrets import MAX_NAME_LENGTH
from streamjobs.web.pages import page_actor, render, services_of

router = APIRouter()
SECRETS_PAGE = "/settings/secrets"
DEFAULT_BUNDLE = "default"
OUTCOMES = frozenset({"created", "replaced", "deleted"})


@router.get(SECRETS_PAGE)
def secrets_page(
    request: Request,
    bundle: Annotated[str, Query()] = "",
    changed: Annotated[str, Query()] = "",
    result: Annotated[str, Query()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    notice = f"Secret “{changed}” {result}." if changed and result in OUTCOMES else None
    return _secrets_page(request, bundle, actor, notice=notice)


@router.post(SECRETS_PAGE)
def put_secret(
    request: Request,
    bundle: Annotated[str, Form()] = DEFAULT_BUNDLE,
    name: Annotated[str, Form()] = "",
    value: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Create or replace a secret, then show the bundle again (a reload sends nothing twice)."""
    name = name.strip()
    try:
        _, outcome = services_of(request).secrets.put(bundle, name, value, actor=actor)
    except InvalidInput as error:
        return _secrets_page(
            request, bundle, actor, name=name, errors=list(error.errors), status_code=422
        )
    return _back_to(bundle, changed=name, result=str(outcome))


@router.post(SECRETS_PAGE + "/{name}/delete")
def delete_secret(
    request: Request,
    name: str,
    bundle: Annotated[str, Form()] = DEFAULT_BUNDLE,
    actor: Actor = Depends(page_actor),
) -> Response:
    services_of(request).secrets.delete(bundle, name, actor=actor)
    return _back_to(bundle, changed=name, result="deleted")


def _back_to(bundle: str, **query: str) -> Response:
    return RedirectResponse(
        f"{SECRETS_PAGE}?{urlencode({'bundle': bundle, **query})}", status_code=303
    )


def _secrets_page(
    request: Request,
    bundle: str,
    actor: Actor,
    *,
    name: str = "",
    errors: list[FieldError] | None = None,
    notice: str | None = None,
    status_code: int = 200,
) -> Response:
    services = services_of(request)
    # Only the bundles whose secrets the person may see (the services say which).
    held = {
        view.bundle.name: view.held
        for view in services.bundles.list(actor=actor)
        if Permission.VIEW in view.held
    }
    bundles = list(held)
    if not bundle:
        bundle = DEFAULT_BUNDLE if DEFAULT_BUNDLE in held else next(iter(bundles), "")
    elif bundle not in held:
        raise NotFound("resource bundle", bundle)
    response = render(
        request,
        "secrets.html",
        status_code=status_code,
        nav="secrets",
        bundle=bundle,
        bundles=bundles,
        secrets=services.secrets.list(bundle, actor=actor) if bundle else [],
        may_change=Permission.UPDATE in held.get(bundle, frozenset()),
        name=name,
        errors={error.path: error.message for error in errors or []},
        notice=notice,
        max_name_length=MAX_NAME_LENGTH,
    )
    response.headers["Cache-Control"] = "no-store"
    return response
