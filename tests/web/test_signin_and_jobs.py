"""Sign in, sign out, the jobs list, and the session rules every page follows."""

from __future__ import annotations

import httpx

from tests.web.conftest import Browser


def test_pages_send_the_unauthenticated_to_sign_in(anonymous_web: httpx.Client) -> None:
    for path in ["/", "/jobs", "/jobs?status=RUNNING"]:
        response = anonymous_web.get(path, follow_redirects=True)
        assert response.url.path == "/signin", path
        assert 'name="password"' in response.text


def test_a_wrong_password_shows_the_error_and_sets_no_session(
    anonymous_web: httpx.Client,
) -> None:
    response = anonymous_web.post("/signin", data={"user": "admin", "password": "nope"})
    assert response.status_code == 401
    assert "the user name or the password is wrong" in response.text
    assert "streamjobs_session" not in response.cookies


def test_sign_in_goes_only_to_local_pages(anonymous_web: httpx.Client, browser: Browser) -> None:
    password = browser.stage.password
    for target in ["https://evil.example/", "//evil.example", "/\\evil"]:
        response = anonymous_web.post(
            "/signin", data={"user": "admin", "password": password, "next": target}
        )
        assert response.headers["location"] == "/", target


def test_the_jobs_list_shows_status_and_links(browser: Browser) -> None:
    page = browser.page("/jobs")
    assert page.status_code == 200
    assert 'href="/jobs/ticks"' in page.text
    assert "badge-idle" in page.text
    assert "New streaming job" in page.text
    filtered = browser.page("/jobs?search=zzz")
    assert "No streaming jobs match these filters" in filtered.text


def test_changes_need_the_sessions_csrf_token(browser: Browser) -> None:
    refused = browser.client.post("/api/v1/jobs/ticks/run")
    assert refused.status_code == 403
    run = browser.client.post("/api/v1/jobs/ticks/run", headers={"X-CSRF-Token": browser.csrf})
    assert run.status_code == 201
    assert browser.client.post("/signout", data={"csrf": "wrong"}).status_code == 403


def test_sign_out_ends_the_session(browser: Browser) -> None:
    response = browser.submit("/signout", {})
    assert response.status_code == 303
    browser.client.cookies.clear()
    assert browser.client.get("/jobs").status_code == 303
