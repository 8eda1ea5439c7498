"""The Create / Configure job form as data, and the mapping between it and a job manifest.

The form holds what the person typed, as text. Nothing here checks the job's rules (the services
do, for the API and the UI alike); this only turns controls into manifest fields and back:

- fields that do not apply to the chosen application type or deployment are left out (a main
  class only for JVM, a pipeline and its processing guarantee only for Pipeline, executors, the
  deploy mode and dynamic allocation only for Standard, the minimum and initial executors only
  with dynamic allocation), and the four retry fields are only taken for OnFailure;
- fields the form does not show (``restartPolicy.backoff``,
  ``processing.snapshotIntervalMillis`` ...) are kept from the job being configured or duplicated,
  but for the Kubernetes fields (``image``, ``volume``, ``configMaps``): this server refuses them,
  and a job stored with one before it did is saved without it;
- text that cannot become a field (pipeline YAML that does not parse, a value without a key, a
  key given twice) is a ``ControlError`` on the control that holds it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from streamjobs.domain.instance import DeployMode
from streamjobs.domain.spec import (
    ApplicationType,
    Deployment,
    Guarantee,
    RestartPolicyType,
)
from streamjobs.web.health_rule_rows import RuleRow, rules_from_fields, rules_from_spec, rules_value
from streamjobs.web.job_form_controls import DEFAULT_PIPELINE, ROW_GROUPS, Row, RowGroup
from streamjobs.web.yaml_text import dump_yaml, read_mapping, without_empty

API_VERSION = "streamjobs.io/v1"
KIND = "StreamingJob"


@dataclass(frozen=True)
class ControlError:
    """A problem shown next to a control (``control`` empty: in the summary at the top), with
    the manifest path it concerns and, for YAML, its line."""

    control: str
    message: str
    path: str = ""
    line: int | None = None


@dataclass(frozen=True)
class JobForm:
    """What the form's controls hold, as typed. Field names are the controls' names."""

    name: str = ""
    description: str = ""
    bundle: str = "default"
    namespace: str = "default"
    run_as: str = ""
    app_type: str = ApplicationType.PIPELINE.value
    main_class: str = ""
    main_file: str = ""
    pipeline: str = DEFAULT_PIPELINE
    low_latency: str = ""
    """The Low latency checkbox (``spec.pipeline.streaming.lowLatency``): "true" when ticked."""
    java_options: str = ""
    deployment: str = Deployment.SINGLE_NODE.value
    driver: str = "small"
    executor: str = "medium"
    executors: str = "1"
    deploy_mode: str = DeployMode.CLIENT.value
    dynamic: str = "false"
    min_executors: str = ""
    initial_executors: str = ""
    restart_policy: str = RestartPolicyType.NEVER.value
    submission_retries: str = "1"
    submission_retry_interval: str = "5"
    failure_retries: str = "1"
    failure_retry_interval: str = "5"
    guarantee: str = Guarantee.AT_LEAST_ONCE.value
    resource_version: str = ""
    duplicate_of: str = ""
    rows: Mapping[str, tuple[Row, ...]] = field(default_factory=dict)
    health_rules: tuple[RuleRow, ...] = ()

    def rows_of(self, group: RowGroup) -> tuple[Row, ...]:
        return self.rows.get(group.control, ())


SCALAR_CONTROLS = tuple(f.name for f in fields(JobForm) if f.name not in ("rows", "health_rules"))


@dataclass(frozen=True)
class FormManifest:
    """The manifest a form makes, and what in the form could not become part of it."""

    manifest: dict[str, Any]
    problems: tuple[ControlError, ...]


def form_from_fields(submitted: Mapping[str, Sequence[str]]) -> JobForm:
    """The form as submitted (each name with its values, in order); rows left blank dropped."""
    defaults = JobForm()
    scalars = {
        name: values[0] if (values := submitted.get(name)) else getattr(defaults, name)
        for name in SCALAR_CONTROLS
    }
    rows: dict[str, tuple[Row, ...]] = {}
    for group in ROW_GROUPS:
        if group.paired:
            keys = list(submitted.get(f"{group.control}_key", []))
            values = list(submitted.get(f"{group.control}_value", []))
            width = max(len(keys), len(values))
            keys += [""] * (width - len(keys))
            values += [""] * (width - len(values))
            typed = [Row(key=k, value=v) for k, v in zip(keys, values, strict=True)]
        else:
            typed = [Row(value=v) for v in submitted.get(group.control, [])]
        rows[group.control] = tuple(r for r in typed if r.key.strip() or r.value.strip())
    return JobForm(**scalars, rows=rows, health_rules=rules_from_fields(submitted))


def form_from_manifest(document: Mapping[str, Any]) -> JobForm:
    """The form showing a manifest (as stored, or as the API prints it, resourceVersion and
    all); fields the manifest leaves out show their defaults."""
    defaults = JobForm()
    metadata = _section(document, "metadata")
    spec = _section(document, "spec")
    application = _section(spec, "application")
    instance = _section(spec, "instance")
    policy = _section(spec, "restartPolicy")
    pipeline = spec.get("pipeline")
    rows: dict[str, tuple[Row, ...]] = {}
    for group in ROW_GROUPS:
        value = _value_at(document, group.path)
        if group.paired and isinstance(value, Mapping):
            rows[group.control] = tuple(Row(key=str(k), value=_text(v)) for k, v in value.items())
        elif not group.paired and isinstance(value, list):
            rows[group.control] = tuple(Row(value=_text(item)) for item in value)

    def text(block: Mapping[str, Any], key: str, default: str = "") -> str:
        return _text(block[key]) if block.get(key) is not None else default

    return JobForm(
        name=text(metadata, "name"),
        description=text(metadata, "description"),
        bundle=text(spec, "bundle", defaults.bundle),
        namespace=text(metadata, "namespace", defaults.namespace),
        run_as=text(spec, "runAs"),
        app_type=text(application, "type", defaults.app_type),
        main_class=text(application, "mainClass"),
        main_file=text(application, "mainApplicationFile"),
        pipeline=(
            dump_yaml(without_empty(_without_low_latency(pipeline)))
            if isinstance(pipeline, Mapping)
            else DEFAULT_PIPELINE
        ),
        low_latency=_text(_value_at(spec, LOW_LATENCY_KEYS)),
        java_options=text(_section(spec, "configuration"), "javaOptions"),
        deployment=text(instance, "deployment", defaults.deployment),
        driver=text(instance, "driver", defaults.driver),
        executor=text(instance, "executor", defaults.executor),
        executors=text(instance, "executors", defaults.executors),
        deploy_mode=text(instance, "deployMode", defaults.deploy_mode),
        dynamic=text(instance, "dynamic", defaults.dynamic),
        min_executors=text(instance, "minExecutors"),
        initial_executors=text(instance, "initialExecutors"),
        restart_policy=text(policy, "type", defaults.restart_policy),
        submission_retries=text(policy, "onSubmissionFailureRetries", defaults.submission_retries),
        submission_retry_interval=text(
            policy, "onSubmissionFailureRetryInterval", defaults.submission_retry_interval
        ),
        failure_retries=text(policy, "onFailureRetries", defaults.failure_retries),
        failure_retry_interval=text(
            policy, "onFailureRetryInterval", defaults.failure_retry_interval
        ),
        guarantee=text(_section(spec, "processing"), "guarantee", defaults.guarantee),
        resource_version=text(metadata, "resourceVersion"),
        rows=rows,
        health_rules=rules_from_spec(spec),
    )


def duplicate_form(source: Mapping[str, Any], source_name: str) -> JobForm:
    """The form of a new job copied from ``source``: named ``<source>-copy``, no version."""
    form = form_from_manifest(source)
    return replace(form, name=f"{source_name}-copy", resource_version="", duplicate_of=source_name)


def manifest_from_form(form: JobForm, base: Mapping[str, Any] | None = None) -> FormManifest:
    """The manifest the form asks for. With ``base`` (the job configured or duplicated), what
    the form does not show is kept from it; what the form shows replaces it."""
    problems: list[ControlError] = []
    manifest: dict[str, Any] = copy.deepcopy(dict(base)) if base else {}
    manifest["apiVersion"] = API_VERSION
    manifest["kind"] = KIND
    for group in ROW_GROUPS:
        _put(_block(manifest, *group.path[:-1]), group.path[-1], _rows_value(form, group, problems))

    metadata = _block(manifest, "metadata")
    _put(metadata, "name", form.name.strip())
    _put(metadata, "description", form.description.strip() or None)
    _put(metadata, "namespace", form.namespace.strip() or None)
    _put(metadata, "resourceVersion", form.resource_version.strip() or None)

    spec = _block(manifest, "spec")
    _put(spec, "bundle", form.bundle.strip() or None)
    _put(spec, "runAs", form.run_as.strip() or None)
    app_type = form.app_type.strip()
    application = _block(spec, "application")
    _put(application, "type", app_type)
    _put(application, "image", None)
    _put(_block(spec, "configuration"), "configMaps", None)
    is_jvm = app_type == ApplicationType.JVM
    is_program = app_type in (ApplicationType.PYTHON, ApplicationType.JVM)
    _put(application, "mainClass", (form.main_class.strip() or None) if is_jvm else None)
    _put(
        application, "mainApplicationFile", (form.main_file.strip() or None) if is_program else None
    )
    _put(
        spec,
        "pipeline",
        _pipeline(form, problems) if app_type == ApplicationType.PIPELINE else None,
    )

    _put(_block(spec, "configuration"), "javaOptions", form.java_options.strip() or None)
    _fill_instance(_block(spec, "instance"), form)
    _fill_restart_policy(_block(spec, "restartPolicy"), form)
    guarantee = form.guarantee.strip() if app_type == ApplicationType.PIPELINE else ""
    _put(_block(spec, "processing"), "guarantee", guarantee or None)
    _fill_health(spec, form)
    return FormManifest(manifest=manifest, problems=tuple(problems))


def pipeline_check_manifest(pipeline: Mapping[str, Any], *, guarantee: str = "") -> dict[str, Any]:
    """A manifest around a ``pipeline`` block alone, to check the block as it is being typed:
    everything else is left at its defaults (but the processing guarantee, which it must meet)."""
    manifest = manifest_from_form(JobForm(name="pipeline-check", guarantee=guarantee)).manifest
    manifest["spec"]["pipeline"] = dict(pipeline)
    return manifest


def new_job_manifest() -> dict[str, Any]:
    """The manifest "Edit as YAML" starts a new job from: the new form's, to be named."""
    return manifest_from_form(JobForm()).manifest


def _fill_instance(instance: dict[str, Any], form: JobForm) -> None:
    deployment = form.deployment.strip()
    _put(instance, "deployment", deployment)
    _put(instance, "driver", form.driver.strip() or None)
    if deployment == Deployment.STANDARD:
        _put(instance, "executor", form.executor.strip() or None)
        _put(instance, "executors", _whole_number(form.executors))
        _put(instance, "deployMode", form.deploy_mode.strip() or None)
        dynamic = _switch(form.dynamic)
        _put(instance, "dynamic", dynamic)
        for key, text in (
            ("minExecutors", form.min_executors),
            ("initialExecutors", form.initial_executors),
        ):
            _put(instance, key, _whole_number(text) if dynamic is not False else None)
    else:
        for key in STANDARD_ONLY:
            instance.pop(key, None)
    instance.pop("volume", None)


STANDARD_ONLY = (
    "executor",
    "executors",
    "deployMode",
    "dynamic",
    "minExecutors",
    "initialExecutors",
)
"""The instance fields of ``deployment: standard`` only."""


def _switch(text: str) -> bool | str | None:
    """A yes/no choice: its boolean, or the text as chosen for the services to refuse."""
    text = text.strip()
    return {"true": True, "false": False, "": None}.get(text.lower(), text)


def _fill_health(spec: dict[str, Any], form: JobForm) -> None:
    """The rules of the form's rows; none: no ``health`` block (its other fields, if a later
    version has some, are kept)."""
    health = _block(spec, "health")
    _put(health, "rules", rules_value(form.health_rules) or None)
    if not health:
        spec.pop("health")


def _fill_restart_policy(policy: dict[str, Any], form: JobForm) -> None:
    """OnFailure takes every retry field; Always its submission retries (it bounds failures to
    start too) and the wait before a restart, its restarts after a run being unlimited."""
    policy_type = form.restart_policy.strip()
    _put(policy, "type", policy_type)
    if policy_type in (RestartPolicyType.ON_FAILURE, RestartPolicyType.ALWAYS):
        _put(policy, "onSubmissionFailureRetries", _whole_number(form.submission_retries))
        _put(
            policy,
            "onSubmissionFailureRetryInterval",
            _whole_number(form.submission_retry_interval),
        )
        _put(policy, "onFailureRetryInterval", _whole_number(form.failure_retry_interval))
    if policy_type == RestartPolicyType.ON_FAILURE:
        _put(policy, "onFailureRetries", _whole_number(form.failure_retries))


def _pipeline(form: JobForm, problems: list[ControlError]) -> dict[str, Any] | None:
    block, unreadable = read_mapping(form.pipeline, what="the pipeline")
    problems += [
        ControlError("pipeline", problem.message, path="spec.pipeline", line=problem.line)
        for problem in unreadable
    ]
    low_latency = _switch(form.low_latency)
    if block is not None and low_latency not in (None, False):
        streaming = block.setdefault("streaming", {})
        if isinstance(streaming, dict):
            streaming["lowLatency"] = low_latency
    return block


LOW_LATENCY_KEYS = ("pipeline", "streaming", "lowLatency")
"""Where the Low latency checkbox's field is in ``spec``; the pipeline editor leaves it out.
Unticked, the box leaves the field as the pipeline's YAML has it (absent: off)."""


def _without_low_latency(pipeline: Mapping[str, Any]) -> Mapping[str, Any]:
    """``pipeline`` without ``streaming.lowLatency``, which the checkbox shows instead."""
    streaming = pipeline.get("streaming")
    if not isinstance(streaming, Mapping) or "lowLatency" not in streaming:
        return pipeline
    kept = {key: value for key, value in streaming.items() if key != "lowLatency"}
    return {**pipeline, "streaming": kept}


def _rows_value(
    form: JobForm, group: RowGroup, problems: list[ControlError]
) -> dict[str, str] | list[str] | None:
    """The mapping or list a group's rows make (None when there are none), with a problem for
    each value without a key and each key given twice."""
    rows = form.rows_of(group)
    if not group.paired:
        return [row.value.strip() for row in rows] or None
    mapping: dict[str, str] = {}
    for index, row in enumerate(rows):
        key = row.key.strip()
        control = f"{group.control}_key_{index}"
        if not key:
            problems.append(ControlError(control, f"give a {group.key_label.lower()} too"))
        elif key in mapping:
            problems.append(ControlError(control, f"{key!r} is given twice"))
        else:
            mapping[key] = row.value
    return mapping or None


def _whole_number(text: str) -> int | str | None:
    """An integer field: its number, or the text as typed for the services to refuse."""
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        return text


def _put(block: dict[str, Any], key: str, value: Any) -> None:
    """Set a field, or remove it when ``value`` is None (the field takes its default)."""
    if value is None:
        block.pop(key, None)
    else:
        block[key] = value


def _block(parent: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The mapping at ``keys`` under ``parent``, made (or replacing a non-mapping) if needed."""
    block = parent
    for key in keys:
        child = block.get(key)
        if not isinstance(child, dict):
            child = block[key] = {}
        block = child
    return block


def _section(block: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = block.get(key)
    return value if isinstance(value, Mapping) else {}


def _value_at(document: Mapping[str, Any], path: Sequence[str]) -> Any:
    value: Any = document
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
