"""Every place a job reads or writes, with the manifest field that names it, and the rules they
must keep.

A job reaches data through its inputs' and outputs' ``path`` or ``dataset`` (a dataset lies under
its connection's ``root`` or ``warehouse``), its checkpoint, and paths its steps' SQL reads
directly (``SELECT value FROM text.`/data/x```); it reaches code through its application file
and ``spec.dependencies``. ``job_locations`` lists them all; ``location_errors`` refuses every
data location outside the bundle's data roots, ``/`` itself, and anything (code included) inside
or around the server's own directory. A checkpoint the server derives is its own and is not
checked; it is still claimed, so that no other job may use it (``location_claims``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from streamjobs.domain.connections import Connection, ConnectionType, split_dataset
from streamjobs.domain.errors import FieldError
from streamjobs.domain.locations import (
    LocationError,
    is_filesystem_root,
    is_within,
    normalized_uri,
    overlaps,
)
from streamjobs.domain.manifest import (
    ApplicationType,
    InputFormat,
    OutputFormat,
    StreamingJob,
)
from streamjobs.domain.manifest_rules import SPARK_INTERNAL
from streamjobs.domain.spark_sql import InvalidSqlError, paths_read
from streamjobs.domain.spec import derived_checkpoint_location

SET_DATA_ROOTS = "streamjobs set data-roots"
"""The command those who manage bundles give a bundle data roots with."""

_WITHOUT_LOCATION = frozenset(
    {
        InputFormat.KAFKA,
        InputFormat.KAFKA_JSON,
        InputFormat.RATE,
        OutputFormat.KAFKA,
        OutputFormat.JDBC,
        OutputFormat.CONSOLE,
    }
)
"""Formats that read or write no file system location (topics, tables of a database, nothing)."""
_SLASH_IN_BRACES = re.compile(r"\{[^}]*/")


class Access(StrEnum):
    """What a job does at a location."""

    READ = "read"
    WRITE = "write"
    CHECKPOINT = "checkpoint"
    CODE = "code"
    """A file of the job's own program, read-only."""


@dataclass(frozen=True)
class JobLocation:
    """One place a job reaches, as the manifest names it."""

    field: str
    """The manifest path of the field naming it."""
    location: str | None
    """A path or URI as resolved (a dataset joined to its connection's root); None for a path a
    query computes, which cannot be known before it runs."""
    access: Access
    described: str
    """What it is, for messages: ``output 'events' path``, ``step 'raw' reads text.`/x```."""
    server_owned: bool = False
    """Derived by the server (a checkpoint the manifest does not set): not the job's choice."""
    via: str | None = None
    """How a dataset got here, for messages: ``connection 'files' has root file:///data``."""


def job_locations(
    job: StreamingJob, connections: Mapping[str, Connection], *, checkpoint_root: str | None
) -> list[JobLocation]:
    """Every location ``job`` reads or writes: inputs, outputs, checkpoint, paths its steps read,
    then its own files. Datasets of connections not in
    ``connections`` (which other rules report) and of formats without a location are left out;
    ``checkpoint_root`` None leaves out a checkpoint the server would derive."""
    return [
        *_pipeline_locations(job, connections, checkpoint_root=checkpoint_root),
        *_code_locations(job),
    ]


def location_errors(
    locations: Sequence[JobLocation],
    *,
    bundle: str,
    roots: Sequence[str] | None,
    protected_roots: Sequence[str],
) -> list[FieldError]:
    """A ``FieldError`` for each location that breaks a rule: data (not code, not what the server
    derives) must lie under one of the bundle's data ``roots`` and not be ``/``; nothing the job
    chooses may lie inside or hold one of ``protected_roots`` (the server's home)."""
    errors = []
    for location in locations:
        if location.server_owned:
            continue
        problem = _location_problem(location, bundle, roots or (), protected_roots)
        if problem is not None:
            via = f" ({location.via})" if location.via else ""
            errors.append(FieldError(location.field, f"{location.described} {problem}{via}"))
    return errors


def _pipeline_locations(
    job: StreamingJob, connections: Mapping[str, Connection], *, checkpoint_root: str | None
) -> Iterator[JobLocation]:
    pipeline = job.spec.pipeline
    if pipeline is None:
        return
    for index, source in enumerate(pipeline.inputs):
        yield from _data_location(
            f"spec.pipeline.inputs[{index}]",
            f"input {source.name!r}",
            source.format,
            source.dataset,
            source.path,
            connections,
            Access.READ,
        )
    for index, sink in enumerate(pipeline.outputs):
        yield from _data_location(
            f"spec.pipeline.outputs[{index}]",
            f"output {sink.name!r}",
            sink.format,
            sink.dataset,
            sink.path,
            connections,
            Access.WRITE,
        )
    checkpoint = pipeline.streaming.checkpoint_location
    field = "spec.pipeline.streaming.checkpointLocation"
    if checkpoint is not None:
        yield JobLocation(field, checkpoint, Access.CHECKPOINT, "checkpointLocation")
    elif checkpoint_root is not None:
        derived = derived_checkpoint_location(job, checkpoint_root)
        yield JobLocation(
            field, derived, Access.CHECKPOINT, "derived checkpoint location", server_owned=True
        )
    for step_index, step in enumerate(pipeline.steps):
        for view_index, view in enumerate(step.sequence):
            field = f"spec.pipeline.steps[{step_index}].sequence[{view_index}].sql"
            try:
                reads = paths_read(view.sql)
            except InvalidSqlError:
                continue  # the view rules report a query that does not parse
            for read in reads:
                yield JobLocation(
                    field, read.path, Access.READ, f"step {view.name!r} reads {read.shown}:"
                )


def _data_location(
    field: str,
    described: str,
    data_format: str,
    dataset: str | None,
    path: str | None,
    connections: Mapping[str, Connection],
    access: Access,
) -> Iterator[JobLocation]:
    if data_format in _WITHOUT_LOCATION:
        return
    if path is not None:
        yield JobLocation(f"{field}.path", path, access, f"{described} path")
    elif dataset is not None:
        name, rest = split_dataset(dataset)
        connection = connections.get(name)
        if connection is None:
            return
        resolved = dataset_location(connection, data_format, rest)
        if resolved is not None:
            location, via = resolved
            yield JobLocation(
                f"{field}.dataset", location, access, f"{described} dataset {dataset}", via=via
            )


def dataset_location(connection: Connection, data_format: str, rest: str) -> tuple[str, str] | None:
    """Where ``<connection>:<rest>`` lies, read or written as ``data_format``, and how it got
    there (for messages); None for connections without a file system location (kafka, jdbc).
    An Iceberg table ``db.t`` lies at ``<warehouse>/db/t`` (a Hadoop catalog's layout)."""
    spec = connection.spec
    if spec.type is ConnectionType.LAKEHOUSE and spec.warehouse is not None:
        via = f"connection {connection.name!r} has warehouse {spec.warehouse}"
        if data_format == InputFormat.ICEBERG:
            parts = [part.strip("`") for part in rest.split(".")]
            return _joined(spec.warehouse, "/".join(parts)), via
        return _joined(spec.warehouse, rest), via
    if spec.type is ConnectionType.FILES and spec.root is not None:
        return _joined(spec.root, rest), f"connection {connection.name!r} has root {spec.root}"
    return None


def _code_locations(job: StreamingJob) -> Iterator[JobLocation]:
    application = job.spec.application
    main_file = application.main_application_file
    if application.type is not ApplicationType.PIPELINE and main_file not in {None, SPARK_INTERNAL}:
        yield JobLocation(
            "spec.application.mainApplicationFile", main_file, Access.CODE, "mainApplicationFile"
        )
    dependencies = job.spec.dependencies
    for key, files in (
        ("jars", dependencies.jars),
        ("files", dependencies.files),
        ("pyFiles", dependencies.py_files),
    ):
        for index, location in enumerate(files):
            yield JobLocation(
                f"spec.dependencies.{key}[{index}]", location, Access.CODE, f"dependency {key}"
            )


def _location_problem(
    location: JobLocation,
    bundle: str,
    roots: Sequence[str],
    protected_roots: Sequence[str],
) -> str | None:
    """Why ``location`` may not be used, or None."""
    is_code = location.access is Access.CODE
    if location.location is None:
        return (
            "the path is computed by the query, so it cannot be checked against the bundle's "
            "data roots; name the path as a plain string"
        )
    try:
        uri = normalized_uri(location.location)
    except LocationError as error:
        return f"cannot be used: {error}"
    if not is_code and is_filesystem_root(uri):
        return "is / itself, the whole file system; name a directory under the bundle's data roots"
    for protected in protected_roots:
        if overlaps(uri, protected):
            where = "lies inside" if is_within(uri, protected) else "holds"
            return (
                f"{uri} {where} the server's own directory (STREAMJOBS_HOME), which jobs may "
                "not reach"
            )
    if is_code:
        return None
    if _SLASH_IN_BRACES.search(location.location):
        return (
            f"{location.location!r} holds a glob with '/' inside braces, which Spark expands "
            "into paths that cannot be checked; name each path apart"
        )
    if not roots:
        return (
            f"{uri} cannot be used: resource bundle {bundle!r} has no data roots, so its jobs "
            f"may read and write nowhere; those who manage bundles add one with "
            f"`{SET_DATA_ROOTS} {bundle} <uri>`"
        )
    if not any(is_within(uri, root) for root in roots):
        return (
            f"{uri} is outside the data roots of resource bundle {bundle!r} "
            f"({', '.join(roots)}); a job's paths, datasets and checkpoints must lie under one"
        )
    return None


def _joined(root: str, rest: str) -> str:
    return root.rstrip("/") + "/" + rest.lstrip("/")


def foreign_code_errors(
    locations: Sequence[JobLocation], *, bundle: str, roots_of_others: Mapping[str, Sequence[str]]
) -> list[FieldError]:
    """A job's own files (program, jars, files, pyFiles) may lie anywhere its bundle's validation
    allows but in another bundle's data roots: bound into its sandbox, they would hand it that
    bundle's data. The other bundle is not named (the author may not see it)."""
    errors = []
    for location in locations:
        if location.access is not Access.CODE or location.location is None:
            continue
        try:
            uri = normalized_uri(location.location)
        except LocationError:
            continue
        for other, roots in roots_of_others.items():
            if other != bundle and any(is_within(uri, root) for root in roots):
                errors.append(
                    FieldError(
                        location.field,
                        f"{location.described} {uri} lies in another bundle's data roots; "
                        f"a job's files come from its own bundle's roots ({bundle!r}) or from "
                        "outside every bundle's",
                    )
                )
                break
    return errors
