"""A job's whole spec as its Details tab shows it: what runs (the pipeline with its SQL
highlighted, or the program), on what (compute), how it restarts, what it guarantees, its Spark
settings and environment, and its dependencies.

It reads the job's resolved template (every default filled in, the derived checkpoint location)
and turns it into facts, tables and highlighted SQL for the template; the same words as the form
and the manifest. Secrets appear by name only, as the manifest holds them; a plain value whose key
looks secret (Spark's own redaction rule, ``domain.spark_conf.REDACTION_REGEX``) is masked too,
since it may be a password written where a secret reference belonged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from streamjobs import formatting
from streamjobs.domain.datasets import REDACTED
from streamjobs.domain.spark_conf import REDACTION_REGEX
from streamjobs.web.sql_highlight import highlight

Fact = tuple[str, str]
"""A label and its text, one line of a definition list."""
_SECRET_LOOKING = re.compile(REDACTION_REGEX)
HIDDEN_VALUE = f"{REDACTED} (hidden: its name looks like a secret's)"


@dataclass(frozen=True)
class Setting:
    """One key of a map the spec holds (Spark settings, environment, options) and what is shown
    for it: its value, a secret's name, or the mask."""

    key: str
    shown: str
    secret: str | None = None
    hidden: bool = False


@dataclass(frozen=True)
class SqlView:
    name: str
    sql: Markup


@dataclass(frozen=True)
class Endpoint:
    """A pipeline input or output as a table row."""

    name: str
    format: str
    where: str
    facts: list[Fact]
    options: list[Setting]


@dataclass(frozen=True)
class PipelineDetails:
    streaming: list[Fact]
    inputs: list[Endpoint]
    steps: list[list[SqlView]]
    outputs: list[Endpoint]


@dataclass(frozen=True)
class SpecDetails:
    """Every section of the Details tab."""

    application: list[Fact]
    compute: list[Fact]
    pipeline: PipelineDetails | None
    restart_policy: list[Fact]
    processing: list[Fact]
    spark_settings: list[Setting]
    environment: list[Setting]
    java_options: str | None
    dependencies: dict[str, list[str]] = field(default_factory=dict)


def spec_details(spec: dict[str, Any], node_types: dict[str, Any]) -> SpecDetails:
    """The Details tab's sections from a job's (resolved) ``spec``."""
    configuration = spec.get("configuration") or {}
    dependencies = spec.get("dependencies") or {}
    pipeline = spec.get("pipeline")
    return SpecDetails(
        application=_application_facts(spec.get("application") or {}),
        compute=compute_facts(spec, node_types),
        pipeline=_pipeline_details(pipeline) if pipeline else None,
        restart_policy=_restart_facts(spec.get("restartPolicy") or {}),
        processing=_processing_facts(spec.get("processing") or {}, pipeline is not None),
        spark_settings=_settings(
            configuration.get("sparkConf") or {}, configuration.get("sparkConfSecrets") or {}
        ),
        environment=_settings(
            configuration.get("env") or {}, configuration.get("envSecrets") or {}
        ),
        java_options=configuration.get("javaOptions"),
        dependencies={
            "Packages": list(dependencies.get("packages") or []),
            "Jars": list(dependencies.get("jars") or []),
            "Files": list(dependencies.get("files") or []),
            "Python files": list(dependencies.get("pyFiles") or []),
        },
    )


def compute_facts(spec: dict[str, Any], node_types: dict[str, Any]) -> list[Fact]:
    """Where the job runs, its node types' sizes taken from the admin's node types."""
    instance = spec.get("instance") or {}
    standard = instance.get("deployment") == "standard"
    driver = node_types.get("driver")
    executor = node_types.get("executor")
    if standard:
        count = instance.get("executors") or 1
        executor_text = _node_text(instance.get("executor"), executor)
        prefix = "up to " if instance.get("dynamic") else ""
        total = (
            f"{prefix}{count} x {_cores(executor['cores'])} = {_cores(count * executor['cores'])}, "
            f"{formatting.memory(count * executor['memoryMb'])}"
            if executor
            else f"{prefix}{count} executors"
        )
    else:
        executor_text = "none: executors run inside the driver"
        total = (
            f"local[{driver['cores']}] inside the driver: {_cores(driver['cores'])}, "
            f"{formatting.memory(driver['memoryMb'])} shared with the driver"
            if driver
            else "inside the driver"
        )
    facts = [
        ("Deployment type", "Standard" if standard else "Single node"),
        ("Driver node", _node_text(instance.get("driver"), driver)),
        ("Executor node", executor_text),
        ("Bundle", str(spec.get("bundle", ""))),
        ("Total executor resources", total),
    ]
    volume = instance.get("volume")
    if volume:
        facts.append(("Volume", f"{volume.get('size')} at {volume.get('mountPath')}"))
    return facts


def _application_facts(application: dict[str, Any]) -> list[Fact]:
    facts: list[Fact] = [("Type", str(application.get("type", "")))]
    for key, title in [
        ("mainApplicationFile", "Main application file"),
        ("mainClass", "Main class"),
        ("image", "Image"),
    ]:
        if application.get(key):
            facts.append((title, str(application[key])))
    arguments = application.get("arguments") or []
    if application.get("type") != "pipeline" or arguments:
        facts.append(("Arguments", " ".join(arguments) if arguments else "none"))
    return facts


def _pipeline_details(pipeline: dict[str, Any]) -> PipelineDetails:
    streaming = pipeline.get("streaming") or {}
    batch = bool(pipeline.get("batchMode"))
    facts: list[Fact] = [("Mode", "Batch: read once, write once" if batch else "Streaming")]
    if not batch:
        trigger = str(streaming.get("triggerMode", "ProcessingTime"))
        if streaming.get("triggerDuration"):
            trigger += f", every {streaming['triggerDuration']}"
        facts += [
            ("Trigger", trigger),
            ("Low latency", _yes_no(streaming.get("lowLatency"))),
            ("For each batch", _yes_no(streaming.get("forEachBatchMode"))),
            ("Checkpoint location", str(streaming.get("checkpointLocation") or "derived")),
        ]
    facts += [
        ("Log level", str(pipeline.get("logLevel", "INFO"))),
        ("Explain plans", _yes_no(pipeline.get("explain"))),
        ("Preview lines", str(pipeline.get("showPreviewLines", 0))),
    ]
    return PipelineDetails(
        streaming=facts,
        inputs=[_input(source) for source in pipeline.get("inputs") or []],
        steps=[
            [SqlView(str(view["name"]), highlight(str(view["sql"]))) for view in step["sequence"]]
            for step in pipeline.get("steps") or []
        ],
        outputs=[_output(sink) for sink in pipeline.get("outputs") or []],
    )


def _input(source: dict[str, Any]) -> Endpoint:
    facts: list[Fact] = [("Stream", _yes_no(source.get("isStream", True)))]
    if source.get("schema"):
        facts.append(("Schema", str(source["schema"])))
    watermark = source.get("watermark")
    if watermark:
        facts.append(("Watermark", f"{watermark['column']}, {watermark['delay']} late at most"))
    bad_records = source.get("badRecords")
    if bad_records:
        facts.append(("Bad records to", str(bad_records.get("output"))))
    return _endpoint(source, facts)


def _output(sink: dict[str, Any]) -> Endpoint:
    return _endpoint(sink, [("Output mode", str(sink.get("outputMode", "append")))])


def _endpoint(item: dict[str, Any], facts: list[Fact]) -> Endpoint:
    return Endpoint(
        name=str(item.get("name", "")),
        format=str(item.get("format", "")),
        where=str(item.get("dataset") or item.get("path") or formatting.UNKNOWN),
        facts=facts,
        options=_settings(item.get("options") or {}, {}),
    )


def _restart_facts(policy: dict[str, Any]) -> list[Fact]:
    kind = str(policy.get("type", "Never"))
    facts: list[Fact] = [("Policy", kind)]
    if kind == "Never":
        return facts
    interval = policy.get("onFailureRetryInterval")
    facts += [
        (
            "On a failed submission",
            _retries(
                policy.get("onSubmissionFailureRetries"),
                policy.get("onSubmissionFailureRetryInterval"),
            ),
        ),
        (
            "On a failure while running",
            _retries(policy.get("onFailureRetries"), policy.get("onFailureRetryInterval"))
            if kind != "Always"
            else f"restarted every time, {formatting.duration(interval)} apart",
        ),
        ("Backoff", str(policy.get("backoff", "fixed"))),
        ("Longest interval", formatting.duration(policy.get("maxInterval"))),
    ]
    if policy.get("resetAfterSeconds"):
        reset = formatting.duration(policy["resetAfterSeconds"])
        facts.append(("Retries counted again after", f"{reset} running"))
    return facts


def _retries(count: Any, interval: Any) -> str:
    times = "1 retry" if count == 1 else f"{count} retries"
    return f"{times}, {formatting.duration(interval)} apart"


def _processing_facts(processing: dict[str, Any], is_pipeline: bool) -> list[Fact]:
    facts: list[Fact] = []
    if is_pipeline:
        facts.append(("Guarantee", str(processing.get("guarantee", "AT_LEAST_ONCE"))))
    facts += [
        ("Snapshot interval", formatting.milliseconds(processing.get("snapshotIntervalMillis"))),
        ("Suspend on failure", _yes_no(processing.get("suspendOnFailure"))),
        ("Initial snapshot", str(processing.get("initialSnapshotName") or "none")),
    ]
    return facts


def _settings(values: dict[str, Any], secrets: dict[str, Any]) -> list[Setting]:
    """Plain values (masked when their key looks secret) and secret references by name, by key."""
    shown = [
        Setting(key, HIDDEN_VALUE, hidden=True)
        if _SECRET_LOOKING.search(key)
        else Setting(key, _text(value))
        for key, value in values.items()
    ]
    shown += [Setting(key, f"secret {name}", secret=str(name)) for key, name in secrets.items()]
    return sorted(shown, key=lambda setting: setting.key)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(_text(item) for item in value)
    return str(value)


def _yes_no(value: Any) -> str:
    return "yes" if value else "no"


def _node_text(name: str | None, size: dict[str, Any] | None) -> str:
    if name is None:
        return "none"
    if size is None:
        return name
    return f"{name} · {_cores(size['cores'])}, {formatting.memory(size['memoryMb'])}"


def _cores(count: int) -> str:
    return "1 core" if count == 1 else f"{count} cores"
