"""Settings → Access tokens over HTTP: create (shown once, works as a Bearer token), list, revoke
(then 401), and nobody revokes anybody else's."""

from __future__ import annotations

import re

import httpx

from streamjobs.domain.access import PrincipalKind
from streamjobs.services.identity import BOOTSTRAP_ACTOR
from tests.web.conftest import Browser

TOKEN = re.compile(r"sj_[A-Za-z0-9_-]{20,}")


def token_ids(page: httpx.Response) -> dict[str, str]:
    """Each listed token's name by its id."""
    rows = re.findall(r'<tr data-token="([^"]+)"[^>]*>\s*<td>([^<]+)', page.text)
    return {token_id: name.strip() for token_id, name in rows}


def bearer(browser: Browser, token: str) -> httpx.Response:
    return httpx.get(
        f"{browser.stage.url}/api/v1/jobs", headers={"Authorization": f"Bearer {token}"}
    )


def test_a_new_token_is_shown_once_and_works(browser: Browser) -> None:
    created = browser.submit("/settings/tokens", {"name": "ci", "expires_in_days": "30"})
    assert created.status_code == 200
    assert created.headers["cache-control"] == "no-store"
    shown = TOKEN.findall(created.text)
    assert len(shown) == 1
    assert "shown only this once" in created.text
    assert 'data-copy="new-token"' in created.text

    assert bearer(browser, shown[0]).status_code == 200
    listed = browser.page("/settings/tokens")
    assert listed.status_code == 200
    assert shown[0] not in listed.text
    assert not TOKEN.search(listed.text)
    assert sorted(token_ids(listed).values()) == ["bootstrap", "ci"]
    row = re.search(
        r'<tr data-token="[^"]+" data-state="Active">\s*<td>ci</td>.*?</tr>', listed.text, re.DOTALL
    )
    assert row
    cells = re.findall(r"<td>(.*?)</td>", row.group(0), re.DOTALL)
    assert "2026-01-31" in cells[2]  # expires: the fake clock's day plus 30
    assert "2026-01-01" in cells[3]  # last used: just now, by the request above
    assert cells[4] == "No"


def test_a_revoked_token_gets_401(browser: Browser) -> None:
    token = TOKEN.findall(browser.submit("/settings/tokens", {"name": "laptop"}).text)[0]
    ids = {name: token_id for token_id, name in token_ids(browser.page("/settings/tokens")).items()}
    revoke = f"/settings/tokens/{ids['laptop']}/revoke"
    assert browser.client.post(revoke).status_code == 403
    revoked = browser.submit(revoke, {})
    assert revoked.status_code == 303
    assert revoked.headers["location"] == "/settings/tokens"
    assert bearer(browser, token).status_code == 401
    page = browser.page("/settings/tokens")
    row = re.search(
        r'<tr data-token="[^"]+" data-state="Revoked">\s*<td>laptop</td>.*?</tr>',
        page.text,
        re.DOTALL,
    )
    assert row
    assert "Yes, revoke it" not in row.group(0)
    assert browser.submit(revoke, {}).status_code == 303  # again: nothing changes


def test_nobody_revokes_anybody_elses_token(browser: Browser) -> None:
    services = browser.stage.services
    with services.store.transaction() as repos:
        repos.users.add("bob", is_admin=False, at=services.clock.now())
    token = services.identity.issue_token("bob", "bobs", actor=BOOTSTRAP_ACTOR)
    (bobs,) = services.identity.list_tokens("bob")
    assert bobs.id not in browser.page("/settings/tokens").text
    refused = browser.submit(f"/settings/tokens/{bobs.id}/revoke", {})
    assert refused.status_code == 404
    assert browser.submit("/settings/tokens/no-such-token/revoke", {}).status_code == 404
    assert bearer(browser, token).status_code == 200


def test_bad_input_is_shown_on_the_form(browser: Browser) -> None:
    nameless = browser.submit("/settings/tokens", {"name": "  ", "expires_in_days": ""})
    assert nameless.status_code == 422
    assert "give the token a name" in nameless.text
    assert 'aria-invalid="true"' in nameless.text
    days = browser.submit("/settings/tokens", {"name": "soon", "expires_in_days": "soon"})
    assert days.status_code == 422
    assert "is not a whole number of days" in days.text
    assert 'value="soon"' in days.text
    assert (
        browser.submit("/settings/tokens", {"name": "x", "expires_in_days": "0"}).status_code == 422
    )
    taken = browser.submit("/settings/tokens", {"name": "bootstrap"})
    assert taken.status_code == 409
    assert "already exists; choose another name" in taken.text
    assert not TOKEN.search(taken.text)
    assert browser.client.post("/settings/tokens", data={"name": "x"}).status_code == 403


def test_the_page_sends_the_unauthenticated_to_sign_in(anonymous_web: httpx.Client) -> None:
    response = anonymous_web.get("/settings/tokens")
    assert response.status_code == 303
    assert response.headers["location"] == "/signin?next=%2Fsettings%2Ftokens"
    for path in ["/settings/tokens", "/settings/tokens/x/revoke"]:
        posted = anonymous_web.post(path, data={"csrf": "x", "name": "x"})
        assert posted.status_code == 303, path
        assert posted.headers["location"].startswith("/signin"), path


def test_a_user_manager_issues_and_revokes_a_service_accounts_tokens(browser: Browser) -> None:
    services = browser.stage.services
    services.people.create_user(
        "svc-web", actor=BOOTSTRAP_ACTOR, kind=PrincipalKind.SERVICE_ACCOUNT
    )
    people = browser.page("/settings/users")
    assert 'href="/settings/tokens?user=svc-web"' in people.text
    page = browser.page("/settings/tokens?user=svc-web")
    assert page.status_code == 200
    assert "Tokens of svc-web" in page.text
    created = browser.submit("/settings/tokens", {"name": "deploy", "user": "svc-web"})
    assert created.status_code == 200
    (secret,) = TOKEN.findall(created.text)
    whoami = httpx.get(
        f"{browser.stage.url}/api/v1/whoami", headers={"Authorization": f"Bearer {secret}"}
    )
    assert whoami.json()["name"] == "svc-web"
    assert whoami.json()["kind"] == "serviceAccount"
    listed = browser.page("/settings/tokens?user=svc-web")
    (token_id,) = token_ids(listed)
    revoked = browser.submit(f"/settings/tokens/{token_id}/revoke", {"user": "svc-web"})
    assert revoked.status_code == 303
    assert revoked.headers["location"] == "/settings/tokens?user=svc-web"
    assert bearer(browser, secret).status_code == 401


def test_a_plain_user_sees_no_one_elses_tokens(browser: Browser) -> None:
    services = browser.stage.services
    services.people.create_user("plain-tokens", actor=BOOTSTRAP_ACTOR, password="x" * 12)
    with httpx.Client(base_url=browser.stage.url, timeout=30) as client:
        client.post("/signin", data={"user": "plain-tokens", "password": "x" * 12})
        assert client.get("/settings/tokens").status_code == 200
        refused = client.get("/settings/tokens?user=admin")
        assert refused.status_code == 403
        assert "Manage users" in refused.text
