"""The outputs of a pipeline run as its queries and checkpoints know them: each output with the
sink it writes to, where the manifest declares it, and the key its query, its checkpoint
sub-directory (``<checkpoint>/<key>``) and its snapshots go by.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamjobs.domain.datasets import DatasetResolver, SparkSink
from streamjobs.domain.manifest import Output, Pipeline


@dataclass(frozen=True)
class PlannedOutput:
    """An output with where it writes and the name its query and checkpoint go by."""

    key: str
    output: Output
    sink: SparkSink
    manifest_path: str


def planned_outputs(pipeline: Pipeline, resolver: DatasetResolver) -> list[PlannedOutput]:
    """Each of ``pipeline``'s outputs with its sink (resolved by ``resolver``) and its key: the
    output's name, or ``<name>-<index>`` when several outputs share that name."""
    names = [output.name for output in pipeline.outputs]
    planned = []
    for index, output in enumerate(pipeline.outputs):
        path = f"spec.pipeline.outputs[{index}]"
        key = output.name if names.count(output.name) == 1 else f"{output.name}-{index}"
        sink = resolver.sink(output, path=path)
        planned.append(PlannedOutput(key=key, output=output, sink=sink, manifest_path=path))
    return planned
