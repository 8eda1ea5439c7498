"""Notices shown once, on the page a form's redirect leads to ("flash" messages).

A form that succeeded redirects (POST, then 303 to a page), and what it has to say beyond "done"
must survive the redirect: creating a job whose checkpoint already holds state, deleting one whose
checkpoint stays. The redirect sets a short-lived cookie with the notices; the next full page
shows them (``base.html``) and clears the cookie.

They are shown as the server's own words, yet this origin also serves pages the server did not
write (a job's Spark UI, through the proxy), whose scripts can write cookies. So the cookie is
signed: with a key this process drew at start (a notice does not outlive a restart, which it has
no need to), for the session it was made in, and it is honoured only while fresh. Anything else
in the cookie is ignored.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Sequence

from fastapi import Request, Response
from fastapi.responses import RedirectResponse

from streamjobs.http.sessions import COOKIE as SESSION_COOKIE

COOKIE = "streamjobs-notices"
LIFETIME_SECONDS = 120
"""Long enough for the redirect to be followed, short enough not to surprise later."""
_MOST = 5
_SIGNING_KEY = secrets.token_bytes(32)


def redirect_with_notices(request: Request, url: str, notices: Sequence[str]) -> RedirectResponse:
    """A 303 to ``url`` whose page shows ``notices`` once, in this request's session (none: a
    plain redirect)."""
    response = RedirectResponse(url, status_code=303)
    if notices:
        payload = json.dumps(
            {"at": int(time.time()), "notices": list(notices[:_MOST])}, ensure_ascii=True
        )
        encoded = base64.urlsafe_b64encode(payload.encode()).decode()
        value = f"{encoded}.{_signature(request, encoded)}"
        response.set_cookie(
            COOKIE, value, max_age=LIFETIME_SECONDS, httponly=True, samesite="lax", path="/"
        )
    return response


def pending_notices(request: Request) -> list[str]:
    """The notices a redirect of this session left for this page; forged, stale, another
    session's or unreadable ones are dropped."""
    encoded, _, signature = request.cookies.get(COOKIE, "").partition(".")
    if not encoded or not hmac.compare_digest(signature, _signature(request, encoded)):
        return []
    try:
        content = json.loads(base64.urlsafe_b64decode(encoded.encode()))
    except (ValueError, binascii.Error):
        return []
    if not isinstance(content, dict):
        return []
    made_at, notices = content.get("at"), content.get("notices")
    if not isinstance(made_at, int) or not 0 <= time.time() - made_at <= LIFETIME_SECONDS:
        return []
    if not isinstance(notices, list):
        return []
    return [notice for notice in notices[:_MOST] if isinstance(notice, str)]


def clear_notices(request: Request, response: Response) -> None:
    """Forget the notices once a page has shown them."""
    if COOKIE in request.cookies:
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="lax")


def _signature(request: Request, encoded: str) -> str:
    session = request.cookies.get(SESSION_COOKIE, "")
    message = f"{session}\n{encoded}".encode()
    return hmac.new(_SIGNING_KEY, message, hashlib.sha256).hexdigest()
