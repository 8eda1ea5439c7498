"""A DataFrame's plan as text, so it can be logged or printed, with secret values masked.

A streaming DataFrame cannot be optimised until its query starts, so its plan text stops at the
analysed logical plan. Spark masks options by name (``spark.sql.redaction.options.regex``), but
not everywhere a streaming relation prints its options; the secret values themselves are masked
here as well.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterable

from pyspark.sql import DataFrame

from streamjobs.domain.datasets import REDACTED

OPTIMIZED_SECTION = "== Optimized Logical Plan =="


def plan_text(frame: DataFrame, *, secrets: Iterable[str] = ()) -> str:
    """The plan Spark prints for ``frame`` (extended), without any of the ``secrets``."""
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        frame.explain(mode="extended")
    text = captured.getvalue()
    if frame.isStreaming:
        text = text.split(OPTIMIZED_SECTION)[0].rstrip() + "\n"
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text
