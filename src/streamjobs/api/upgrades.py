"""``/api/v1/jobs/{name}/upgrade`` and ``/upgrades``: move a job's running application to the
job's current spec, check first whether it can, and the job's history of upgrades.

An upgrade answers 202 once its application has been asked to stop; the supervisor starts the
new spec, watches it and rolls it back when it fails within ``spec.upgrade.rollbackWithinSeconds``.
A client polls the upgrade's URL until its status is SUCCEEDED, ROLLED_BACK or FAILED
(``streamjobs upgrade`` does). ``dryRun=true`` only checks, and answers with the check's report.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from streamjobs.api.auth import require_actor, services_of
from streamjobs.api.conventions import JSON_DOCUMENT, json_response, location
from streamjobs.domain.access import Actor
from streamjobs.domain.errors import Conflict, FieldError, InvalidInput
from streamjobs.domain.upgrades import UpgradeMode
from streamjobs.services.container import Services
from streamjobs.services.upgrade_documents import upgrade_document
from streamjobs.services.upgrades import UpgradeService

JOBS = "/api/v1/jobs"
router = APIRouter(prefix=JOBS, tags=["upgrades"])


class UpgradeOptions(BaseModel):
    """The optional body of an upgrade."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    mode: UpgradeMode | None = Field(
        None,
        description="last-state (default): the new spec on the same checkpoint; snapshot: on a "
        "copy of the aligned snapshot taken at the stop; stateless: on a fresh checkpoint, the "
        "inputs read from their startingOffsets.",
    )


def upgrades_of(job_name: str) -> str:
    """The URL path of a job's upgrades."""
    return location(JOBS, job_name) + "/upgrades"


@router.post(
    "/{name}/upgrade",
    status_code=202,
    summary="Upgrade the job's running application to the job's current spec",
    description="Checks first, in last-state and snapshot mode, that the new spec fits the "
    "running one's checkpoint (409 listing each reason when it does not; nothing is stopped), "
    "then stops the application gracefully with an aligned snapshot and answers 202 with the "
    "upgrade. With `dryRun=true` it only checks and answers 200 with the report. 409 when the "
    "job has no RUNNING application older than the job, or an upgrade in progress.",
    responses={200: {"description": "The check's report (dryRun)"}},
    response_model=JSON_DOCUMENT,
)
def upgrade_job(
    name: str,
    request: Request,
    body: UpgradeOptions | None = None,
    mode: UpgradeMode | None = Query(None, description="The mode, when the body names none."),
    dry_run: bool = Query(False, alias="dryRun", description="Only check; stop nothing."),
    actor: Actor = Depends(require_actor),
) -> Response:
    chosen = _mode(body.mode if body is not None else None, mode)
    upgrades = upgrade_service_of(services_of(request))
    if dry_run:
        report = upgrades.check(name, mode=chosen, actor=actor)
        return json_response({"mode": str(chosen), **report.to_wire()})
    record = upgrades.upgrade(name, mode=chosen, actor=actor)
    headers = {"Location": location(upgrades_of(record.job_name), record.id)}
    return json_response(upgrade_document(record), status_code=202, headers=headers)


@router.get(
    "/{name}/upgrades",
    summary="The job's upgrades, newest first, each with a diff of its two specs",
    response_model=JSON_DOCUMENT,
)
async def list_upgrades(
    name: str, request: Request, actor: Actor = Depends(require_actor)
) -> Response:
    records = upgrade_service_of(services_of(request)).list(name, actor=actor)
    return json_response({"items": [upgrade_document(record) for record in records]})


@router.get(
    "/{name}/upgrades/{upgrade_id}",
    summary="One upgrade: where it is, both spec versions and their diff",
    response_model=JSON_DOCUMENT,
)
async def get_upgrade(
    name: str, upgrade_id: str, request: Request, actor: Actor = Depends(require_actor)
) -> Response:
    record = upgrade_service_of(services_of(request)).get(name, upgrade_id, actor=actor)
    return json_response(upgrade_document(record))


def upgrade_service_of(services: Services) -> UpgradeService:
    """The server's upgrade service; ``Conflict`` on a server built without one."""
    upgrades = services.upgrades
    if upgrades is None:
        raise Conflict("this server does not upgrade running applications")
    return upgrades


def _mode(in_body: UpgradeMode | None, in_query: UpgradeMode | None) -> UpgradeMode:
    if in_body is not None and in_query is not None and in_body is not in_query:
        raise InvalidInput(
            [FieldError("query.mode", f"is {in_query}, but the body's mode is {in_body}")]
        )
    return in_body or in_query or UpgradeMode.LAST_STATE
