"""The task CPU time of one Spark application, summed from its event log (figure 1's records per
task-CPU-second: less sensitive than wall time to a busy machine)."""

from __future__ import annotations

import json
from pathlib import Path


def task_cpu_seconds(directory: Path) -> float:
    """Executor CPU time of every task in the event log files under ``directory``."""
    nanos = 0
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        if path.name.startswith("."):
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            event = json.loads(line)
            if event.get("Event") == "SparkListenerTaskEnd":
                nanos += (event.get("Task Metrics") or {}).get("Executor CPU Time", 0)
    return nanos / 1e9
