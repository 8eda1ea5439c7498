"""What the browser tests share: the rate -> parquet pipeline, the contract's locators, keyboard
navigation and the label check."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml
from playwright.sync_api import Locator, Page, expect

SPARK_WAIT_MS = 240_000
"""How long a page may take to show what a real spark-submit driver does (JVM start included)."""
MAX_TABS = 150
"""How many Tab presses may reach a control before a test calls the page unusable by keyboard."""
DIGIT = re.compile(r"\d")


def pipeline(work: Path, *, trigger: str = "1 second") -> dict[str, Any]:
    """The rate -> parquet pipeline (``spec.pipeline``), writing under ``work``: small and fast."""
    return {
        "logLevel": "WARN",
        "streaming": {
            "triggerMode": "ProcessingTime",
            "triggerDuration": trigger,
            "checkpointLocation": (work / "checkpoint").as_uri(),
        },
        "inputs": [{"name": "ticks", "format": "rate", "options": {"rowsPerSecond": 5}}],
        "steps": [
            {
                "sequence": [
                    {
                        "name": "even_ticks",
                        "sql": "SELECT timestamp, value FROM ticks WHERE value % 2 = 0",
                    }
                ]
            }
        ],
        "outputs": [{"name": "even_ticks", "path": (work / "out").as_uri(), "format": "parquet"}],
    }


def pipeline_yaml(work: Path, *, trigger: str = "1 second") -> str:
    return yaml.safe_dump(pipeline(work, trigger=trigger), sort_keys=False)


def manifest(name: str, work: Path) -> dict[str, Any]:
    """A whole job manifest around :func:`pipeline`, for jobs a test creates over the API."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": name, "description": "made by the browser tests"},
        "spec": {"application": {"type": "pipeline"}, "pipeline": pipeline(work)},
    }


def field_error(control: Locator) -> Locator:
    """The ``p.field-error`` that follows ``control`` in the document (the contract's place)."""
    return control.locator(
        "xpath=following::p[contains(concat(' ', normalize-space(@class), ' '), ' field-error ')]"
    ).first


def tab(page: Page, name: str) -> Locator:
    """A tab of a page: an ARIA tab, or a link that works as one. Its name may go on after the
    label (the Events tab's is "Events 1 warning" when there are warnings)."""
    starts = re.compile(rf"^\s*{re.escape(name)}\b")
    return page.get_by_role("tab", name=starts).or_(page.get_by_role("link", name=starts)).first


def badge(scope: Page | Locator, label: str) -> Locator:
    return scope.locator(".badge", has_text=re.compile(rf"^\s*{re.escape(label)}\s*$")).first


def metric_card(page: Page, label: str) -> Locator:
    """The smallest element holding a metric's label and its figure."""
    label_element = page.get_by_text(label, exact=True).first
    return label_element.locator("xpath=..")


def application_links(page: Page) -> Locator:
    return page.locator("main a[href^='/applications/']")


def focused(locator: Locator) -> bool:
    return bool(locator.evaluate("element => element === document.activeElement"))


def tab_to(page: Page, target: Locator, *, backwards: bool = False) -> None:
    """Press Tab (or Shift+Tab) until ``target`` has the focus, as a keyboard user would."""
    expect(target).to_be_visible()
    key = "Shift+Tab" if backwards else "Tab"
    for _ in range(MAX_TABS):
        if focused(target):
            return
        page.keyboard.press(key)
    raise AssertionError(f"{MAX_TABS} presses of {key} never reached {target}")


def type_into(page: Page, target: Locator, text: str) -> None:
    """Tab to a text field, select what it holds and type ``text`` over it, keys only."""
    tab_to(page, target)
    page.keyboard.press("ControlOrMeta+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


UNLABELLED_CONTROLS = """
() => [...document.querySelectorAll("input, select, textarea")]
  .filter((el) => !(el.tagName === "INPUT" && ["hidden", "submit", "button", "reset", "image"]
    .includes(el.type)))
  .filter((el) => {
    if (el.labels && [...el.labels].some((label) => label.textContent.trim())) return false;
    if ((el.getAttribute("aria-label") || "").trim()) return false;
    const ids = (el.getAttribute("aria-labelledby") || "").split(/\\s+/).filter(Boolean);
    if (ids.some((id) => (document.getElementById(id)?.textContent || "").trim())) return false;
    return true;
  })
  .map((el) => el.outerHTML.slice(0, 200))
"""


def unlabelled_controls(page: Page) -> list[str]:
    """Every input, select and textarea without a label (label[for] or around it, aria-label or
    aria-labelledby naming an element with text), hidden or not."""
    found: list[str] = page.evaluate(UNLABELLED_CONTROLS)
    return found


def wait_for(what: str, check: Callable[[], Any], seconds: float = SPARK_WAIT_MS / 1000) -> Any:
    """Poll ``check`` until it returns something true (for what only the API shows)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"waited {seconds:g} s for {what}")


def application_state(api: httpx.Client, application_id: str) -> str:
    state: str = api.get(f"/api/v1/applications/{application_id}").json()["state"]
    return state
