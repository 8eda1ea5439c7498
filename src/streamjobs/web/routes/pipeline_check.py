"""The pipeline editor's live check: a pipeline block checked as the job service would check it.

The Create / Configure page's pipeline editor posts what is typed, as it is typed, and shows each
error at its line; nothing is saved. Its body is bounded like every other (``api.body_limits``, with
a limit of its own) and read by the one bounded JSON reader.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from streamjobs.domain.access import Actor
from streamjobs.domain.documents import DocumentTooLarge, load_json
from streamjobs.domain.errors import InvalidInput
from streamjobs.services.container import Services
from streamjobs.web.job_form_errors import PIPELINE_PATH, validation_errors
from streamjobs.web.job_forms import pipeline_check_manifest
from streamjobs.web.pages import page_actor, services_of
from streamjobs.web.yaml_text import path_parts, read_mapping_text

router = APIRouter()
MAX_LISTED_ERRORS = 50
"""How many problems the check lists; it says how many more there are."""


async def json_body(request: Request) -> Any:
    """The request's JSON body (its size bounded by ``api.body_limits``), ``None`` when it is not
    JSON, or the error of a body over the reader's nesting limit."""
    try:
        return load_json((await request.body()).decode("utf-8"), source="body")
    except DocumentTooLarge as error:
        return error
    except (InvalidInput, UnicodeDecodeError):
        return None


@router.post("/jobs/validate-pipeline")
def validate_pipeline(
    request: Request,
    actor: Actor = Depends(page_actor),
    body: Any = Depends(json_body),
) -> JSONResponse:
    """Check a pipeline block (``{"yaml": ..., "guarantee": ...}``) as the job service would:
    ``{"errors": [{"path", "line", "message"}]}``, each line found in the YAML typed."""
    if isinstance(body, DocumentTooLarge):
        errors = [_pipeline_error(e.path, None, e.message) for e in body.errors]
        return JSONResponse({"errors": errors}, status_code=422)
    if not isinstance(body, dict) or not isinstance(body.get("yaml"), str):
        message = 'send the pipeline block as {"yaml": "..."}'
        return JSONResponse({"errors": [_pipeline_error("", None, message)]}, status_code=422)
    text = body["yaml"]
    guarantee = body.get("guarantee") if isinstance(body.get("guarantee"), str) else ""
    return JSONResponse({"errors": _pipeline_errors(services_of(request), text, str(guarantee))})


def _pipeline_errors(services: Services, text: str, guarantee: str) -> list[dict[str, Any]]:
    read = read_mapping_text(text, what="the pipeline")
    if read.mapping is None:
        return [_pipeline_error("spec.pipeline", p.line, p.message) for p in read.problems]
    manifest = pipeline_check_manifest(read.mapping, guarantee=guarantee)
    errors = []
    for error in validation_errors(services, manifest):
        parts = path_parts(error.path)
        if parts is not None and tuple(parts[:2]) == PIPELINE_PATH:
            errors.append(_pipeline_error(error.path, read.lines.line_of(parts[2:]), error.message))
    if len(errors) > MAX_LISTED_ERRORS:
        unlisted = len(errors) - MAX_LISTED_ERRORS
        more = _pipeline_error("", None, f"and {unlisted} more problems, not listed")
        errors = [*errors[:MAX_LISTED_ERRORS], more]
    return errors


def _pipeline_error(path: str, line: int | None, message: str) -> dict[str, Any]:
    return {"path": path, "line": line, "message": message}
