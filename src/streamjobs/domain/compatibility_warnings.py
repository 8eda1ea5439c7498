"""The changes an upgrade may make on one checkpoint that are still worth knowing, for the static
compatibility rules (``domain.compatibility``): outputs that come in forEachBatchMode, a switch
between continuous processing and micro-batches, and settings Spark records in a checkpoint when
it starts (the state store, the number of shuffle partitions) and keeps from then on.
"""

from __future__ import annotations

from streamjobs.domain.compatibility_findings import StaticReview
from streamjobs.domain.manifest import Pipeline, StreamingJob, TriggerMode
from streamjobs.domain.pipeline_queries import output_keys

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"


def batch_output_warnings(old: Pipeline, new: Pipeline, found: StaticReview) -> None:
    """In forEachBatchMode every output is a batch write of the one query: any may come, go or
    change sink (Spark's foreach sink), from the next micro-batch on."""
    old_keys = set(output_keys(old))
    for index, key in enumerate(output_keys(new)):
        if key not in old_keys:
            found.warn(
                f"spec.pipeline.outputs[{index}]",
                f"output {key!r} is new: it receives the micro-batches after the upgrade, not "
                "what the job read before",
            )


def trigger_warnings(old: Pipeline, new: Pipeline, found: StaticReview) -> None:
    """Between continuous processing and micro-batches Spark does not promise a checkpoint
    carries over."""
    continuous = TriggerMode.CONTINUOUS
    old_mode, new_mode = old.streaming.trigger_mode, new.streaming.trigger_mode
    if old_mode != new_mode and continuous in (old_mode, new_mode):
        found.warn(
            "spec.pipeline.streaming.triggerMode",
            f"changed from {old_mode} to {new_mode}: continuous processing and micro-batches "
            "record their progress differently; Spark does not promise that one goes on from "
            "the other's checkpoint",
        )


def processing_warnings(old: StreamingJob, new: StreamingJob, found: StaticReview) -> None:
    """Settings Spark records in a checkpoint when it starts, and keeps from then on."""
    old_store, new_store = old.spec.processing.state_store, new.spec.processing.state_store
    if old_store != new_store:
        found.warn(
            "spec.processing.stateStore",
            f"changed from {old_store} to {new_store}, but Spark keeps the state store a "
            f"checkpoint was started with: the upgraded queries go on with {old_store}; the "
            "change takes effect on a fresh checkpoint (--mode stateless)",
        )
    old_partitions = old.spec.configuration.spark_conf.get(SHUFFLE_PARTITIONS)
    new_partitions = new.spec.configuration.spark_conf.get(SHUFFLE_PARTITIONS)
    if old_partitions != new_partitions:
        found.warn(
            f'spec.configuration.sparkConf["{SHUFFLE_PARTITIONS}"]',
            "Spark keeps the number of state partitions a checkpoint was started with: the "
            "change takes effect on a fresh checkpoint (--mode stateless)",
        )
