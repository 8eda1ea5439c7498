"""The job page's State tab over HTTP against a real server whose state tool is scripted
(``tests.state_stage``): the tab loads its content from ``/jobs/<name>/state`` (a fragment for
htmx, a page of its own without script), shows each operator's figures and the batches its state
covers, previews one operator through its form, and says why when the checkpoint or a preview
cannot be read, still showing what the progress reports tell."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing

import httpx
import pytest

from streamjobs.domain.access import Actor, Principal
from streamjobs.launch.tool_runs import ToolResult, ToolRun
from tests.factories import python_manifest
from tests.state_stage import JOB, QUERY, ScriptedStateTool, StateStage, state_stage
from tests.web.html import Node, parse

__all__ = ["state_stage"]

pytestmark = pytest.mark.snapshots

PASSWORD = "correct-horse-battery-9"
HTMX = {"HX-Request": "true"}
DASH = "\N{EN DASH}"


@pytest.fixture
def web(state_stage: StateStage) -> Iterator[httpx.Client]:
    """A browser's HTTP client signed in as admin."""
    with closing(_signed_in(state_stage, "admin", state_stage.password)) as client:
        yield client


@pytest.fixture
def reporting(state_stage: StateStage) -> str:
    """The job's running application, its checkpoint made and a progress report in."""
    application_id = state_stage.running()
    state_stage.checkpoint()
    state_stage.progress(application_id, batch=4, rows=7)
    return application_id


def state_part(web: httpx.Client, **params: str) -> Node:
    answer = web.get(f"/jobs/{JOB}/state", params=params, headers=HTMX)
    assert answer.status_code == 200, answer.text
    assert "<html" not in answer.text  # a fragment for htmx to swap in
    return parse(answer)


def operator_cells(part: Node) -> dict[str, str]:
    heads = part.texts("table.state-operators thead th")
    cells = part.texts('table.state-operators tbody tr[data-operator="0"] td')
    return dict(zip(heads, cells, strict=True))


def test_the_job_page_has_a_state_tab_that_loads_its_content(
    state_stage: StateStage, web: httpx.Client, reporting: str
) -> None:
    page = parse(web.get(f"/jobs/{JOB}"))
    tab = page.one("#tab-state")
    assert tab.text() == "State"
    assert tab.attr("href") == f"/jobs/{JOB}/state"  # without script: the page of its own
    panel = page.one("#panel-state")
    assert panel.has_attr("hidden")
    loader = panel.one("#state-view")
    assert loader.attr("hx-get") == f"/jobs/{JOB}/state"
    assert loader.attr("hx-trigger") == "intersect once"
    assert state_stage.tool.runs == []  # the page itself starts no Spark job


def test_each_operator_with_its_figures_and_the_batches_its_state_covers(
    state_stage: StateStage, web: httpx.Client, reporting: str
) -> None:
    part = state_part(web)
    assert part.text("#state-application a:first-child") == f"{JOB}-1"
    assert part.text(".state-query h3") == f"Query {QUERY}"
    assert "Latest batch reported: 4" in part.text(".state-query p.muted")
    assert part.attr("datetime", ".state-query p.muted time:last-child") == (
        "2024-01-01T00:01:00.000Z"
    )
    cells = operator_cells(part)
    assert cells["Id"] == "0"
    assert cells["Operator"] == "stateStoreSave"
    assert cells["State stores"] == "default"
    assert cells["Partitions"] == "2"
    assert cells["State rows"] == "7"
    assert cells["Memory"] == "2.0 KiB"
    assert cells["Batches held"] == f"0 {DASH} 4"
    form = part.one("form.preview-form")
    assert form.attr("hx-get") == f"/jobs/{JOB}/state"
    assert form.attr("hx-target") == "#state-view"
    assert form.attr("value", 'input[name="operator"]') == "0"
    assert form.attr("value", 'input[name="query"]') == QUERY
    assert form.attr("max", 'input[name="limit"]') == "100"
    assert not part.has("#state-problem")

    page = web.get(f"/jobs/{JOB}/state")
    assert page.status_code == 200
    whole = parse(page)
    assert whole.text("h1") == f"State of {JOB}"
    assert whole.has("#state-view table.state-operators")


def test_a_preview_shows_the_first_keys_and_values(
    state_stage: StateStage, web: httpx.Client, reporting: str
) -> None:
    part = state_part(web, query=QUERY, operator="0", limit="2")
    assert part.texts("#state-preview-table tbody td:nth-child(2)") == [
        '{"k": "key-0"}',
        '{"k": "key-1"}',
    ]
    assert part.texts("#state-preview-table tbody td:nth-child(3)") == [
        '{"count": 0}',
        '{"count": 1}',
    ]
    assert "more rows than these 2" in part.text(".state-preview")
    assert part.attr("value", 'form.preview-form input[name="limit"]') == "2"


def test_a_preview_the_checkpoint_cannot_give_says_why_beside_the_operators(
    state_stage: StateStage, web: httpx.Client, reporting: str
) -> None:
    scripted = ScriptedStateTool()

    def refusing_previews(run: ToolRun) -> ToolResult:
        if "--operator" in run.arguments:
            return ToolResult(2, {"error": "query 'evens' has no stateful operator 3"}, "", False)
        return scripted.run(run)

    state_stage.tool.answer = refusing_previews
    part = state_part(web, query=QUERY, operator="3")
    assert "no stateful operator 3" in part.text("#state-preview-problem")
    assert operator_cells(part)["Batches held"] == f"0 {DASH} 4"

    part = state_part(web, query=QUERY, operator="0", limit="500")
    assert "query.limit: must be between 1 and 100" in part.text("#state-preview-problem")
    assert operator_cells(part)["State rows"] == "7"


def test_a_checkpoint_that_cannot_be_read_leaves_the_reports_figures_and_the_reason(
    state_stage: StateStage, web: httpx.Client, reporting: str
) -> None:
    state_stage.tool.answer = lambda run: ToolResult(None, None, "", timed_out=True)
    part = state_part(web)
    assert "took longer than 120 seconds" in part.text("#state-problem")
    cells = operator_cells_without_id(part)
    assert cells["Operator"] == "stateStoreSave"
    assert cells["State rows"] == "7"
    assert cells["Id"] == DASH
    assert not part.has("form.preview-form")


def operator_cells_without_id(part: Node) -> dict[str, str]:
    heads = part.texts("table.state-operators thead th")
    cells = part.texts("table.state-operators tbody tr td")
    return dict(zip(heads, cells, strict=True))


def test_jobs_without_state_to_show_say_why(state_stage: StateStage, web: httpx.Client) -> None:
    state_stage.api.put("/api/v1/jobs/idle", json=python_manifest("idle")).raise_for_status()
    answer = web.get("/jobs/idle/state", headers=HTMX)
    assert "has not run yet" in parse(answer).text("#state-none")

    state_stage.api.post("/api/v1/jobs/idle/run").raise_for_status()
    answer = web.get("/jobs/idle/state", headers=HTMX)
    assert "not a pipeline" in parse(answer).text("#state-problem")

    state_stage.running()
    answer = web.get(f"/jobs/{JOB}/state", headers=HTMX)
    assert "does not exist yet" in parse(answer).text("#state-problem")
    assert state_stage.tool.runs == []


def test_those_who_may_not_view_the_job_get_not_found(
    state_stage: StateStage, reporting: str
) -> None:
    admin = Actor(Principal("admin", is_admin=True))
    state_stage.services.people.create_user("outsider", actor=admin, password=PASSWORD)
    with closing(_signed_in(state_stage, "outsider", PASSWORD)) as outsider:
        assert outsider.get(f"/jobs/{JOB}/state", headers=HTMX).status_code == 404
    assert state_stage.tool.runs == []


def _signed_in(stage: StateStage, user: str, password: str) -> httpx.Client:
    client = httpx.Client(base_url=stage.url, timeout=30)
    answer = client.post("/signin", data={"user": user, "password": password, "next": "/jobs"})
    assert answer.status_code == 303, answer.text
    return client
