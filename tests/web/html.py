"""Reading rendered pages in web tests: CSS selectors over a real HTML parser.

Web tests assert what a page shows through this module (``parse(response).text("h1")``), never
with regular expressions over markup, so a change of attribute order or whitespace does not break
them and a missing element fails with the selector that found nothing.
"""

from __future__ import annotations

import re

import httpx
from bs4 import BeautifulSoup, Tag

__all__ = ["Node", "parse"]


class Node:
    """An element of a parsed page (or the page itself) and the queries tests ask of it."""

    def __init__(self, tag: Tag | BeautifulSoup) -> None:
        self.tag = tag

    def all(self, selector: str) -> list[Node]:
        """Every element matching the CSS ``selector`` under this one, in document order."""
        return [Node(found) for found in self.tag.select(selector)]

    def one(self, selector: str) -> Node:
        """The only element matching ``selector``; fails saying how many there were."""
        found = self.all(selector)
        assert len(found) == 1, f"{len(found)} elements match {selector!r}, not exactly one"
        return found[0]

    def has(self, selector: str) -> bool:
        """Whether any element matches ``selector``."""
        return self.tag.select_one(selector) is not None

    def text(self, selector: str | None = None) -> str:
        """The visible text of this element (or of the only match of ``selector``), its runs of
        whitespace made single spaces."""
        node = self.one(selector) if selector else self
        return re.sub(r"\s+", " ", node.tag.get_text(" ")).strip()

    def texts(self, selector: str) -> list[str]:
        """The text of every element matching ``selector``."""
        return [found.text() for found in self.all(selector)]

    def attr(self, name: str, selector: str | None = None) -> str | None:
        """Attribute ``name`` of this element (or of the only match of ``selector``); None when
        it is absent. A multi-valued attribute (``class``) is joined with spaces."""
        node = self.one(selector) if selector else self
        value = node.tag.get(name)
        if isinstance(value, list):
            return " ".join(value)
        return value

    def has_attr(self, name: str) -> bool:
        return self.tag.has_attr(name)

    @property
    def classes(self) -> list[str]:
        value = self.tag.get("class")
        return list(value) if isinstance(value, list) else []

    def __repr__(self) -> str:
        return f"Node({str(self.tag)[:120]!r})"


def parse(page: httpx.Response | str) -> Node:
    """A response's (or a string's) HTML, parsed as a browser would read it."""
    markup = page.text if isinstance(page, httpx.Response) else page
    return Node(BeautifulSoup(markup, "html.parser"))
