"""The directory of one run of a streaming query: its manifest, output and checkpoint."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunDirectory:
    """Where one run keeps its manifest, output, checkpoint and process output."""

    directory: Path

    @property
    def manifest(self) -> Path:
        return self.directory / "job.yaml"

    @property
    def output(self) -> Path:
        return self.directory / "output"

    @property
    def checkpoint(self) -> Path:
        return self.directory / "checkpoint"
