"""The StreamingJob manifest: where the rest of streamjobs parses, fills in and publishes it.

``parse_manifest`` applies the field rules of the models (``manifest``) and the rules that tie
fields together (``manifest_rules``) and reports every broken rule at once, each at a field path
such as ``spec.pipeline.outputs[0].format``. The models, enums and ``load_documents`` are
re-exported here so callers need one import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from pydantic.json_schema import DEFAULT_REF_TEMPLATE

from streamjobs.domain.control_characters import JOB_MULTI_LINE, refuse_control_characters
from streamjobs.domain.documents import load_documents
from streamjobs.domain.errors import InvalidInput
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
from streamjobs.domain.validation import validated
from streamjobs.domain.versions import resource_version

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


def parse_manifest(
    document: Mapping[str, Any], *, checkpoint_root: str | None = None, source: str | None = None
) -> StreamingJob:
    """Parse and check one manifest, or raise ``InvalidInput`` listing every broken rule.

    ``checkpoint_root`` is where checkpoints are derived when a pipeline sets none; without it,
    an EXACTLY_ONCE pipeline must set its own. ``source`` (a file name, say) prefixes the error.
    """
    refuse_control_characters(document, multi_line=JOB_MULTI_LINE, source=source)
    job = validated(StreamingJob, document, source=source)
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
    return manifest, resource_version(version, path="metadata.resourceVersion")


def derived_checkpoint_location(job: StreamingJob, checkpoint_root: str) -> str:
    """Where ``job`` checkpoints when its manifest does not say: root/namespace/name.

    The name is percent-encoded (a space becomes ``%20``), so the result is a valid URI and two
    names never share a location.
    """
    metadata = job.metadata
    return f"{checkpoint_root.rstrip('/')}/{metadata.namespace}/{quote(metadata.name, safe='')}"


def resolved_template(job: StreamingJob, *, checkpoint_root: str) -> dict[str, Any]:
    """The job as it runs, as JSON-ready data: camelCase keys, every default filled in, and a
    streaming pipeline's derived checkpoint location (a batch job keeps none). Secrets appear by
    name only, as in the manifest."""
    template = job.model_dump(mode="json", by_alias=True)
    pipeline = job.spec.pipeline
    if (
        pipeline is not None
        and not pipeline.batch_mode
        and pipeline.streaming.checkpoint_location is None
    ):
        streaming = template["spec"]["pipeline"]["streaming"]
        streaming["checkpointLocation"] = derived_checkpoint_location(job, checkpoint_root)
    return template


def manifest_json_schema(ref_template: str = DEFAULT_REF_TEMPLATE) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the StreamingJob manifest, for editors and the API
    (``ref_template`` places its definitions, e.g. in an OpenAPI document's components)."""
    schema = StreamingJob.model_json_schema(by_alias=True, ref_template=ref_template)
    return {"$schema": JSON_SCHEMA_DIALECT, **schema, "title": "StreamingJob"}
