"""Fetch one jar from Maven Central into the local Maven repository, checked by its SHA-1.

Two kinds of jar are fetched alone rather than through Spark's resolver: the connectors'
``local_jars`` (a jar Spark's resolver cannot get at the version it would ask for, see
``domain.connectors``), and the jars Ivy fails to copy from the local Maven repository because
only their pom is there (see ``launch.jars``). Both land where Maven itself would put them, so
``mvn`` and Spark's resolver find them there afterwards; nothing here needs ``mvn``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from streamjobs.domain.connectors import maven_repository_path

MAVEN_CENTRAL_URL = "https://repo1.maven.org/maven2"
TIMEOUT_SECONDS = 60.0
CHUNK_BYTES = 1 << 20
JAR_MODE = 0o644
"""Every driver reads the jar, whatever account it runs as (a temporary file is 600)."""


class JarUnavailable(Exception):
    """A jar could not be fetched; the message names its coordinate and why, in one line."""


def fetch_jar(coordinate: str, repository: Path, *, central: str = MAVEN_CENTRAL_URL) -> Path:
    """The jar of ``group:artifact:version`` in ``repository``, downloaded first when missing.

    ``JarUnavailable`` when Central has no such jar, cannot be reached, or sends a jar whose
    SHA-1 is not the one it publishes.
    """
    relative = maven_repository_path(coordinate).as_posix()
    target = repository / relative
    if target.is_file():
        return target
    url = f"{central.rstrip('/')}/{relative}"
    expected = _read(coordinate, f"{url}.sha1").decode("ascii", "replace").split()
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(usedforsecurity=False)
    handle, partial = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as written, _open(coordinate, url) as response:
            try:
                while chunk := response.read(CHUNK_BYTES):
                    digest.update(chunk)
                    written.write(chunk)
            except OSError as error:
                raise JarUnavailable(f"{coordinate}: downloading {url} failed: {error}") from None
        if not expected or digest.hexdigest() != expected[0].lower():
            raise JarUnavailable(f"{coordinate}: the jar from {url} does not match its SHA-1")
        os.chmod(partial, JAR_MODE)
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


def _read(coordinate: str, url: str) -> bytes:
    with _open(coordinate, url) as response:
        data: bytes = response.read()
        return data


def _open(coordinate: str, url: str) -> Any:
    try:
        return urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS)
    except urllib.error.HTTPError as error:
        reason = "not found" if error.code == 404 else f"HTTP {error.code}"
        raise JarUnavailable(f"{coordinate}: {reason} on Maven Central ({url})") from None
    except urllib.error.URLError as error:
        raise JarUnavailable(f"{coordinate}: Maven Central unreachable: {error.reason}") from None
    except OSError as error:
        raise JarUnavailable(f"{coordinate}: Maven Central unreachable: {error}") from None
