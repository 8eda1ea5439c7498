"""What the access-control page tests share: people and grants made through the services as the
admin, a browser signed in as one of those people, and reading a page's buttons and forms."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from html.parser import HTMLParser

import httpx

from streamjobs.domain.access import (
    Actor,
    BundleGrant,
    DomainPermission,
    Permission,
    Subject,
    SubjectKind,
)
from tests.staged_server import Stage
from tests.web.conftest import Browser

PASSWORD = "correct-horse-battery-9"


def admin_of(stage: Stage) -> Actor:
    return Actor(stage.services.identity.principal("admin"))


def add_user(
    stage: Stage,
    name: str,
    *,
    bundle: str | None = None,
    permissions: Iterable[Permission] = (),
    domain: Iterable[DomainPermission] = (),
) -> None:
    """A user who signs in with ``PASSWORD``, holding ``permissions`` on ``bundle`` (added to its
    grants) and the ``domain`` permissions."""
    services = stage.services
    admin = admin_of(stage)
    services.people.create_user(name, actor=admin, password=PASSWORD)
    subject = Subject(SubjectKind.USER, name)
    if bundle is not None and permissions:
        existing = services.bundles.get(bundle, actor=admin).grants
        added = [BundleGrant(bundle, subject, permission) for permission in permissions]
        services.bundles.set_grants(bundle, [*existing, *added], actor=admin)
    for permission in domain:
        services.people.set_domain_grant(subject, permission, granted=True, actor=admin)


def signed_in(stage: Stage, user: str, password: str = PASSWORD) -> Browser:
    """A browser signed in as ``user`` (close its client when done)."""
    client = httpx.Client(base_url=stage.url, timeout=30)
    answer = client.post("/signin", data={"user": user, "password": password, "next": "/jobs"})
    assert answer.status_code == 303, answer.text
    browser = Browser(client=client, csrf="", stage=stage)
    browser.page("/jobs")
    assert browser.csrf
    return browser


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: str = ""

    @property
    def disabled(self) -> bool:
        return "disabled" in self.attrs


class Page(HTMLParser):
    """A page's buttons, links, forms and every element with an id, read with the standard
    library's parser (which reads ``<noscript>`` content as markup: what no-script browsers get)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.by_id: dict[str, Element] = {}
        self._open: list[Element] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {key: value or "" for key, value in attrs})
        self.elements.append(element)
        if "id" in element.attrs:
            self.by_id[element.attrs["id"]] = element
        if tag not in {"input", "br", "img", "meta", "link", "option"}:
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self._open) - 1, -1, -1):
            if self._open[index].tag == tag:
                del self._open[index:]
                return

    def handle_data(self, data: str) -> None:
        for element in self._open:
            element.text += data

    def find(self, tag: str, text: str | None = None, **attrs: str) -> list[Element]:
        return [
            element
            for element in self.elements
            if element.tag == tag
            and (text is None or " ".join(element.text.split()) == text)
            and all(
                element.attrs.get(key.replace("_", "-")) == value for key, value in attrs.items()
            )
        ]

    def forms_to(self, action: str) -> list[Element]:
        return [e for e in self.elements if e.tag == "form" and e.attrs.get("action") == action]


def read(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def nav_links(text: str) -> list[str]:
    """The labels of the layout's main navigation links."""
    found = re.search(r'<nav aria-label="Main">(.*?)</nav>', text, re.DOTALL)
    assert found
    return [html.unescape(label.strip()) for label in re.findall(r">([^<]+)</a>", found.group(1))]


def field_error(text: str, field_id: str) -> str:
    """The error shown beside the field ``field_id`` (which must be marked invalid)."""
    page = read(text)
    field = page.by_id[field_id]
    assert field.attrs.get("aria-invalid") == "true", field.attrs
    described = field.attrs["aria-describedby"].split()
    return (
        " ".join(page.by_id[f"{field_id}-error"].text.split())
        if f"{field_id}-error" in described
        else ""
    )
