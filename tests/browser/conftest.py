"""Browser tests: Playwright drives Debian's Chromium (``/usr/bin/chromium``, headless) against a
real ``streamjobs server`` process with its supervisor, which runs real spark-submit drivers.

One server and one browser serve the whole session. Every test gets a fresh browser context;
``page`` is signed in as admin with the cookie of one sign-in through the Sign in form. Every
request a page makes is recorded: a test fails if any goes to a host other than the server's
(such requests are also aborted, so a page that would reach the internet fails fast, not late).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psutil
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright

from streamjobs.launch.ports import free_loopback_port
from tests.conftest import skip_or_fail
from tests.e2e.test_server_process import STREAMJOBS, streamjobs, wait_until_healthy

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(__file__).parent / "screenshots"
# Playwright's default for locator actions and expect(); the Spark waits pass their own, longer.
DEFAULT_TIMEOUT_MS = 15_000
SERVER_LOG_LINES = 60
LOCAL_SCHEMES = frozenset({"data", "blob", "about", "chrome-error"})


# --- the server --------------------------------------------------------------------------------


@dataclass
class Server:
    """A ``streamjobs server`` process with its supervisor, on SQLite, in a temporary home."""

    url: str
    home: Path
    work: Path
    password: str
    token: str
    env: dict[str, str]
    log: Path

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    def api(self) -> httpx.Client:
        """A REST client as admin, to look behind the pages (never to drive them)."""
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("browser-server")
    home = root / "home"
    env = {key: value for key, value in os.environ.items() if not key.startswith("STREAMJOBS_")}
    port = free_loopback_port()
    env.update(
        STREAMJOBS_HOME=str(home),
        STREAMJOBS_PORT=str(port),
        STREAMJOBS_DATABASE_URL=f"sqlite:///{root / 'store.db'}",
        STREAMJOBS_ABORT_GRACE_SECONDS="5",
        STREAMJOBS_DEFAULT_DATA_ROOTS=json.dumps([(root / "work").as_uri()]),
    )
    bootstrapped = streamjobs(env, "admin", "bootstrap")
    assert bootstrapped.returncode == 0, bootstrapped.stderr
    log = root / "server.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            [*STREAMJOBS, "server"],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_until_healthy(url, process)
        except AssertionError as failed:
            raise AssertionError(f"{failed}\n{log.read_text()}") from None
        yield Server(
            url=url,
            home=home,
            work=root / "work",
            password=(home / "admin-password").read_text().strip(),
            token=(home / "admin-token").read_text().strip(),
            env=env,
            log=log,
        )
    finally:
        _stop(process)
        _kill_drivers_of(home)


def _stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM the server's process group, SIGKILL it if it is not gone in 30 s."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    except ProcessLookupError:
        pass


def drivers_of(home: Path) -> list[psutil.Process]:
    """The live driver wrappers whose attempt directories are under ``home``."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if "streamjobs.launch.wrapper" in cmdline and any(str(home) in part for part in cmdline):
            found.append(process)
    return found


def _kill_drivers_of(home: Path) -> None:
    """SIGKILL every driver's process group (the wrapper leads it) that outlived the server."""
    drivers = drivers_of(home)
    for driver in drivers:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(driver.pid, signal.SIGKILL)
    psutil.wait_procs(drivers, timeout=30)


@pytest.fixture
def server_api(server: Server) -> Iterator[httpx.Client]:
    with server.api() as client:
        yield client


# --- the browser -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    if not CHROMIUM.exists():
        skip_or_fail(f"Chromium is not installed at {CHROMIUM} (scripts/ensure-chromium.sh)")
    with sync_playwright() as running:
        yield running


@pytest.fixture(scope="session")
def chromium(playwright: Playwright) -> Iterator[Browser]:
    browser = playwright.chromium.launch(
        executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
    )
    expect.set_options(timeout=DEFAULT_TIMEOUT_MS)
    yield browser
    browser.close()


@dataclass
class RequestGuard:
    """Every request (and web socket) the pages of one browser context make."""

    server_host: str
    requests: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    def is_local(self, url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme in LOCAL_SCHEMES or parts.netloc == self.server_host

    def outside(self) -> list[str]:
        return [url for url in self.requests if not self.is_local(url)]

    def watch(self, context: BrowserContext) -> None:
        context.on("request", lambda request: self.requests.append(request.url))
        context.route(lambda url: not self.is_local(url), lambda route: route.abort())
        context.on("page", self._watch_page)

    def _watch_page(self, page: Page) -> None:
        page.on("websocket", lambda socket: self.requests.append(socket.url))
        page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        page.on("pageerror", lambda error: self.console.append(f"uncaught: {error}"))


GUARD = pytest.StashKey[RequestGuard]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Fail the test (not its teardown) when one of its pages reached outside the server; on a
    failure, show what the pages logged and the end of the server's log."""
    guard = item.stash.get(GUARD, None)
    try:
        result = yield
    except BaseException:
        server = getattr(item, "funcargs", {}).get("server")
        if isinstance(server, Server):
            tail = server.log.read_text(errors="replace").splitlines()[-SERVER_LOG_LINES:]
            item.add_report_section("call", "server log", "\n".join(tail))
        raise
    finally:
        if guard is not None and guard.console:
            item.add_report_section("call", "browser console", "\n".join(guard.console))
    if guard is not None:
        outside = guard.outside()
        assert not outside, f"the pages made requests outside the server: {outside}"
    return result


@pytest.fixture
def context(
    chromium: Browser, server: Server, request: pytest.FixtureRequest
) -> Iterator[BrowserContext]:
    """A fresh browser context (no cookies) whose requests are guarded."""
    browser_context = chromium.new_context(
        base_url=server.url, viewport={"width": 1280, "height": 900}
    )
    browser_context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    guard = RequestGuard(server_host=server.host)
    guard.watch(browser_context)
    request.node.stash[GUARD] = guard
    yield browser_context
    browser_context.close()


@pytest.fixture
def anonymous_page(context: BrowserContext) -> Page:
    """A page of a context that has not signed in."""
    return context.new_page()


@pytest.fixture(scope="session")
def admin_cookies(chromium: Browser, server: Server) -> list[Any]:
    """The session cookie of admin, signed in once through the Sign in form (password hashing
    makes each sign-in cost about a second; the cookie is all a signed-in browser holds)."""
    browser_context = chromium.new_context(base_url=server.url)
    try:
        signing_in = browser_context.new_page()
        sign_in(signing_in, "admin", server.password)
        expect(signing_in).to_have_url(f"{server.url}/jobs")
        return list(browser_context.cookies())
    finally:
        browser_context.close()


@pytest.fixture
def page(context: BrowserContext, server: Server, admin_cookies: list[Any]) -> Page:
    """A page signed in as admin, on the jobs list."""
    context.add_cookies(admin_cookies)
    signed_in = context.new_page()
    signed_in.goto("/jobs")
    expect(signed_in).to_have_url(f"{server.url}/jobs")
    return signed_in


def sign_in(page: Page, user: str, password: str) -> None:
    page.goto("/signin")
    page.get_by_label("User name").fill(user)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


@pytest.fixture(scope="session")
def screenshot() -> Callable[[Page, str], Path]:
    """Save the whole page as ``tests/browser/screenshots/<name>.png`` for a person to look at."""
    SCREENSHOTS.mkdir(exist_ok=True)

    def save(page: Page, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save
