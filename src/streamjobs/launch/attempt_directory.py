"""The attempt directory: the files a driver's attempt is started with and leaves behind.

The launchers make one directory per attempt; the command line (``command``) names these files,
the launchers write them before the driver starts (``attempt_files``, ``private_files``), the
wrapper records the exit code in one, and the supervisor reads the driver's logs from it. The
files that hold secrets (``private_files``) are for the server's user only, and are removed
once the attempt has ended (``attempt_cleanup``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from streamjobs.domain.manifest import StreamingJob
from streamjobs.launch.base import AttemptSpec

MANIFEST_FILE = "job.yaml"
CONNECTIONS_FILE = "connections.yaml"
REPORT_TOKEN_FILE = "report-token"
STOP_FILE = "stop"
EXIT_CODE_FILE = "exit-code"
STDOUT_FILE = "stdout.log"
STDERR_FILE = "stderr.log"
SECRET_CONF_FILE = "secret-conf.properties"
WORK_DIRECTORY = "work"
"""The driver's own directory in its attempt directory: its working directory, the one place
there a sandboxed driver may write (besides its snapshot staging)."""
PROMOTE_FILE = "promote.json"
"""Written by the server to promote a standby driver: ``{"startAt": <ISO 8601>}``."""
STANDBY_READY_FILE = "standby-ready.json"
"""Written by a standby driver, in its ``WORK_DIRECTORY``, once it is held ready:
``{"readyAt": <ISO 8601>}``."""


def standby_ready_path(directory: Path) -> Path:
    """Where the standby driver of the attempt directory ``directory`` says it is ready: in its
    work directory, since the sandbox shows it the attempt directory read-only."""
    return directory / WORK_DIRECTORY / STANDBY_READY_FILE


def private_files(attempt: AttemptSpec) -> dict[str, str]:
    """The files of the attempt directory that hold secrets, by name, for only the server's user
    (and so the driver) to read: the report token, the Spark settings from secrets."""
    files = {}
    if attempt.report_url and attempt.report_token:
        files[REPORT_TOKEN_FILE] = attempt.report_token
    if attempt.spark_conf_secrets:
        files[SECRET_CONF_FILE] = secret_properties(attempt.spark_conf_secrets)
    return files


def attempt_files(attempt: AttemptSpec) -> dict[str, str]:
    """The files the driver reads from its attempt directory, by name: the job's manifest and,
    when there are any, its connections. Neither holds a secret value (secrets are named)."""
    files = {MANIFEST_FILE: yaml.safe_dump(manifest_document(attempt.job), sort_keys=False)}
    if attempt.connections:
        documents = [
            connection.model_dump(mode="json", by_alias=True, exclude_none=True)
            for connection in attempt.connections
        ]
        files[CONNECTIONS_FILE] = yaml.safe_dump_all(documents, sort_keys=False)
    return files


def manifest_document(job: StreamingJob) -> dict[str, Any]:
    document: dict[str, Any] = job.model_dump(mode="json", by_alias=True, exclude_none=True)
    return document


def secret_properties(settings: Mapping[str, str]) -> str:
    """``settings`` as a Java properties file, every character escaped so it reads back as is
    (Spark then trims whitespace at both ends of each value)."""
    lines = [
        "# Spark settings from secrets, for spark-submit only; do not copy or log this file.\n"
    ]
    for key, value in settings.items():
        lines.append(f"{_properties_escaped(key)}={_properties_escaped(value)}\n")
    return "".join(lines)


def _properties_escaped(text: str) -> str:
    escaped = []
    for character in text:
        code = ord(character)
        if character in "\\=:#! ":
            escaped.append("\\" + character)
        elif 0x20 < code < 0x7F:
            escaped.append(character)
        elif code > 0xFFFF:
            code -= 0x10000
            escaped.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            escaped.append(f"\\u{code:04x}")
    return "".join(escaped)
