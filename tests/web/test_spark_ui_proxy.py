"""The Spark UI proxy over HTTP, against a stand-in for a driver's UI (a real HTTP server on a
loopback port, recorded as the attempt's UI port): what is forwarded and what is not, redirects
kept under the prefix, the sandbox policy, and who may use it when. A real driver's UI is
tested in ``tests/e2e/test_spark_ui_proxy_e2e.py``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from streamjobs.domain.access import Permission
from streamjobs.web.routes import spark_ui_proxy
from streamjobs.web.routes.spark_ui_proxy import content_policy, driver_url, local_location
from tests.web.access_helpers import add_user, admin_of, signed_in
from tests.web.conftest import Browser
from tests.web.html import parse

PAGE_BODY = b"<html><body><h1>Spark Jobs</h1></body></html>"


class DriverUi:
    """A stand-in for a driver's UI: fixed answers by path, every request it got recorded."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        recorded = self.requests
        driver = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                recorded.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": dict(self.headers.items()),
                    }
                )
                port = driver.port
                if self.path == "/":
                    self._answer(302, {"Location": f"http://127.0.0.1:{port}/jobs/"})
                elif self.path == "/away":
                    self._answer(302, {"Location": "http://example.com/jobs/"})
                elif self.path == "/dots":
                    self._answer(302, {"Location": "/x/%2e%2e/%2E%2E/settings/tokens"})
                elif self.path == "/backslashes":
                    self._answer(302, {"Location": "/x/..\\..\\..\\..\\connections"})
                elif self.path == "/bad-port":
                    self._answer(302, {"Location": "http://127.0.0.1:99999/jobs/"})
                elif self.path == "/two-locations":
                    self.send_response(302)
                    self.send_header("Location", "/jobs/")
                    self.send_header("Location", "//evil.example/")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path == "/euro":
                    self.wfile.write(
                        "HTTP/1.1 200 OK\r\nX-Thing: €\r\nContent-Type: text/html\r\n"
                        "Content-Length: 3\r\nConnection: close\r\n\r\nok\n".encode()
                    )
                    self.close_connection = True
                else:
                    self._answer(
                        200,
                        {
                            "Content-Type": "text/html",
                            "Set-Cookie": "driver=1; Path=/",
                            "Content-Security-Policy": "default-src *",
                            "Connection": "keep-alive",
                        },
                        PAGE_BODY,
                    )

            def do_HEAD(self) -> None:
                self.do_GET()

            def _answer(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def driver_ui() -> Iterator[DriverUi]:
    ui = DriverUi()
    yield ui
    ui.close()


def running_application(browser: Browser, ui_port: int) -> str:
    """A RUNNING application of the stage's ``ticks`` job whose attempt records ``ui_port``."""
    stage = browser.stage
    run = browser.client.post("/api/v1/jobs/ticks/run", headers={"X-CSRF-Token": browser.csrf})
    application_id: str = run.json()["id"]
    stage.tick()
    assert stage.report(application_id, [{"type": "heartbeat", "sequence": 0}]).is_success
    stage.tick()
    with stage.services.store.transaction() as repos:
        repos.applications.update_attempt(application_id, 1, ui_port=ui_port)
    return application_id


def test_pages_are_forwarded_without_the_persons_credentials(
    browser: Browser, driver_ui: DriverUi
) -> None:
    application_id = running_application(browser, driver_ui.port)
    prefix = f"/applications/{application_id}/spark-ui"
    answer = browser.client.get(
        f"{prefix}/jobs/?id=3", headers={"Authorization": "Bearer sj-secret", "Accept": "text/html"}
    )
    assert answer.status_code == 200
    assert answer.content == PAGE_BODY
    received = driver_ui.requests[-1]
    assert received["path"] == "/jobs/?id=3"
    sent = {key.lower(): value for key, value in received["headers"].items()}
    assert "cookie" not in sent
    assert "authorization" not in sent
    assert sent["x-forwarded-context"] == prefix
    assert sent["accept"] == "text/html"
    assert "set-cookie" not in answer.headers
    assert "connection" not in answer.headers or answer.headers["connection"] != "keep-alive"
    policy = answer.headers["content-security-policy"]
    assert policy.startswith("sandbox allow-scripts allow-same-origin")
    assert "allow-popups" not in policy
    host = httpx.URL(browser.stage.url).netloc.decode()
    assert f"connect-src {host}{prefix}/" in policy
    assert "default-src *" not in policy
    assert f"script-src {host}{prefix}/ " in policy
    assert "'self'" not in policy
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["x-content-type-options"] == "nosniff"

    head = browser.client.head(f"{prefix}/jobs/")
    assert head.status_code == 200
    assert head.content == b""
    assert driver_ui.requests[-1]["method"] == "HEAD"


def test_redirects_stay_under_the_prefix(browser: Browser, driver_ui: DriverUi) -> None:
    application_id = running_application(browser, driver_ui.port)
    prefix = f"/applications/{application_id}/spark-ui"
    root = browser.client.get(f"{prefix}/")
    assert root.status_code == 302
    assert root.headers["location"] == f"{prefix}/jobs/"
    bare = browser.client.get(prefix)
    assert (bare.status_code, bare.headers["location"]) == (307, f"{prefix}/")
    for hostile in ("away", "dots", "backslashes", "bad-port", "two-locations"):
        answer = browser.client.get(f"{prefix}/{hostile}")
        assert answer.status_code == 502, hostile
        assert "location" not in answer.headers


def test_headers_that_are_not_latin_1_pass_as_bytes(browser: Browser, driver_ui: DriverUi) -> None:
    application_id = running_application(browser, driver_ui.port)
    prefix = f"/applications/{application_id}/spark-ui"
    answer = browser.client.get(f"{prefix}/euro", headers={"Accept-Language": "é".encode()})
    assert answer.status_code == 200
    assert answer.content == b"ok\n"
    assert answer.headers["x-thing"] == "€"
    assert "content-security-policy" in answer.headers
    sent = {key.lower(): value for key, value in driver_ui.requests[-1]["headers"].items()}
    assert sent["accept-language"].encode("latin-1") == "é".encode()


def test_bytes_a_url_cannot_hold_reach_the_driver_percent_encoded() -> None:
    url = driver_url(4040, "/jobs/\xe9?q=\xe9 x")
    assert url.raw_path == b"/jobs/%E9?q=%E9%20x"
    assert (url.host, url.port) == ("127.0.0.1", 4040)
    assert driver_url(4040, "/jobs/?id=3").raw_path == b"/jobs/?id=3"


def test_the_driver_connection_is_closed_when_answering_fails(
    browser: Browser, driver_ui: DriverUi, monkeypatch: pytest.MonkeyPatch
) -> None:
    application_id = running_application(browser, driver_ui.port)
    closed: list[str] = []
    close_client, close_response = httpx.AsyncClient.aclose, httpx.Response.aclose

    async def client_closed(client: httpx.AsyncClient) -> None:
        closed.append("client")
        await close_client(client)

    async def response_closed(response: httpx.Response) -> None:
        closed.append("response")
        await close_response(response)

    def failing(*args: object) -> None:
        raise RuntimeError("answering failed")

    monkeypatch.setattr(httpx.AsyncClient, "aclose", client_closed)
    monkeypatch.setattr(httpx.Response, "aclose", response_closed)
    monkeypatch.setattr(spark_ui_proxy, "_answer_headers", failing)
    answer = browser.client.get(f"/applications/{application_id}/spark-ui/jobs/")
    assert answer.status_code == 500
    assert driver_ui.requests[-1]["path"] == "/jobs/"
    assert {"client", "response"} <= set(closed)


def test_only_get_and_head_are_forwarded(browser: Browser, driver_ui: DriverUi) -> None:
    application_id = running_application(browser, driver_ui.port)
    prefix = f"/applications/{application_id}/spark-ui"
    for method in ("POST", "PUT", "DELETE"):
        answer = browser.client.request(
            method, f"{prefix}/jobs/", headers={"X-CSRF-Token": browser.csrf}
        )
        assert answer.status_code == 405
    assert driver_ui.requests == []


def test_no_driver_no_ui(browser: Browser, driver_ui: DriverUi) -> None:
    assert browser.client.get("/applications/app-000000000000/spark-ui/").status_code == 404
    application_id = running_application(browser, driver_ui.port)
    prefix = f"/applications/{application_id}/spark-ui"
    page = parse(browser.page(f"/applications/{application_id}"))
    assert page.attr("href", "#spark-ui-link") == f"{prefix}/"
    assert page.attr("rel", "#spark-ui-link") == "noopener noreferrer"
    job_page = parse(browser.page("/jobs/ticks"))
    assert job_page.attr("href", "[data-cell=spark-ui]") == f"{prefix}/"

    driver_ui.close()
    gone = browser.client.get(f"{prefix}/jobs/")
    assert gone.status_code == 502
    assert "did not answer" in parse(gone).text("main")

    stage = browser.stage
    stage.services.applications.abort(application_id, actor=admin_of(stage))
    stage.tick()
    stage.tick()
    assert browser.client.get(f"{prefix}/jobs/").status_code == 404
    assert not parse(browser.page(f"/applications/{application_id}")).has("#spark-ui-link")


def test_the_jobs_view_permission_is_needed(browser: Browser, driver_ui: DriverUi) -> None:
    stage = browser.stage
    application_id = running_application(browser, driver_ui.port)
    prefix = f"/applications/{application_id}/spark-ui"
    add_user(stage, "viewer", bundle="default", permissions=[Permission.VIEW])
    add_user(stage, "stranger")
    viewer = signed_in(stage, "viewer")
    stranger = signed_in(stage, "stranger")
    try:
        assert viewer.client.get(f"{prefix}/jobs/").status_code == 200
        assert stranger.client.get(f"{prefix}/jobs/").status_code == 404
        assert stranger.client.get(prefix).status_code in {403, 404}
    finally:
        viewer.client.close()
        stranger.client.close()
    with httpx.Client(base_url=stage.url) as anonymous:
        signed_out = anonymous.get(f"{prefix}/jobs/")
        assert signed_out.status_code == 303
        assert signed_out.headers["location"].startswith("/signin?next=")
    assert len(driver_ui.requests) == 1


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("http://127.0.0.1:4040/jobs/", "/p/jobs/"),
        ("/jobs/?id=1", "/p/jobs/?id=1"),
        ("/p/jobs/", "/p/jobs/"),
        ("stages/", "/p/jobs/stages/"),
        ("../environment/", "/p/environment/"),
        ("http://127.0.0.1:4041/jobs/", None),
        ("https://127.0.0.1:4040/jobs/", None),
        ("//evil.example/jobs/", None),
        ("/x/%2e%2E/settings", None),
        ("/p/..%2fsettings", None),
        ("/p/jobs/.%2E/", None),
        ("/p/jobs%5c..%5c..%5csettings", None),
        ("/x/..\\..\\..\\..\\connections", None),
        ("\\\\evil.example/jobs/", None),
        ("/\\evil.example/jobs/", None),
        ("/jobs/\t../../../connections", None),
        ("/jobs/\n", None),
        (" /jobs/", None),
        ("/jobs/\x00", None),
        ("/jobs/€", None),
        ("http://127.0.0.1:99999/jobs/", None),
        ("http://127.0.0.1:port/jobs/", None),
        ("http://[::1/jobs/", None),
        ("/p/jobs/job/?id=1&x=%2e", "/p/jobs/job/?id=1&x=%2e"),
        ("/p/static/a%20b.js", "/p/static/a%20b.js"),
    ],
)
def test_local_location(location: str, expected: str | None) -> None:
    assert local_location(location, "http://127.0.0.1:4040/jobs/", "/p", 4040) == expected


def test_a_host_that_cannot_be_a_policy_source_allows_nothing() -> None:
    assert "connect-src 127.0.0.1:8040/p/;" in content_policy("127.0.0.1:8040", "/p")
    assert "connect-src [::1]:8040/p/;" in content_policy("[::1]:8040", "/p")
    for host in ("", "a b", "x; script-src *", "evil/path"):
        policy = content_policy(host, "/p")
        assert "connect-src 'none';" in policy
        assert "form-action 'none';" in policy
