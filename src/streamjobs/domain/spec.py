"""The StreamingJob manifest: where the rest of streamjobs parses, fills in and publishes it.

``parse_manifest`` applies the field rules of the models (``manifest``) and the rules that tie
fields together (``manifest_rules``) and reports every broken rule at once, each at a field path
such as ``spec.pipeline.outputs[0].format``. The models, enums and ``load_documents`` are
re-exported here so callers need one import.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from streamjobs.domain.documents import load_documents, not_a_mapping
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.manifest import (
    ApplicationSpec,
    ApplicationType,
    BadRecords,
    Configuration,
    Dependencies,
    Deployment,
    Guarantee,
    Input,
    InputFormat,
    Instance,
    JobSpec,
    LogLevel,
    Metadata,
    Output,
    OutputFormat,
    OutputMode,
    Pipeline,
    Processing,
    RestartPolicy,
    RestartPolicyType,
    Step,
    Streaming,
    StreamingJob,
    TriggerMode,
    View,
    Volume,
    Watermark,
)
from streamjobs.domain.manifest_rules import broken_rules

__all__ = [
    "ApplicationSpec",
    "ApplicationType",
    "BadRecords",
    "Configuration",
    "Dependencies",
    "Deployment",
    "Guarantee",
    "Input",
    "InputFormat",
    "Instance",
    "JobSpec",
    "LogLevel",
    "Metadata",
    "Output",
    "OutputFormat",
    "OutputMode",
    "Pipeline",
    "Processing",
    "RestartPolicy",
    "RestartPolicyType",
    "Step",
    "Streaming",
    "StreamingJob",
    "TriggerMode",
    "View",
    "Volume",
    "Watermark",
    "derived_checkpoint_location",
    "load_documents",
    "manifest_json_schema",
    "parse_manifest",
    "resolved_template",
    "split_server_fields",
]

SERVER_OWNED_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "createdBy",
    "updateTimestamp",
    "updatedBy",
)
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_MESSAGES_BY_TYPE = {
    "missing": "is required",
    "extra_forbidden": "is not a field here (check its spelling; keys are camelCase)",
    "model_type": "must be a mapping of keys to values",
    "model_attributes_type": "must be a mapping of keys to values",
    "dict_type": "must be a mapping of keys to values",
}
_PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_ABSENT = object()


def parse_manifest(
    document: Mapping[str, Any], *, checkpoint_root: str | None = None, source: str | None = None
) -> StreamingJob:
    """Parse and check one manifest, or raise ``InvalidInput`` listing every broken rule.

    ``checkpoint_root`` is where checkpoints are derived when a pipeline sets none; without it,
    an EXACTLY_ONCE pipeline must set its own. ``source`` (a file name, say) prefixes the error.
    """
    if not isinstance(document, Mapping):
        raise InvalidInput([FieldError("", f"a manifest {not_a_mapping(document)}")], source=source)
    try:
        job = StreamingJob.model_validate(dict(document))
    except ValidationError as error:
        raise InvalidInput(_field_errors(error, document), source=source) from None
    errors = broken_rules(job, checkpoint_root=checkpoint_root)
    if errors:
        raise InvalidInput(errors, source=source)
    return job


def split_server_fields(document: Any) -> tuple[Any, int | None]:
    """The manifest without the fields the server owns, and the resourceVersion it carried.

    The server prints a job with ``status`` and server-owned metadata (``uid``,
    ``resourceVersion``, ...); dropping them lets a printed job be edited and applied back, and
    its ``resourceVersion`` says which version the edit started from.
    """
    if not isinstance(document, Mapping) or not isinstance(document.get("metadata"), Mapping):
        return document, None
    manifest = {key: value for key, value in document.items() if key != "status"}
    metadata = dict(document["metadata"])
    version = metadata.get("resourceVersion")
    for key in SERVER_OWNED_METADATA:
        metadata.pop(key, None)
    manifest["metadata"] = metadata
    if version is None:
        return manifest, None
    try:
        return manifest, int(str(version))
    except ValueError:
        raise InvalidInput(
            [FieldError("metadata.resourceVersion", f"must be a whole number, not {version!r}")]
        ) from None


def derived_checkpoint_location(job: StreamingJob, checkpoint_root: str) -> str:
    """Where ``job`` checkpoints when its manifest does not say: root/namespace/name.

    The name is percent-encoded (a space becomes ``%20``), so the result is a valid URI and two
    names never share a location.
    """
    metadata = job.metadata
    return f"{checkpoint_root.rstrip('/')}/{metadata.namespace}/{quote(metadata.name, safe='')}"


def resolved_template(job: StreamingJob, *, checkpoint_root: str) -> dict[str, Any]:
    """The job as it runs, as JSON-ready data: camelCase keys, every default filled in, and a
    pipeline's derived checkpoint location. Secrets appear by name only, as in the manifest."""
    template = job.model_dump(mode="json", by_alias=True)
    pipeline = job.spec.pipeline
    if pipeline is not None and pipeline.streaming.checkpoint_location is None:
        streaming = template["spec"]["pipeline"]["streaming"]
        streaming["checkpointLocation"] = derived_checkpoint_location(job, checkpoint_root)
    return template


def manifest_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the StreamingJob manifest, for editors and the API."""
    schema = StreamingJob.model_json_schema(by_alias=True)
    return {"$schema": JSON_SCHEMA_DIALECT, **schema, "title": "StreamingJob"}


def _field_errors(error: ValidationError, document: Mapping[str, Any]) -> list[FieldError]:
    """pydantic's errors as FieldErrors at manifest paths, duplicates dropped."""
    errors = [
        FieldError(_path(detail["loc"], document), _message(detail)) for detail in error.errors()
    ]
    return list(dict.fromkeys(errors))


def _message(detail: ErrorDetails) -> str:
    message = _MESSAGES_BY_TYPE.get(detail["type"], detail["msg"])
    for prefix in _PYDANTIC_PREFIXES:
        message = message.removeprefix(prefix)
    return re.sub(r"^Input should\b", "must", message)


def _path(loc: Sequence[int | str], document: object) -> str:
    """The manifest path of pydantic's ``loc``, found by walking ``document`` along it.

    Parts that do not address a key or item of the document are pydantic's own (union member
    tags, ``[key]`` markers) and are dropped; a last key that is absent is kept, since that is
    where a missing field belongs.
    """
    parts: list[int | str] = []
    node = document
    for index, part in enumerate(loc):
        child = _child(node, part)
        is_missing_field = index == len(loc) - 1 and isinstance(node, Mapping) and part != "[key]"
        if child is not _ABSENT:
            parts.append(part)
            node = child
        elif is_missing_field:
            parts.append(part)
    return _format_path(parts)


def _child(node: object, part: int | str) -> object:
    """``node[part]`` if the document has it there, else ``_ABSENT``."""
    if isinstance(node, Mapping):
        return node.get(part, _ABSENT)
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return _ABSENT


def _format_path(parts: Sequence[int | str]) -> str:
    """``spec.pipeline.inputs[0].options["kafka.bootstrap.servers"]``: dots between plain keys,
    brackets around list indexes and around keys that are not plain."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part)}]"
    return text
