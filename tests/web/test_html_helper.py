"""The web tests' HTML query helper: selectors over a parsed page, clear failures."""

from __future__ import annotations

import pytest

from tests.web.html import parse

PAGE = """<!doctype html><main><h1 class="title big">Job
   <span>ticks</span></h1>
<ul><li data-state="RUNNING">one</li><li>two</li></ul><p hidden>x</p></main>"""


def test_one_text_attr_and_all() -> None:
    page = parse(PAGE)
    assert page.text("h1") == "Job ticks"
    assert page.attr("class", "h1") == "title big"
    assert page.one("h1").classes == ["title", "big"]
    assert page.texts("li") == ["one", "two"]
    assert page.one("li[data-state=RUNNING]").text() == "one"
    assert page.one("p").has_attr("hidden")
    assert page.attr("data-state", "li:nth-child(2)") is None
    assert page.has("main ul")
    assert not page.has("table")


def test_one_fails_naming_the_selector_when_none_or_several_match() -> None:
    page = parse(PAGE)
    with pytest.raises(AssertionError, match="0 elements match 'table'"):
        page.one("table")
    with pytest.raises(AssertionError, match="2 elements match 'li'"):
        page.text("li")
