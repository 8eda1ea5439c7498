"""Settings → Node types: the named sizes (cores, memory) drivers and executors are given.

Everyone signed in may read them (a job's form offers them); admins create, resize and delete
them here, as with ``/api/v1/node-types``. A resize counts for applications started after it;
a node type a job uses cannot be deleted.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import Response

from streamjobs import formatting
from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Conflict, FieldError, InvalidInput
from streamjobs.web.pages import page_actor, render, services_of
from streamjobs.web.settings_forms import Failed, back_to, failed, notice_of, whole_numbers

router = APIRouter()
NODE_TYPES_PAGE = "/settings/node-types"
FIELDS = ("name", "cores", "memoryMb")
OUTCOMES = {
    "created": "Node type “{name}” created.",
    "resized": "Node type “{name}” resized.",
    "deleted": "Node type “{name}” deleted.",
}


@router.get(NODE_TYPES_PAGE)
def node_types_page(
    request: Request,
    edit: Annotated[str, Query()] = "",
    done: Annotated[str, Query()] = "",
    name: Annotated[str, Query()] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """The node types; ``edit`` fills the form with one of them, to resize it."""
    return _node_types_page(request, actor, edit=edit, notice=notice_of(OUTCOMES, done, name))


@router.post(NODE_TYPES_PAGE)
def put_node_type(
    request: Request,
    name: Annotated[str, Form()] = "",
    cores: Annotated[str, Form()] = "",
    memory_mb: Annotated[str, Form(alias="memoryMb")] = "",
    actor: Actor = Depends(page_actor),
) -> Response:
    """Create a node type, or resize the one with this name."""
    name = name.strip()
    values = {"name": name, "cores": cores, "memoryMb": memory_mb}
    try:
        numbers = whole_numbers({"cores": cores, "memoryMb": memory_mb})
        missing = [FieldError(path, "is required") for path, n in numbers.items() if n is None]
        if missing:
            raise InvalidInput(missing)
        _, created = services_of(request).bundles.put_node_type(
            name, cores=numbers["cores"] or 0, memory_mb=numbers["memoryMb"] or 0, actor=actor
        )
    except InvalidInput as error:
        refused = failed("node-type", values, error.errors, FIELDS)
        return _node_types_page(request, actor, failed=refused, status_code=422)
    return back_to(NODE_TYPES_PAGE, done="created" if created else "resized", name=name)


@router.post(NODE_TYPES_PAGE + "/{name}/delete")
def delete_node_type(
    request: Request,
    name: str,
    actor: Actor = Depends(page_actor),
) -> Response:
    try:
        services_of(request).bundles.delete_node_type(name, actor=actor)
    except Conflict as error:
        return _node_types_page(request, actor, error=error.detail, status_code=409)
    return back_to(NODE_TYPES_PAGE, done="deleted", name=name)


def _node_types_page(
    request: Request,
    actor: Actor,
    *,
    edit: str = "",
    failed: Failed | None = None,
    notice: str | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> Response:
    node_types = services_of(request).bundles.node_types()
    editing = next((n for n in node_types if n.name == edit), None)
    if failed is not None:
        values = dict(failed.values)
    elif editing is not None:
        values = {
            "name": editing.name,
            "cores": str(editing.cores),
            "memoryMb": str(editing.memory_mb),
        }
    else:
        values = {"name": "", "cores": "", "memoryMb": ""}
    return render(
        request,
        "node_types.html",
        status_code=status_code,
        nav="node-types",
        node_types=[(n, formatting.memory(n.memory_mb)) for n in node_types],
        may_manage=actor.principal.is_admin,
        editing=editing is not None,
        values=values,
        failed=failed,
        notice=notice,
        error=error,
    )
