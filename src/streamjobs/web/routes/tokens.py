"""Settings → Access tokens: the signed-in person's tokens, creating one (its secret is shown
once, on the page that answers the form) and revoking one. With ``?user=NAME``, those of another
user or a service account, for those who manage users."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response

from streamjobs.domain.access import Actor
from streamjobs.domain.errors import AlreadyExists, FieldError, InvalidInput
from streamjobs.store import TokenRecord
from streamjobs.web.pages import page_actor, render, services_of

router = APIRouter()
TOKENS_PAGE = "/settings/tokens"


@router.get(TOKENS_PAGE)
def tokens_page(
    request: Request, user: Annotated[str, Query()] = "", actor: Actor = Depends(page_actor)
) -> Response:
    return _tokens_page(request, actor, _owner(request, actor, user))


@router.post(TOKENS_PAGE)
def create_token(
    request: Request,
    name: Annotated[str, Form()] = "",
    expires_in_days: Annotated[str, Form()] = "",
    user: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Issue a token and show it on this answer only: it is never shown again."""
    owner = _owner(request, actor, user)
    form = {"name": name, "expires_in_days": expires_in_days}
    try:
        token = services_of(request).identity.create_token(
            owner, name, actor=actor, expires_in_days=_days(expires_in_days)
        )
    except InvalidInput as error:
        return _tokens_page(
            request, actor, owner, form=form, errors=list(error.errors), status_code=422
        )
    except AlreadyExists as error:
        errors = [FieldError("name", f"{error.detail}; choose another name")]
        return _tokens_page(request, actor, owner, form=form, errors=errors, status_code=409)
    response = _tokens_page(request, actor, owner, new_token=token, new_token_name=name.strip())
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post(TOKENS_PAGE + "/{token_id}/revoke")
def revoke_token(
    request: Request,
    token_id: str,
    user: Annotated[str, Form()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Revoke one of the owner's tokens (404 for anybody else's)."""
    owner = _owner(request, actor, user)
    services_of(request).identity.revoke_token(owner, token_id, actor=actor)
    return RedirectResponse(_page_of(actor, owner), status_code=303)


def _owner(request: Request, actor: Actor, user: str) -> str:
    """Whose tokens the page is about: the signed-in person's, or (``user``) someone else's for
    those who may manage them (``Forbidden`` otherwise)."""
    owner = user.strip() or actor.name
    services_of(request).people.require_token_issuer(owner, actor=actor)
    return owner


def _page_of(actor: Actor, owner: str) -> str:
    return TOKENS_PAGE if owner == actor.name else f"{TOKENS_PAGE}?{urlencode({'user': owner})}"


def _tokens_page(
    request: Request,
    actor: Actor,
    owner: str,
    *,
    form: dict[str, str] | None = None,
    errors: list[FieldError] | None = None,
    new_token: str | None = None,
    new_token_name: str = "",
    status_code: int = 200,
) -> Response:
    services = services_of(request)
    now = services.clock.now()
    tokens = services.identity.list_tokens(owner)
    return render(
        request,
        "tokens.html",
        status_code=status_code,
        nav="tokens",
        owner=owner,
        own=owner == actor.name,
        tokens=[(token, _token_state(token, now)) for token in reversed(tokens)],
        form=form or {"name": "", "expires_in_days": ""},
        errors={error.path: error.message for error in errors or []},
        new_token=new_token,
        new_token_name=new_token_name,
    )


def _token_state(token: TokenRecord, now: datetime) -> str:
    if token.revoked_at is not None:
        return "Revoked"
    if not token.is_valid_at(now):
        return "Expired"
    return "Active"


def _days(text: str) -> int | None:
    """The optional "Expires in days" field as a number of days."""
    if not text.strip():
        return None
    try:
        return int(text)
    except ValueError:
        raise InvalidInput(
            [FieldError("expiresInDays", f"{text!r} is not a whole number of days")]
        ) from None
