"""A browser session's change to an ``/api`` route carries its CSRF token in the header only: the
body belongs to the route, so a form-encoded body is never read for a token (reading it there left
the route a consumed stream, a 500)."""

from __future__ import annotations

from tests.api.problems import problem_of
from tests.web.conftest import Browser


def test_a_form_encoded_api_write_with_a_session_is_refused_not_a_500(browser: Browser) -> None:
    refused = browser.client.post("/api/v1/jobs", data={"csrf": browser.csrf, "kind": "x"})
    assert "CSRF" in problem_of(refused, 403)["detail"]


def test_the_header_token_lets_the_route_read_its_body(browser: Browser) -> None:
    unreadable = browser.client.post(
        "/api/v1/jobs", data={"kind": "x"}, headers={"X-CSRF-Token": browser.csrf}
    )
    assert problem_of(unreadable, 400)["errors"][0]["message"].startswith("not valid JSON")
