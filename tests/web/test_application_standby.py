"""The application page's standby driver: the "Standby driver" fact while one is held (starting or
ready), none once it ended, and the attempts table tagging standby attempts, held or promoted;
the status partial htmx refreshes says the same."""

from __future__ import annotations

from datetime import datetime

from tests.standby_attempts import (
    STANDBY_PID,
    add_standby,
    end_attempt,
    promote,
    running_application,
)
from tests.web.conftest import Browser
from tests.web.html import Node, parse


def page_of(browser: Browser, path: str) -> Node:
    response = browser.page(path)
    assert response.status_code == 200, response.text
    return parse(response)


def shown(moment: datetime) -> str:
    """A time as the page writes it (the ``when`` macro)."""
    return moment.isoformat()[:19].replace("T", " ")


def attempt_row(page: Node, number: int) -> Node:
    return page.one(f'#attempts-table tr[data-attempt="{number}"]')


def test_a_ready_standby_is_a_fact_and_a_tagged_attempt_beside_the_driver(
    browser: Browser,
) -> None:
    application_id = running_application(browser.stage)
    held = add_standby(browser.stage, application_id, ready=True)
    assert held.running_at is not None

    for path in (f"/applications/{application_id}", f"/applications/{application_id}/status"):
        page = page_of(browser, path)
        assert page.text('[data-fact-term="standby"]') == "Standby driver"
        assert page.text('[data-fact="standby"]') == (
            f"attempt 2, ready, pid {STANDBY_PID}, since {shown(held.running_at)}"
        )
        standby = attempt_row(page, 2)
        assert standby.attr("data-standby") == "held"
        assert standby.text("[data-standby-tag]") == "standby"
        assert standby.texts("td")[-1] == "held"
        driver = attempt_row(page, 1)
        assert driver.attr("data-standby") is None
        assert not driver.has("[data-standby-tag]")

    page = page_of(browser, f"/applications/{application_id}")
    assert page.text('#log-attempt option[value=""]') == "Latest (1)"
    assert page.text('#log-attempt option[value="2"]') == "2 (standby)"


def test_a_starting_standby_is_shown_since_it_was_started(browser: Browser) -> None:
    application_id = running_application(browser.stage)
    held = add_standby(browser.stage, application_id, ready=False)
    page = page_of(browser, f"/applications/{application_id}")
    assert page.text('[data-fact="standby"]') == (
        f"attempt 2, starting, pid {STANDBY_PID}, since {shown(held.submitted_at)}"
    )
    assert attempt_row(page, 2).attr("data-standby") == "held"


def test_without_a_held_standby_there_is_no_standby_fact(browser: Browser) -> None:
    application_id = running_application(browser.stage)
    page = page_of(browser, f"/applications/{application_id}")
    assert not page.has('[data-fact="standby"]')
    assert not page.has("[data-standby-tag]")

    add_standby(browser.stage, application_id, ready=True)
    end_attempt(browser.stage, application_id, 2, outcome="discarded")
    page = page_of(browser, f"/applications/{application_id}")
    assert not page.has('[data-fact="standby"]')
    ended = attempt_row(page, 2)
    assert ended.text("[data-standby-tag]") == "standby"
    assert ended.texts("td")[-1] == "discarded"


def test_a_promoted_standby_is_the_driver_with_when_it_was_promoted(browser: Browser) -> None:
    application_id = running_application(browser.stage)
    add_standby(browser.stage, application_id, ready=True)
    promoted_at = promote(browser.stage, application_id, 2)
    page = page_of(browser, f"/applications/{application_id}")
    assert not page.has('[data-fact="standby"]')
    promoted = attempt_row(page, 2)
    assert promoted.attr("data-standby") == "promoted"
    assert promoted.text("[data-standby-tag]") == "standby"
    assert promoted.text("[data-promoted]") == f"promoted at {shown(promoted_at)}"
    assert attempt_row(page, 1).texts("td")[-1] == "restarted"
    assert page.text('#log-attempt option[value=""]') == "Latest (2)"
    assert page.text('#log-attempt option[value="2"]') == "2"
