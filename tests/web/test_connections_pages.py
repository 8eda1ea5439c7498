"""The Connections pages over HTTP: the list with the jobs that use each connection, one
connection's details, create and edit as YAML (errors at their line), delete and its refusal
while a job uses it, and who may do what (reading for everyone signed in, changes for those who
manage bundles, jobs named only to those who may see them)."""

from __future__ import annotations

import httpx
import pytest
import yaml

from streamjobs.domain.access import Actor, DomainPermission, Permission
from tests.factories import connection_manifest, dataset_job_manifest
from tests.staged_server import Stage
from tests.web.access_helpers import add_user, admin_of, signed_in
from tests.web.conftest import Browser
from tests.web.html import Node, parse

PAGE = "/connections"


def create(stage: Stage, manifest: dict[str, object]) -> None:
    stage.services.connections.create(manifest, actor=admin_of(stage))


def create_job(stage: Stage, manifest: dict[str, object]) -> None:
    stage.services.jobs.create(manifest, actor=admin_of(stage))


def dumped(manifest: dict[str, object]) -> str:
    return yaml.safe_dump(manifest, sort_keys=False)


def rows(page: Node) -> dict[str, Node]:
    return {row.attr("data-connection") or "": row for row in page.all("tr[data-connection]")}


def test_the_list_shows_each_connection_with_the_jobs_using_it(browser: Browser) -> None:
    stage = browser.stage
    create(stage, connection_manifest("kafka-main"))
    create(stage, connection_manifest("lake", "lakehouse"))
    create_job(stage, dataset_job_manifest("orders", reads="kafka-main:orders"))

    page = parse(browser.page(PAGE))
    assert page.text("nav a[aria-current=page]") == "Connections"
    assert page.text("h1") == "Connections 2"
    listed = rows(page)
    assert list(listed) == ["kafka-main", "lake"]
    assert listed["kafka-main"].text("[data-cell=type]") == "kafka"
    assert listed["kafka-main"].text("[data-cell=where]") == "127.0.0.1:9092"
    assert listed["kafka-main"].text("[data-cell=jobs]") == "orders"
    assert listed["kafka-main"].attr("href", "[data-cell=jobs] a") == "/jobs/orders"
    assert listed["lake"].text("[data-cell=jobs]") == "none"
    assert page.attr("href", "#new-connection") == "/connections/new"

    only_lakehouses = parse(browser.page(f"{PAGE}?type=lakehouse"))
    assert list(rows(only_lakehouses)) == ["lake"]
    assert list(rows(parse(browser.page(f"{PAGE}?search=kafka")))) == ["kafka-main"]
    unknown_type = browser.page(f"{PAGE}?type=ftp")
    assert unknown_type.status_code == 422
    assert "must be one of" in parse(unknown_type).text("main")


def test_the_detail_page_shows_the_connection_and_its_users(browser: Browser) -> None:
    stage = browser.stage
    manifest = connection_manifest(
        "warehouse-db", "jdbc", user="etl", secretOptions={"password": "db-password"}
    )
    create(stage, manifest)
    page = parse(browser.page(f"{PAGE}/warehouse-db"))
    assert page.text("h1") == "warehouse-db jdbc"
    assert page.text("[data-fact=where]") == "jdbc:postgresql://127.0.0.1:5432/analytics"
    assert page.text("[data-fact=user]") == "etl"
    assert page.text("[data-fact=secretOptions]").startswith("password = db-password")
    assert page.text("#connection-users") == "No job's datasets name this connection."
    assert "kind: Connection" in page.text("#connection-manifest")
    assert page.attr("href", "#edit-connection") == "/connections/warehouse-db/yaml"
    assert browser.page(f"{PAGE}/no-such-connection").status_code == 404


def test_create_from_yaml_then_edit_it(browser: Browser) -> None:
    new = parse(browser.page(f"{PAGE}/new"))
    template = new.one("#manifest").tag.get_text()
    assert "kind: Connection" in template
    created = browser.submit(f"{PAGE}/new", {"manifest": dumped(connection_manifest("events"))})
    assert created.status_code == 303, created.text
    assert created.headers["location"] == "/connections/events?done=created"
    shown = parse(browser.page(created.headers["location"]))
    assert shown.text("[role=status]") == "Connection “events” created."

    edit = parse(browser.page(f"{PAGE}/events/yaml"))
    text = edit.one("#manifest").tag.get_text()
    assert "resourceVersion: '1'" in text
    changed = text.replace("127.0.0.1:9092", "127.0.0.1:9093")
    saved = browser.submit(f"{PAGE}/events/yaml", {"manifest": changed})
    assert saved.headers["location"] == "/connections/events?done=saved"
    assert parse(browser.page(saved.headers["location"])).text("[data-fact=where]") == (
        "127.0.0.1:9093"
    )
    again = browser.submit(f"{PAGE}/events/yaml", {"manifest": changed})
    assert again.headers["location"] == "/connections/events?done=unchanged"
    stale = text.replace("127.0.0.1:9092", "127.0.0.1:9094")
    refused = browser.submit(f"{PAGE}/events/yaml", {"manifest": stale})
    assert refused.status_code == 409
    assert "Nothing was saved" in parse(refused).text("#form-problems")
    assert "127.0.0.1:9094" in parse(refused).text("#manifest")

    # The template itself is a valid manifest: creating it as it is works.
    assert browser.submit(f"{PAGE}/new", {"manifest": template}).status_code == 303


def test_bad_yaml_is_shown_at_its_line(browser: Browser) -> None:
    bad_field = dumped(connection_manifest("lines", bootstrapServers="not an address"))
    refused = browser.submit(f"{PAGE}/new", {"manifest": bad_field})
    assert refused.status_code == 422
    page = parse(refused)
    line = bad_field.splitlines().index(
        next(row for row in bad_field.splitlines() if "bootstrapServers" in row)
    )
    link = page.one("#manifest-error a.line")
    assert link.attr("data-goto-line") == str(line + 1)
    assert "spec.bootstrapServers" in page.text("#manifest-error")
    assert page.attr("aria-invalid", "#manifest") == "true"
    assert "not an address" in page.text("#manifest")

    broken = "apiVersion: streamjobs.io/v1\nkind: Connection\nmetadata: [unclosed\n"
    syntax = parse(browser.submit(f"{PAGE}/new", {"manifest": broken}))
    assert syntax.attr("data-goto-line", "#manifest-error a.line") in {"3", "4"}

    missing = "apiVersion: streamjobs.io/v1\nkind: Connection\nmetadata:\n  name: x\n"
    missing += "spec:\n  type: kafka\n"
    required = parse(browser.submit(f"{PAGE}/new", {"manifest": missing}))
    # A missing field is shown where its parent (spec:) is written.
    assert required.attr("data-goto-line", "#manifest-error a.line") == "5"
    assert "bootstrapServers" in required.text("#manifest-error")

    assert browser.submit(f"{PAGE}/new", {"manifest": "- a list"}).status_code == 422
    assert browser.submit(f"{PAGE}/new", {"manifest": ""}).status_code == 422
    assert list(rows(parse(browser.page(PAGE)))) == []


def test_creating_a_name_twice_and_renaming_are_refused_at_the_name(browser: Browser) -> None:
    create(browser.stage, connection_manifest("dup"))
    twice = browser.submit(f"{PAGE}/new", {"manifest": dumped(connection_manifest("dup"))})
    assert twice.status_code == 409
    assert parse(twice).attr("data-goto-line", "#manifest-error a.line") == "4"
    renamed = browser.submit(
        f"{PAGE}/dup/yaml", {"manifest": dumped(connection_manifest("other-name"))}
    )
    assert renamed.status_code == 422
    assert "name cannot change" in parse(renamed).text("#manifest-error")


def test_delete_is_refused_while_a_job_uses_the_connection(browser: Browser) -> None:
    stage = browser.stage
    create(stage, connection_manifest("kafka-main"))
    create_job(stage, dataset_job_manifest("orders", reads="kafka-main:orders"))

    page = parse(browser.page(f"{PAGE}/kafka-main"))
    button = page.one("#delete-connection-refused")
    assert button.has_attr("disabled")
    assert "1 job: 'orders'" in (button.attr("title") or "")
    assert page.texts("#connection-users a") == ["orders"]

    refused = browser.submit(f"{PAGE}/kafka-main/delete", {})
    assert refused.status_code == 409
    assert "used by the datasets of job 'orders'" in parse(refused).text("[role=alert]")
    assert stage.services.connections.exists("kafka-main")

    stage.services.jobs.delete("orders", actor=admin_of(stage))
    free = parse(browser.page(f"{PAGE}/kafka-main"))
    version = free.attr("value", "#delete-connection input[name=version]")
    deleted = browser.submit(f"{PAGE}/kafka-main/delete", {"version": version or ""})
    assert deleted.status_code == 303
    listed = parse(browser.page(deleted.headers["location"]))
    assert listed.text("[role=status]") == "Connection “kafka-main” deleted."
    assert rows(listed) == {}
    assert browser.submit(f"{PAGE}/kafka-main/delete", {}).status_code == 404


def test_a_stale_delete_is_refused(browser: Browser) -> None:
    create(browser.stage, connection_manifest("kept"))
    stale = browser.submit(f"{PAGE}/kept/delete", {"version": "7"})
    assert stale.status_code == 409
    assert browser.stage.services.connections.exists("kept")


@pytest.mark.parametrize("version", ["\u00b2", "99999999999999999999999", "-1", "one"])
def test_a_delete_with_a_version_that_is_no_stored_number_is_refused_at_the_field(
    browser: Browser, version: str
) -> None:
    create(browser.stage, connection_manifest("kept"))
    refused = browser.submit(f"{PAGE}/kept/delete", {"version": version})
    assert refused.status_code == 422
    assert parse(refused).texts(".field-errors li code") == ["version"]
    assert browser.stage.services.connections.exists("kept")


def test_without_manage_bundles_connections_are_read_only(browser: Browser) -> None:
    stage = browser.stage
    create(stage, connection_manifest("kafka-main"))
    add_user(stage, "reader")
    reader = signed_in(stage, "reader")
    try:
        page = parse(reader.page(PAGE))
        assert list(rows(page)) == ["kafka-main"]
        assert page.one("#new-connection-refused").has_attr("disabled")
        detail = parse(reader.page(f"{PAGE}/kafka-main"))
        assert detail.one("#edit-connection-refused").has_attr("disabled")
        assert not detail.has("#delete-connection")
        assert reader.page(f"{PAGE}/new").status_code == 403
        assert reader.page(f"{PAGE}/kafka-main/yaml").status_code == 403
        manifest = dumped(connection_manifest("mine"))
        assert reader.submit(f"{PAGE}/new", {"manifest": manifest}).status_code == 403
        edited = dumped(connection_manifest("kafka-main", bootstrapServers="127.0.0.1:1"))
        assert reader.submit(f"{PAGE}/kafka-main/yaml", {"manifest": edited}).status_code == 403
        assert reader.submit(f"{PAGE}/kafka-main/delete", {}).status_code == 403
        assert stage.services.connections.get("kafka-main").version == 1
        assert not stage.services.connections.exists("mine")
    finally:
        reader.client.close()

    add_user(stage, "keeper", domain=[DomainPermission.MANAGE_BUNDLES])
    keeper = signed_in(stage, "keeper")
    try:
        assert keeper.page(f"{PAGE}/new").status_code == 200
        made = keeper.submit(f"{PAGE}/new", {"manifest": dumped(connection_manifest("theirs"))})
        assert made.status_code == 303
    finally:
        keeper.client.close()


def test_jobs_a_person_may_not_see_are_counted_not_named(browser: Browser) -> None:
    stage = browser.stage
    admin: Actor = admin_of(stage)
    stage.services.bundles.create("secret-team", actor=admin, data_roots=["file:///tmp/out"])
    create(stage, connection_manifest("kafka-main"))
    create_job(stage, dataset_job_manifest("visible-job", reads="kafka-main:a"))
    hidden = dataset_job_manifest("hidden-job", reads="kafka-main:b")
    hidden["spec"]["bundle"] = "secret-team"
    stage.services.jobs.create(hidden, actor=admin)
    add_user(stage, "viewer", bundle="default", permissions=[Permission.VIEW])
    viewer = signed_in(stage, "viewer")
    try:
        page = parse(viewer.page(PAGE))
        jobs = rows(page)["kafka-main"].one("[data-cell=jobs]")
        assert jobs.texts("a") == ["visible-job"]
        assert jobs.text(".muted") == "1 you cannot see"
        detail = viewer.page(f"{PAGE}/kafka-main")
        assert "hidden-job" not in detail.text
        assert parse(detail).texts("#connection-users li") == [
            "visible-job",
            "1 job you cannot see",
        ]
    finally:
        viewer.client.close()


def test_signed_out_people_are_sent_to_sign_in(anonymous_web: httpx.Client) -> None:
    for path in (PAGE, f"{PAGE}/new", f"{PAGE}/x", f"{PAGE}/x/yaml"):
        answer = anonymous_web.get(path)
        assert answer.status_code == 303
        assert answer.headers["location"].startswith("/signin?next=")
    refused = anonymous_web.post(f"{PAGE}/new", data={"manifest": "kind: Connection"})
    assert refused.status_code in {303, 403}
