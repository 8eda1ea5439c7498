"""The queries a pipeline runs, and what each reads: what an upgrade compares query by query.

Outside ``forEachBatchMode`` each output is written by a streaming query of its own, named after
the output and checkpointing in ``<checkpoint>/<output key>``; in it, one ``foreachBatch`` query
writes every output. A query's streaming sources are the streaming inputs its output's view reads,
directly or through the steps' views.
"""

from __future__ import annotations

from streamjobs.domain.manifest import Pipeline
from streamjobs.domain.spark_sql import InvalidSqlError, views_read

FOR_EACH_BATCH_QUERY = "foreachBatch"
"""The one query of a ``forEachBatchMode`` pipeline, and its checkpoint directory."""


def output_keys(pipeline: Pipeline) -> list[str]:
    """Each output's query name and checkpoint directory, in order: its name, or
    ``<name>-<index>`` for a name several outputs share (as ``runner.pipeline`` names them)."""
    names = [output.name for output in pipeline.outputs]
    return [
        name if names.count(name) == 1 else f"{name}-{index}" for index, name in enumerate(names)
    ]


def streaming_inputs_read(pipeline: Pipeline, view: str) -> set[str]:
    """The streaming inputs (by name, case folded) that ``view`` reads, through the steps that
    define the views it reads; every streaming input when a step's SQL cannot be parsed."""
    streams = {item.name.casefold() for item in pipeline.inputs if item.is_stream}
    definitions = {
        defined.name.casefold(): defined.sql for step in pipeline.steps for defined in step.sequence
    }
    found: set[str] = set()
    seen: set[str] = set()
    waiting = [view.casefold()]
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in streams:
            found.add(name)
        elif name in definitions:
            try:
                waiting += [read.casefold() for read in views_read(definitions[name])]
            except InvalidSqlError:
                return streams
    return found
