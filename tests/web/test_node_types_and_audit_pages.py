"""Settings → Node types and Audit over HTTP: admins create, resize and delete node types and
read the audit trail with its filters and pages; everyone else reads node types only, and sees
no Audit link."""

from __future__ import annotations

from contextlib import closing

import pytest

from streamjobs.domain.access import DomainPermission
from streamjobs.services.audit_log import AuditQuery
from streamjobs.web.routes import audit as audit_routes
from tests.staged_server import Stage
from tests.web.access_helpers import add_user, admin_of, field_error, nav_links, read, signed_in
from tests.web.conftest import Browser

NODE_TYPES = "/settings/node-types"
AUDIT = "/settings/audit"


# ---------------------------------------------------------------- Node types


def test_admins_create_resize_and_delete_node_types(stage: Stage, browser: Browser) -> None:
    services = stage.services
    created = browser.submit(NODE_TYPES, {"name": "huge", "cores": "32", "memoryMb": "65536"})
    assert created.status_code == 303
    page = read(browser.page(created.headers["location"]).text)
    (row,) = page.find("tr", None, data_node_type="huge")
    assert "32" in row.text
    assert "64 GB" in row.text

    editing = read(browser.page(f"{NODE_TYPES}?edit=huge").text)
    assert editing.by_id["node-type-cores"].attrs["value"] == "32"
    resized = browser.submit(NODE_TYPES, {"name": "huge", "cores": "48", "memoryMb": "65536"})
    assert resized.headers["location"] == f"{NODE_TYPES}?done=resized&name=huge"
    assert {n.name: n.cores for n in services.bundles.node_types()}["huge"] == 48

    bad = browser.submit(NODE_TYPES, {"name": "tiny", "cores": "0", "memoryMb": "many"})
    assert bad.status_code == 422
    assert "'many' is not a whole number" in field_error(bad.text, "node-type-memory")
    assert read(bad.text).by_id["node-type-name"].attrs["value"] == "tiny"
    zero = browser.submit(NODE_TYPES, {"name": "tiny", "cores": "0", "memoryMb": "1"})
    assert zero.status_code == 422
    assert "must be between 1 and" in field_error(zero.text, "node-type-cores")
    assert "tiny" not in {n.name for n in services.bundles.node_types()}

    assert browser.submit(f"{NODE_TYPES}/huge/delete", {}).status_code == 303
    assert "huge" not in {n.name for n in services.bundles.node_types()}
    in_use = browser.submit(f"{NODE_TYPES}/small/delete", {})
    assert in_use.status_code == 409


def test_everyone_reads_node_types_but_only_admins_change_them(stage: Stage) -> None:
    add_user(stage, "plain")
    plain = signed_in(stage, "plain")
    with closing(plain.client):
        page = plain.page(NODE_TYPES)
        assert page.status_code == 200
        listed = read(page.text)
        assert {
            e.attrs["data-node-type"] for e in listed.find("tr") if "data-node-type" in e.attrs
        } >= {
            "small",
            "medium",
            "large",
        }
        assert not listed.forms_to(NODE_TYPES)
        refused = plain.submit(NODE_TYPES, {"name": "mine", "cores": "1", "memoryMb": "1"})
        assert refused.status_code == 403
        assert plain.submit(f"{NODE_TYPES}/small/delete", {}).status_code == 403


# ---------------------------------------------------------------- Audit


def test_admins_read_the_audit_trail_with_filters_and_pages(
    stage: Stage, browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit_routes, "PAGE_SIZE", 2)
    for name in ("one", "two", "three"):
        browser.submit("/settings/groups", {"name": name})
    total = stage.services.audit.list(AuditQuery(), actor=admin_of(stage)).total

    page = browser.page(AUDIT)
    assert page.status_code == 200
    shown = read(page.text)
    rows = [e for e in shown.find("tr") if "data-audit" in e.attrs]
    assert len(rows) == 2
    assert "group.created" in rows[0].text
    assert "three" in rows[0].text
    assert "admin" in rows[0].text
    assert f"1\u20132 of {total}" in page.text
    older = {link.attrs["href"] for link in shown.find("a", "Older")}
    assert len(older) == 1  # above and below the table
    assert not shown.find("a", "Newer")
    second = read(browser.page(older.pop()).text)
    second_rows = [e for e in second.find("tr") if "data-audit" in e.attrs]
    assert "group.created" in second_rows[0].text
    assert "one" in second_rows[0].text
    assert second.find("a", "Newer")

    filtered = browser.page(f"{AUDIT}?actor=admin&kind=group&action=group.cre")
    lines = [e for e in read(filtered.text).find("tr") if "data-audit" in e.attrs]
    assert len(lines) == 2
    assert "of 3" in filtered.text
    assert 'value="group.cre"' in filtered.text
    none = browser.page(f"{AUDIT}?action=nothing.")
    assert "No changes match these filters." in none.text
    assert browser.page(f"{AUDIT}?offset=-2").status_code == 422


def test_only_admins_read_the_audit_trail(stage: Stage, browser: Browser) -> None:
    assert "Audit" in nav_links(browser.page("/jobs").text)
    add_user(stage, "manager", domain=list(DomainPermission))
    manager = signed_in(stage, "manager")
    with closing(manager.client):
        assert "Audit" not in nav_links(manager.page("/jobs").text)
        refused = manager.page(AUDIT)
        assert refused.status_code == 403
        assert "for admins only" in refused.text


@pytest.mark.parametrize("offset", ["-2", "two", str(2**63)])
def test_a_wrong_offset_is_refused_before_the_trail_is_read(
    stage: Stage, browser: Browser, monkeypatch: pytest.MonkeyPatch, offset: str
) -> None:
    queries: list[AuditQuery] = []
    listed = stage.services.audit.list

    def counted(query: AuditQuery, **kwargs: object) -> object:
        queries.append(query)
        return listed(query, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(stage.services.audit, "list", counted)
    refused = browser.page(f"{AUDIT}?offset={offset}")
    assert refused.status_code == 422
    assert "offset" in refused.text
    assert queries == []
