"""Settings → Secrets over HTTP: add, replace and delete a bundle's secrets, values never shown
(not even on a form sent back with errors), CSRF checked, and sign-in required."""

from __future__ import annotations

import re

import httpx

from tests.web.conftest import Browser

PAGE = "/settings/secrets"
VALUE = "web-s3cret-value-41b7"


def listed(page: httpx.Response) -> dict[str, list[str]]:
    """Each listed secret's cells by its name."""
    rows = re.findall(r'<tr data-secret="([^"]+)">(.*?)</tr>', page.text, re.DOTALL)
    return {
        name: [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td>(.*?)</td>", row)]
        for name, row in rows
    }


def test_add_replace_and_delete_a_secret(browser: Browser) -> None:
    empty = browser.page(PAGE)
    assert empty.status_code == 200
    assert empty.headers["cache-control"] == "no-store"
    assert 'aria-current="page">Secrets' in empty.text
    assert "No secrets in default yet." in empty.text

    added = browser.submit(PAGE, {"bundle": "default", "name": "db-password", "value": VALUE})
    assert added.status_code == 303
    assert added.headers["location"] == f"{PAGE}?bundle=default&changed=db-password&result=created"
    page = browser.page(added.headers["location"])
    assert "Secret “db-password” created." in page.text
    assert listed(page)["db-password"][:2] == ["db-password", "1"]
    assert listed(page)["db-password"][3] == "admin"
    assert 'type="password"' in page.text
    assert VALUE not in page.text

    replaced = browser.submit(PAGE, {"bundle": "default", "name": "db-password", "value": "new"})
    assert replaced.headers["location"].endswith("result=replaced")
    assert listed(browser.page(PAGE))["db-password"][1] == "2"
    services = browser.stage.services
    assert services.secrets.resolve("default", ["db-password"]) == {"db-password": "new"}

    deleted = browser.submit(f"{PAGE}/db-password/delete", {"bundle": "default"})
    assert deleted.status_code == 303
    page = browser.page(deleted.headers["location"])
    assert "Secret “db-password” deleted." in page.text
    assert "db-password" not in listed(page)
    assert browser.submit(f"{PAGE}/db-password/delete", {"bundle": "default"}).status_code == 404


def test_bad_input_is_shown_on_the_form_without_the_value(browser: Browser) -> None:
    refused = browser.submit(PAGE, {"bundle": "default", "name": "Bad Name", "value": VALUE})
    assert refused.status_code == 422
    assert "is not a secret name" in refused.text
    assert 'value="Bad Name"' in refused.text
    assert 'aria-invalid="true"' in refused.text
    assert VALUE not in refused.text
    empty = browser.submit(PAGE, {"bundle": "default", "name": "ok", "value": ""})
    assert empty.status_code == 422
    assert "must not be empty" in empty.text
    assert listed(browser.page(PAGE)) == {}


def test_each_bundle_has_its_own_secrets(browser: Browser) -> None:
    services = browser.stage.services
    with services.store.transaction() as repos:
        repos.bundles.add("payments", services.clock.now())
    browser.submit(PAGE, {"bundle": "payments", "name": "api-key", "value": VALUE})
    payments = browser.page(f"{PAGE}?bundle=payments")
    assert list(listed(payments)) == ["api-key"]
    assert '<option value="payments" selected>' in payments.text
    assert listed(browser.page(PAGE)) == {}
    assert browser.page(f"{PAGE}?bundle=nope").status_code == 404
    unknown = browser.submit(PAGE, {"bundle": "nope", "name": "x", "value": VALUE})
    assert unknown.status_code == 404


def test_changes_need_the_sessions_csrf_token(browser: Browser) -> None:
    fields = {"bundle": "default", "name": "forged", "value": VALUE}
    assert browser.client.post(PAGE, data=fields).status_code == 403
    assert browser.client.post(PAGE, data={**fields, "csrf": "wrong"}).status_code == 403
    browser.submit(PAGE, {"bundle": "default", "name": "kept", "value": VALUE})
    forged_delete = browser.client.post(f"{PAGE}/kept/delete", data={"bundle": "default"})
    assert forged_delete.status_code == 403
    assert list(listed(browser.page(PAGE))) == ["kept"]


def test_the_page_sends_the_unauthenticated_to_sign_in(anonymous_web: httpx.Client) -> None:
    response = anonymous_web.get(PAGE)
    assert response.status_code == 303
    assert response.headers["location"] == "/signin?next=%2Fsettings%2Fsecrets"
    for path in [PAGE, f"{PAGE}/x/delete"]:
        posted = anonymous_web.post(path, data={"csrf": "x", "name": "x", "value": "v"})
        assert posted.status_code == 303, path
        assert posted.headers["location"].startswith("/signin"), path
