"""Rules that tie manifest fields together, checked once the models have parsed.

A field on its own can be well formed and still wrong next to another one: a ``mainClass`` on a
python application, a step that reads a view nobody defines, a kafka sink under EXACTLY_ONCE. Each
rule here yields a ``FieldError`` at the path of the field to change, saying which rule it breaks
and, where there is one, what to do instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from streamjobs.domain.alerts import alert_errors
from streamjobs.domain.batch_rules import (
    KEY_COLUMNS_OPTION,
    batch_mode_errors,
    save_mode_errors,
)
from streamjobs.domain.deployment_rules import unsupported_field_errors
from streamjobs.domain.env_rules import env_errors
from streamjobs.domain.errors import FieldError
from streamjobs.domain.manifest import (
    ApplicationSpec,
    ApplicationType,
    Deployment,
    Guarantee,
    Input,
    InputFormat,
    Instance,
    JobSpec,
    Output,
    OutputFormat,
    Pipeline,
    Streaming,
    StreamingJob,
    TriggerMode,
    View,
)
from streamjobs.domain.pipeline_support import support_errors
from streamjobs.domain.spark_policy import spark_conf_errors
from streamjobs.domain.spark_sql import (
    CORRUPT_RECORD_COLUMN,
    InvalidSqlError,
    column_names,
    runs_programs,
    views_read,
)

SPARK_INTERNAL = "spark-internal"

_TIMED_TRIGGERS = {TriggerMode.PROCESSING_TIME, TriggerMode.CONTINUOUS, TriggerMode.REAL_TIME}
_DURATION_REQUIRED = {TriggerMode.CONTINUOUS, TriggerMode.REAL_TIME}
"""ProcessingTime may omit its duration: micro-batches then run back to back, as in Spark."""
_MAIN_FILE_EXAMPLES = {
    ApplicationType.PYTHON: "local:///app/job.py",
    ApplicationType.JVM: "file:///opt/jobs/app.jar",
}
_NO_LOCATION_BECAUSE: dict[str, str] = {
    InputFormat.RATE: "it generates its own rows",
    OutputFormat.CONSOLE: "it prints to the driver's log",
}
_SINKS_WITHOUT_EXACTLY_ONCE = {OutputFormat.KAFKA, OutputFormat.CONSOLE}


class _DefinedView(NamedTuple):
    name: str
    path: str


def broken_rules(job: StreamingJob, *, checkpoint_root: str | None) -> list[FieldError]:
    """Every cross-field rule ``job`` breaks; ``checkpoint_root`` None means none can be derived."""
    spec = job.spec
    configuration = spec.configuration
    errors = [
        *_application_errors(spec),
        *_instance_errors(spec.instance),
        *unsupported_field_errors(spec),
        *env_errors(configuration.env, configuration.env_secrets),
        *spark_conf_errors(configuration),
        *alert_errors(
            spec.notifications,
            spec.health,
            is_program=spec.application.type is not ApplicationType.PIPELINE,
        ),
    ]
    if spec.pipeline is not None:
        guarantee = spec.processing.guarantee or Guarantee.AT_LEAST_ONCE
        errors += _pipeline_errors(spec.pipeline)
        errors += support_errors(spec.pipeline, guarantee, spec.configuration.spark_conf)
        errors += batch_mode_errors(spec.pipeline, guarantee)
        errors += save_mode_errors(spec.pipeline)
        if guarantee is Guarantee.EXACTLY_ONCE:
            errors += _exactly_once_errors(spec.pipeline, checkpoint_root)
    return errors


def _application_errors(spec: JobSpec) -> Iterator[FieldError]:
    yield from _main_class_errors(spec.application)
    yield from _main_file_errors(spec.application)
    kind = spec.application.type
    if kind is ApplicationType.PIPELINE and spec.pipeline is None:
        yield FieldError(
            "spec.pipeline",
            "a pipeline application needs a pipeline block (streaming, inputs, steps, outputs)",
        )
    if kind is not ApplicationType.PIPELINE and spec.pipeline is not None:
        yield FieldError(
            "spec.pipeline",
            f"only pipeline applications have a pipeline block; "
            f"a {kind} application runs its mainApplicationFile",
        )


def _main_class_errors(application: ApplicationSpec) -> Iterator[FieldError]:
    path = "spec.application.mainClass"
    is_jvm = application.type is ApplicationType.JVM
    if is_jvm and application.main_class is None:
        yield FieldError(
            path,
            "a jvm application needs mainClass: the class with its main method, "
            "e.g. com.example.orders.OrdersJob",
        )
    if not is_jvm and application.main_class is not None:
        yield FieldError(path, f"mainClass is for jvm applications only, not {application.type}")


def _main_file_errors(application: ApplicationSpec) -> Iterator[FieldError]:
    path = "spec.application.mainApplicationFile"
    kind = application.type
    main_file = application.main_application_file
    if kind is ApplicationType.PIPELINE:
        if main_file is not None:
            yield FieldError(
                path,
                "a pipeline application has no mainApplicationFile: "
                "streamjobs runs its pipeline block",
            )
    elif main_file is None:
        yield FieldError(
            path,
            f"a {kind} application needs mainApplicationFile, e.g. {_MAIN_FILE_EXAMPLES[kind]}",
        )
    elif main_file == SPARK_INTERNAL and kind is not ApplicationType.JVM:
        yield FieldError(path, f"{SPARK_INTERNAL} is for jvm applications only, not {kind}")


def _instance_errors(instance: Instance) -> Iterator[FieldError]:
    if instance.deployment is Deployment.STANDARD:
        return
    standard_only = {
        "executor": instance.executor,
        "executors": instance.executors,
        "dynamic": instance.dynamic,
    }
    for key, value in standard_only.items():
        if value is not None:
            yield FieldError(
                f"spec.instance.{key}",
                f"{key} is for deployment standard only; singleNode runs the whole job in its "
                f"driver (remove {key}, or set deployment: standard)",
            )


def _pipeline_errors(pipeline: Pipeline) -> Iterator[FieldError]:
    yield from _trigger_errors(pipeline.streaming)
    for index, source in enumerate(pipeline.inputs):
        yield from _input_errors(source, f"spec.pipeline.inputs[{index}]")
    yield from _view_errors(pipeline)
    yield from _output_errors(pipeline)
    yield from _bad_records_errors(pipeline)


def _trigger_errors(streaming: Streaming) -> Iterator[FieldError]:
    path = "spec.pipeline.streaming.triggerDuration"
    mode = streaming.trigger_mode
    is_timed = mode in _TIMED_TRIGGERS
    if mode in _DURATION_REQUIRED and streaming.trigger_duration is None:
        yield FieldError(path, f"triggerMode {mode} needs a triggerDuration, e.g. '10 seconds'")
    if not is_timed and streaming.trigger_duration is not None:
        yield FieldError(path, f"triggerMode {mode} takes no triggerDuration; remove it")


def _input_errors(source: Input, path: str) -> Iterator[FieldError]:
    yield from _location_errors(
        path, f"a {source.format} input", source.format, source.dataset, source.path
    )
    schema_need = _schema_need(source)
    if schema_need and source.schema_ddl is None:
        yield FieldError(
            f"{path}.schema",
            f"{schema_need}; give its columns in Spark DDL, e.g. 'id BIGINT, ts TIMESTAMP'",
        )
    if source.format is InputFormat.KAFKA_JSON and source.schema_ddl is not None:
        names = {name.casefold() for name in column_names(source.schema_ddl)}
        if CORRUPT_RECORD_COLUMN in names:
            yield FieldError(
                f"{path}.schema",
                f"column '{CORRUPT_RECORD_COLUMN}' is where a kafkajson input puts the values "
                "it cannot parse; give the column another name",
            )
    if source.bad_records is not None and source.format is not InputFormat.KAFKA_JSON:
        yield FieldError(
            f"{path}.badRecords", f"badRecords is for kafkajson inputs only, not {source.format}"
        )


def _schema_need(source: Input) -> str | None:
    """Why ``source`` needs a schema, or None if Spark can do without one."""
    if source.format is InputFormat.KAFKA_JSON:
        return "a kafkajson input needs a schema to parse the JSON in its values"
    if source.is_stream and source.format in {InputFormat.JSON, InputFormat.CSV}:
        return (
            f"a streaming {source.format} input needs a schema: "
            "Spark cannot infer the columns of a stream"
        )
    return None


def _location_errors(
    path: str, described: str, data_format: str, dataset: str | None, location: str | None
) -> Iterator[FieldError]:
    """Exactly one of ``dataset`` and ``path``, or neither for a format that needs no place."""
    reason = _NO_LOCATION_BECAUSE.get(data_format)
    if reason is not None:
        for key, value in {"dataset": dataset, "path": location}.items():
            if value is not None:
                yield FieldError(f"{path}.{key}", f"{described} takes no {key}: {reason}")
    elif dataset is None and location is None:
        yield FieldError(
            f"{path}.dataset",
            f"{described} needs a dataset (<connection>:<topic, path or table>) or a path",
        )
    elif dataset is not None and location is not None:
        yield FieldError(f"{path}.path", f"{described} takes a dataset or a path, not both")


def _step_views(pipeline: Pipeline) -> Iterator[tuple[str, View]]:
    """Every step view with its path, in the order the pipeline runs them."""
    for step_index, step in enumerate(pipeline.steps):
        for view_index, view in enumerate(step.sequence):
            yield f"spec.pipeline.steps[{step_index}].sequence[{view_index}]", view


def _view_errors(pipeline: Pipeline) -> Iterator[FieldError]:
    """View names are unique, and each step reads only views defined before it."""
    defined: dict[str, _DefinedView] = {}
    for index, source in enumerate(pipeline.inputs):
        yield from _define(defined, source.name, f"spec.pipeline.inputs[{index}].name")
    for path, view in _step_views(pipeline):
        yield from _read_errors(view, f"{path}.sql", defined)
        yield from _define(defined, view.name, f"{path}.name")


def _define(defined: dict[str, _DefinedView], name: str, path: str) -> Iterator[FieldError]:
    earlier = defined.get(name.casefold())
    if earlier is not None:
        yield FieldError(
            path,
            f"view '{name}' is already defined at {earlier.path} (view names ignore case); "
            "every input and step needs its own name",
        )
    else:
        defined[name.casefold()] = _DefinedView(name, path)


def _read_errors(view: View, path: str, defined: dict[str, _DefinedView]) -> Iterator[FieldError]:
    try:
        names_read = views_read(view.sql)
    except InvalidSqlError as problem:
        yield FieldError(path, f"step '{view.name}' {problem}")
        return
    if runs_programs(view.sql):
        yield FieldError(
            path,
            f"step '{view.name}' runs a program of the machine (SELECT TRANSFORM ... USING); "
            "a step is a query over views: write the logic in SQL, or run your own code as a "
            "python or jvm application",
        )
    known = ", ".join(definition.name for definition in defined.values())
    for name in names_read:
        if name.casefold() not in defined:
            yield FieldError(
                path,
                f"step '{view.name}' reads view '{name}', which no input or earlier step "
                f"defines; defined so far: {known}",
            )


def _view_names(pipeline: Pipeline) -> list[str]:
    return [source.name for source in pipeline.inputs] + [
        view.name for _, view in _step_views(pipeline)
    ]


def _output_errors(pipeline: Pipeline) -> Iterator[FieldError]:
    view_names = _view_names(pipeline)
    writable = {name.casefold() for name in view_names} | {
        source.bad_records.output.casefold()
        for source in pipeline.inputs
        if source.bad_records is not None
    }
    for index, output in enumerate(pipeline.outputs):
        path = f"spec.pipeline.outputs[{index}]"
        yield from _location_errors(
            path, f"a {output.format} output", output.format, output.dataset, output.path
        )
        if output.name.casefold() not in writable:
            yield FieldError(
                f"{path}.name",
                f"output '{output.name}' names no view; an output writes the input or step of "
                f"its name, one of: {', '.join(view_names)}",
            )
        yield from _key_columns_errors(output, path)


def _key_columns_errors(output: Output, path: str) -> Iterator[FieldError]:
    if KEY_COLUMNS_OPTION not in output.options:
        return
    columns = output.options[KEY_COLUMNS_OPTION]
    if (
        not isinstance(columns, list)
        or not columns
        or not all(isinstance(column, str) and column for column in columns)
    ):
        yield FieldError(
            f"{path}.options.{KEY_COLUMNS_OPTION}",
            f"{KEY_COLUMNS_OPTION} must be a list of column names, e.g. [order_id]",
        )


def _bad_records_errors(pipeline: Pipeline) -> Iterator[FieldError]:
    output_names = [output.name for output in pipeline.outputs]
    known = {name.casefold() for name in output_names}
    for index, source in enumerate(pipeline.inputs):
        if source.bad_records is not None and source.bad_records.output.casefold() not in known:
            yield FieldError(
                f"spec.pipeline.inputs[{index}].badRecords.output",
                f"'{source.bad_records.output}' names no output; outputs: "
                f"{', '.join(output_names)}",
            )


def _exactly_once_errors(pipeline: Pipeline, checkpoint_root: str | None) -> Iterator[FieldError]:
    streaming = pipeline.streaming
    if streaming.checkpoint_location is None and checkpoint_root is None:
        yield FieldError(
            "spec.pipeline.streaming.checkpointLocation",
            "EXACTLY_ONCE needs a checkpoint location: set one here, or validate with a "
            "checkpoint root to derive it from",
        )
    if streaming.trigger_mode is TriggerMode.CONTINUOUS:
        yield FieldError(
            "spec.pipeline.streaming.triggerMode",
            "Continuous cannot give EXACTLY_ONCE (continuous processing is at-least-once); "
            "use ProcessingTime or AvailableNow, or AT_LEAST_ONCE",
        )
    for index, output in enumerate(pipeline.outputs):
        yield from _exactly_once_sink_errors(output, f"spec.pipeline.outputs[{index}]")


def _exactly_once_sink_errors(output: Output, path: str) -> Iterator[FieldError]:
    if output.format in _SINKS_WITHOUT_EXACTLY_ONCE:
        yield FieldError(
            f"{path}.format",
            f"'{output.format}' cannot give EXACTLY_ONCE; use AT_LEAST_ONCE or an idempotent "
            "sink (parquet, delta, iceberg, jdbc with keys)",
        )
    elif output.format is OutputFormat.JDBC and KEY_COLUMNS_OPTION not in output.options:
        yield FieldError(
            f"{path}.options.{KEY_COLUMNS_OPTION}",
            f"'jdbc' without {KEY_COLUMNS_OPTION} cannot give EXACTLY_ONCE: a replayed batch "
            f"would insert its rows again; set {KEY_COLUMNS_OPTION} to upsert by key, "
            "or use AT_LEAST_ONCE",
        )
