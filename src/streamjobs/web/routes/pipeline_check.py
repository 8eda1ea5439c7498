"""The pipeline editor's live check: a pipeline block checked as the job service would check it.

The Create / Configure page's pipeline editor posts what is typed, as it is typed, and shows each
error at its line; nothing is saved.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from streamjobs.domain.access import Actor
from streamjobs.services.container import Services
from streamjobs.web.job_form_errors import PIPELINE_PATH, validation_errors
from streamjobs.web.job_forms import pipeline_check_manifest
from streamjobs.web.pages import check_csrf, page_actor, page_session, services_of
from streamjobs.web.yaml_text import line_of, path_parts, read_mapping

router = APIRouter()


async def json_body(request: Request) -> Any:
    """The request's JSON body, or None when it is not JSON."""
    try:
        return await request.json()
    except ValueError:
        return None


@router.post("/jobs/validate-pipeline")
def validate_pipeline(
    request: Request,
    actor: Actor = Depends(page_actor),
    body: Any = Depends(json_body),
) -> JSONResponse:
    """Check a pipeline block (``{"yaml": ..., "guarantee": ...}``) as the job service would:
    ``{"errors": [{"path", "line", "message"}]}``, each line found in the YAML typed."""
    check_csrf(request, page_session(request), None)
    if not isinstance(body, dict) or not isinstance(body.get("yaml"), str):
        message = 'send the pipeline block as {"yaml": "..."}'
        return JSONResponse({"errors": [_pipeline_error("", None, message)]}, status_code=422)
    text = body["yaml"]
    guarantee = body.get("guarantee") if isinstance(body.get("guarantee"), str) else ""
    return JSONResponse({"errors": _pipeline_errors(services_of(request), text, str(guarantee))})


def _pipeline_errors(services: Services, text: str, guarantee: str) -> list[dict[str, Any]]:
    block, unreadable = read_mapping(text, what="the pipeline")
    if block is None:
        return [_pipeline_error("spec.pipeline", p.line, p.message) for p in unreadable]
    errors = []
    for error in validation_errors(services, pipeline_check_manifest(block, guarantee=guarantee)):
        parts = path_parts(error.path)
        if parts is not None and tuple(parts[:2]) == PIPELINE_PATH:
            errors.append(_pipeline_error(error.path, line_of(text, parts[2:]), error.message))
    return errors


def _pipeline_error(path: str, line: int | None, message: str) -> dict[str, Any]:
    return {"path": path, "line": line, "message": message}
