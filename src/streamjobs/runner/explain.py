"""A DataFrame's plan as text, so it can be logged or printed instead of only shown."""

from __future__ import annotations

import contextlib
import io

from pyspark.sql import DataFrame


def plan_text(frame: DataFrame) -> str:
    """The extended plan Spark prints for ``frame`` (secrets masked by spark.redaction.regex)."""
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        frame.explain(mode="extended")
    return captured.getvalue()
