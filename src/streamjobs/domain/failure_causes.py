"""The one line that says why a driver failed, found in the end of its logs.

A failed attempt leaves thousands of log lines, and the reason is one of them: an Ivy
"unresolved dependency", a class missing from the classpath, a Python exception (its traceback
goes to the driver's stdout: spark-submit merges the Python process's stderr into it), Spark's
``AnalysisException``, a Java exception that ended ``main``, spark-submit's own "Error:", or a
file that does not exist. ``failure_cause`` picks the most telling of these, in that order (a
missing class before a Python exception only when that exception is about it), so the
application's ``error`` names the cause and the full trace stays in the log.

Pure: the supervisor reads the logs' tails (bounded) and passes them in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

MAX_CAUSE_LENGTH = 500
"""A cause longer than this is cut (with "…"): it is a summary, the log has the rest."""

_LOG_PREFIX = re.compile(
    r"^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} (?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL) [\w.$]+: "
)
"""log4j's default layout in Spark's console logs: ``26/11/25 10:23:54 ERROR SparkContext: ``."""
_UNRESOLVED = re.compile(r"unresolved dependency: ([^#\s\]]+)#([^;\s\]]+);([^:\s\]]+): ([^,\]]+)")
"""Ivy's problem, as spark-submit's RuntimeException lists them: ``[unresolved dependency:
org.example#name;1.0: not found, download failed: org#other;2.0!other.jar]``."""
_DOWNLOAD_FAILED = re.compile(r"download failed: ([^,\]\s]+)")
_MISSING_CLASS = re.compile(
    r"^(?:Caused by: |: |Exception in thread \"[^\"]*\" )?"
    r"(java\.lang\.(?:NoClassDefFoundError|ClassNotFoundException)): (\S+)"
)
_TRACEBACK = "Traceback (most recent call last):"
_PYTHON_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::\s*(.*))?$")
"""The last line of a traceback: ``KeyError: 'x'``, ``pyspark.errors….AnalysisException: …``."""
_JAVA_MAIN = re.compile(r"^Exception in thread \"[^\"]*\" ([\w.$]+)(?:: (.*))?$")
_SUBMIT_ERROR = re.compile(r"^Error: (.+)$")
_MISSING_FILE = re.compile(
    r"No such file or directory|does not exist|FileNotFoundException|FileNotFoundError"
)
_QUIET_LEVELS = re.compile(r"^\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} (?:TRACE|DEBUG|INFO|WARN) ")
"""Lines logged below ERROR: "Local jar … does not exist, skipping" is a warning, not a cause."""
_PYTHON_PACKAGES = ("pyspark.errors.exceptions.captured.", "pyspark.errors.exceptions.base.")


def failure_cause(*log_tails: str) -> str | None:
    """The cause of a driver's failure found in the ends of its logs (stderr first, then
    stdout); None when none of them says one."""
    raw = [line.rstrip("\r") for tail in log_tails for line in tail.splitlines()]
    lines = [_LOG_PREFIX.sub("", line) for line in raw]
    for finder in _FINDERS:
        cause = finder(lines)
        if cause:
            return _bounded(cause)
    missing = _missing_file([line for line in raw if not _QUIET_LEVELS.match(line)])
    return _bounded(_LOG_PREFIX.sub("", missing)) if missing else None


def _unresolved_dependency(lines: Sequence[str]) -> str | None:
    for line in lines:
        found = _UNRESOLVED.search(line)
        if found:
            group, artifact, version, why = found.groups()
            return f"unresolved dependency {group}:{artifact}:{version}: {why.strip()}"
    for line in lines:
        found = _DOWNLOAD_FAILED.search(line)
        if found:
            return f"download failed: {found.group(1)}"
    return None


def _missing_class_or_python_exception(lines: Sequence[str]) -> str | None:
    """A class missing from the classpath, unless the Python exception that ended the driver is
    about something else (Spark logs optional classes it did not find on the way)."""
    python = _python_exception(lines)
    for line in lines:
        found = _MISSING_CLASS.match(line.strip())
        if found:
            kind, name = found.groups()
            dotted = name.replace("/", ".")
            if python is None or name in python or dotted in python:
                return f"{kind}: {dotted} (a jar the job needs is not on its classpath)"
    return python


def _python_exception(lines: Sequence[str]) -> str | None:
    starts = [index for index, line in enumerate(lines) if line.strip() == _TRACEBACK]
    if not starts:
        return None
    tail = lines[starts[-1] + 1 :]
    for index, line in enumerate(tail):
        if not line.strip() or line.startswith((" ", "\t")):
            continue  # the frames: '  File "…", line 3, in <module>' and their source lines
        found = _PYTHON_EXCEPTION.match(line.strip())
        if found is None:
            return None
        name, message = found.groups()
        if name.endswith("Py4JJavaError") and index + 1 < len(tail):
            java = tail[index + 1].strip().removeprefix(": ")  # ': java.lang.X: why'
            return java or name
        for package in _PYTHON_PACKAGES:
            name = name.removeprefix(package)
        return f"{name}: {message.strip()}" if message and message.strip() else name
    return None


def _java_main_exception(lines: Sequence[str]) -> str | None:
    for line in lines:
        found = _JAVA_MAIN.match(line.strip())
        if found:
            name, message = found.groups()
            return f"{name}: {message.strip()}" if message else name
    return None


def _submit_error(lines: Sequence[str]) -> str | None:
    for line in lines:
        found = _SUBMIT_ERROR.match(line.strip())
        if found:
            return found.group(1).strip()
    return None


def _missing_file(lines: Sequence[str]) -> str | None:
    for line in reversed(lines):
        if _MISSING_FILE.search(line):
            return line.strip()
    return None


_FINDERS: tuple[Callable[[Sequence[str]], str | None], ...] = (
    _unresolved_dependency,
    _missing_class_or_python_exception,
    _java_main_exception,
    _submit_error,
)


def _bounded(cause: str) -> str:
    one_line = " ".join(_printable(cause.split()))
    if len(one_line) <= MAX_CAUSE_LENGTH:
        return one_line
    return one_line[: MAX_CAUSE_LENGTH - 1].rstrip() + "…"


def _printable(words: Iterable[str]) -> list[str]:
    return ["".join(c for c in word if c.isprintable()) for word in words]
