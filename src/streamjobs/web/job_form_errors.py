"""Where the services' errors about a job go on the form: next to the control whose manifest
path they name (``spec.restartPolicy.onFailureRetries`` -> Failure retries), on the row of a
key/value or list field, by line next to the pipeline editor; anything else in the summary.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.services.container import Services
from streamjobs.web.health_rule_rows import RULES_CONTROL, RULES_PATH, rule_error_control
from streamjobs.web.job_form_controls import ROW_GROUPS, Row, RowGroup
from streamjobs.web.job_forms import LOW_LATENCY_KEYS, ControlError, JobForm
from streamjobs.web.yaml_text import FieldLines, PathPart, path_parts, position_line

SCALAR_PATHS: dict[tuple[str, ...], str] = {
    ("metadata", "name"): "name",
    ("metadata", "description"): "description",
    ("metadata", "namespace"): "namespace",
    ("spec", "bundle"): "bundle",
    ("spec", "runAs"): "run_as",
    ("spec", "application"): "app_type",
    ("spec", "application", "type"): "app_type",
    ("spec", "application", "mainClass"): "main_class",
    ("spec", "application", "mainApplicationFile"): "main_file",
    ("spec", "configuration", "javaOptions"): "java_options",
    ("spec", "instance", "deployment"): "deployment",
    ("spec", "instance", "driver"): "driver",
    ("spec", "instance", "executor"): "executor",
    ("spec", "instance", "executors"): "executors",
    ("spec", "instance", "deployMode"): "deploy_mode",
    ("spec", "instance", "dynamic"): "dynamic",
    ("spec", "instance", "minExecutors"): "min_executors",
    ("spec", "instance", "initialExecutors"): "initial_executors",
    ("spec", "restartPolicy", "type"): "restart_policy",
    ("spec", "restartPolicy", "onSubmissionFailureRetries"): "submission_retries",
    ("spec", "restartPolicy", "onSubmissionFailureRetryInterval"): "submission_retry_interval",
    ("spec", "restartPolicy", "onFailureRetries"): "failure_retries",
    ("spec", "restartPolicy", "onFailureRetryInterval"): "failure_retry_interval",
    ("spec", "processing", "guarantee"): "guarantee",
}
PIPELINE_PATH = ("spec", "pipeline")
LOW_LATENCY_PATH = ("spec", *LOW_LATENCY_KEYS)
"""The Low latency checkbox's field: its errors go next to the box when it is ticked (the box
then set it), else to the pipeline editor."""


@dataclass(frozen=True)
class FormErrors:
    """Every problem of a submitted form, by control; those of no control go in the summary."""

    items: tuple[ControlError, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.items)

    def of(self, control: str) -> list[ControlError]:
        return [error for error in self.items if error.control == control]

    @property
    def summary(self) -> list[ControlError]:
        return self.of("")

    @property
    def placed(self) -> int:
        """How many problems are shown next to a control."""
        return sum(1 for error in self.items if error.control)


def form_errors(
    problems: Sequence[ControlError], service_errors: Iterable[FieldError], form: JobForm
) -> FormErrors:
    """The form's own problems and the services' errors placed on the form; a service error on
    a control that already has a problem of the form is left out (it follows from that one)."""
    pipeline_lines = FieldLines.of(form.pipeline)
    placed = [place_error(error, form, pipeline_lines) for error in service_errors]
    taken = {problem.control for problem in problems}
    kept = [error for error in placed if not error.control or error.control not in taken]
    return FormErrors(tuple(dict.fromkeys([*problems, *kept])))


def place_error(
    error: FieldError, form: JobForm, pipeline_lines: FieldLines | None = None
) -> ControlError:
    """The control ``error`` belongs to, by its path (the summary's ``""`` when none fits);
    ``pipeline_lines``, the form's pipeline read once for all its errors, gives their lines."""
    parts = path_parts(error.path) if error.path else None
    if parts is None:
        return ControlError("", error.message, path=error.path, line=position_line(error.path))
    if tuple(parts) == LOW_LATENCY_PATH and form.low_latency.strip() not in ("", "false"):
        return ControlError("low_latency", error.message, path=error.path)
    if tuple(parts[:2]) == PIPELINE_PATH:
        lines = pipeline_lines or FieldLines.of(form.pipeline)
        line = lines.line_of(parts[2:])
        return ControlError("pipeline", error.message, path=error.path, line=line)
    if tuple(parts[: len(RULES_PATH)]) == RULES_PATH:
        control = rule_error_control(parts[len(RULES_PATH) :], form.health_rules)
        return ControlError(control, error.message, path=error.path)
    if tuple(parts) == RULES_PATH[:2]:
        return ControlError(RULES_CONTROL, error.message, path=error.path)
    for group in ROW_GROUPS:
        if tuple(parts[: len(group.path)]) == group.path:
            control = _row_control(group, form.rows_of(group), parts[len(group.path) :], error)
            return ControlError(control, error.message, path=error.path)
    for length in range(len(parts), 0, -1):
        scalar = SCALAR_PATHS.get(tuple(str(part) for part in parts[:length]))
        if scalar is not None:
            return ControlError(scalar, error.message, path=error.path)
    return ControlError("", error.message, path=error.path)


def _row_control(
    group: RowGroup, rows: Sequence[Row], rest: Sequence[PathPart], error: FieldError
) -> str:
    """The row control of a group's error: the key's or the value's of the row with that key
    (the key's when the message is about the key text), the item's of a list row; else the
    group's own error line."""
    if not rest:
        return group.control
    if not group.paired:
        index = rest[0]
        in_range = isinstance(index, int) and 0 <= index < len(rows)
        return f"{group.control}_{index}" if in_range else group.control
    for index, row in enumerate(rows):
        key = row.key.strip()
        if key == rest[0]:
            about_key = len(rest) == 1 and error.message.startswith(_shown(key))
            return f"{group.control}_{'key' if about_key else 'value'}_{index}"
    return group.control


def _shown(value: str) -> str:
    """``value`` as the manifest rules quote it at the start of a message about it."""
    return repr(value if len(value) <= 60 else value[:57] + "...")


def yaml_errors(lines: FieldLines, errors: Sequence[FieldError]) -> FormErrors:
    """Errors about a manifest typed as YAML, each with the line (in ``lines``, the text read
    once) of the field it names."""
    placed = []
    for error in errors:
        parts = path_parts(error.path) if error.path else None
        line = lines.line_of(parts) if parts is not None else None
        placed.append(ControlError("manifest", error.message, path=error.path, line=line))
    return FormErrors(tuple(placed))


def validation_errors(services: Services, manifest: Mapping[str, Any]) -> tuple[FieldError, ...]:
    """What the job service finds wrong with ``manifest`` (nothing is saved)."""
    try:
        services.jobs.validate(manifest)
    except InvalidInput as invalid:
        return invalid.errors
    return ()
