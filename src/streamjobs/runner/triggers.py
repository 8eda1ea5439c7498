"""The manifest's trigger on a ``DataStreamWriter``, including Spark 4.1's real-time trigger."""

from __future__ import annotations

from pyspark.sql.streaming import DataStreamWriter

from streamjobs.domain.manifest import Streaming, TriggerMode


def with_trigger(writer: DataStreamWriter, streaming: Streaming) -> DataStreamWriter:
    """``writer`` set to trigger as ``streaming`` declares."""
    mode, duration = streaming.trigger_mode, streaming.trigger_duration
    if mode is TriggerMode.PROCESSING_TIME:
        return writer.trigger(processingTime=duration) if duration else writer
    if mode is TriggerMode.ONCE:
        return writer.trigger(once=True)
    if mode is TriggerMode.AVAILABLE_NOW:
        return writer.trigger(availableNow=True)
    if mode is TriggerMode.CONTINUOUS:
        assert duration is not None
        return writer.trigger(continuous=duration)
    assert duration is not None
    return with_real_time_trigger(writer, duration)


def with_real_time_trigger(writer: DataStreamWriter, duration: str) -> DataStreamWriter:
    """Spark 4.1's ``Trigger.RealTime(duration)``, which pyspark's ``trigger()`` cannot name yet.

    The JVM writer behind the Python one takes it directly.
    """
    jvm = writer._spark.sparkContext._jvm
    assert jvm is not None
    trigger = jvm.org.apache.spark.sql.streaming.Trigger.RealTime(duration)
    writer._jwrite = writer._jwrite.trigger(trigger)
    return writer


def is_finite(streaming: Streaming) -> bool:
    """Whether the queries end by themselves once the available data is processed."""
    return streaming.trigger_mode in (TriggerMode.ONCE, TriggerMode.AVAILABLE_NOW)
