"""Small pipeline manifests for the Spark tests."""

from __future__ import annotations

from typing import Any


def pipeline_job(
    name: str,
    *,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    steps: list[list[tuple[str, str]]] = (),  # type: ignore[assignment]
    trigger: dict[str, Any] | None = None,
    guarantee: str = "AT_LEAST_ONCE",
    **streaming: Any,
) -> dict[str, Any]:
    """A pipeline job manifest; ``steps`` are lists of (view, sql) pairs."""
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "StreamingJob",
        "metadata": {"name": name},
        "spec": {
            "application": {"type": "pipeline"},
            "pipeline": {
                "logLevel": "ERROR",
                "streaming": {**(trigger or {"triggerMode": "AvailableNow"}), **streaming},
                "inputs": inputs,
                "steps": [
                    {"sequence": [{"name": view, "sql": sql} for view, sql in step]}
                    for step in steps
                ],
                "outputs": outputs,
            },
            "processing": {"guarantee": guarantee},
        },
    }


def connection(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": "Connection",
        "metadata": {"name": name},
        "spec": spec,
    }
