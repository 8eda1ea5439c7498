"""The resident memory of a subject's process tree while it runs, JVM and Python apart."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

JVM = "jvm"
PYTHON = "python"
OTHER = "other"
KINDS = (JVM, PYTHON, OTHER)
MIB = 1024 * 1024


@dataclass(frozen=True)
class TreeMemory:
    """A subject's memory over its life: each sample's RSS by kind (bytes), and the largest
    VmHWM of any one process of each kind."""

    samples: tuple[Mapping[str, int], ...]
    high_water: Mapping[str, int]

    def peak_mib(self, *kinds: str) -> float:
        """The highest sample of the kinds' processes together, in MiB."""
        return max((sum(s.get(k, 0) for k in kinds) for s in self.samples), default=0) / MIB

    def high_water_mib(self, kind: str) -> float:
        return self.high_water.get(kind, 0) / MIB


def kind_of(name: str, command: Sequence[str]) -> str:
    """JVM, Python or other, from a process's name and command line."""
    program = os.path.basename(command[0]) if command else name
    if name == "java" or program == "java":
        return JVM
    if name.startswith("python") or program.startswith("python"):
        return PYTHON
    return OTHER


def high_water_bytes(status: str) -> int:
    """``VmHWM`` of a ``/proc/<pid>/status`` text, in bytes (0 when absent)."""
    for line in status.splitlines():
        parts = line.split()
        if parts[:1] == ["VmHWM:"] and len(parts) >= 2 and parts[1].isdigit():
            return int(parts[1]) * 1024
    return 0


class MemorySampler:
    """Called with the subject's process at every tick of ``run_subject``'s wait."""

    def __init__(self) -> None:
        self.samples: list[dict[str, int]] = []
        self._watched: dict[int, psutil.Process] = {}
        self._high_water: dict[str, int] = dict.fromkeys(KINDS, 0)

    def __call__(self, process: subprocess.Popen[bytes]) -> None:
        if process.poll() is None:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(process.pid)
                for child in [root, *root.children(recursive=True)]:
                    self._watched.setdefault(child.pid, child)
        rss = dict.fromkeys(KINDS, 0)
        for pid, watched in list(self._watched.items()):
            try:
                command = watched.cmdline()
                if self._unexeced_fork(watched, command):
                    continue
                kind = kind_of(watched.name(), command)
                rss[kind] += watched.memory_info().rss
                peak = high_water_bytes(Path(f"/proc/{pid}/status").read_text())
            except (psutil.Error, OSError):
                del self._watched[pid]
                continue
            self._high_water[kind] = max(self._high_water[kind], peak)
        if any(rss.values()):
            self.samples.append(rss)

    def memory(self) -> TreeMemory:
        return TreeMemory(tuple(self.samples), dict(self._high_water))

    def _unexeced_fork(self, process: psutil.Process, command: list[str]) -> bool:
        try:
            parent = self._watched.get(process.ppid())
            return parent is not None and parent.pid != process.pid and parent.cmdline() == command
        except psutil.Error:
            return False
