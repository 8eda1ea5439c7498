"""Resolve a job's connector packages to jar files on this machine, before its driver starts.

``SparkJarResolver.resolve`` runs Spark's own resolver (Ivy, through ``spark-submit --packages``
of a script that prints the ``spark.jars`` Spark made of them, no Spark context) with the
server's Ivy directory, and fetches each local jar (``domain.connectors``) from Maven Central into
the Maven repository. The driver is then given the jar files, not the coordinates: it resolves
nothing, needs no network, and a sandboxed driver reads them bound read-only.

Spark's resolver looks in ``<user.home>/.m2/repository`` first; it runs with a home of its own in
the Ivy directory whose Maven repository is the server's (``STREAMJOBS_MAVEN_REPOSITORY``), so a
test can point both at empty directories. Maven leaves poms there without their jars (versions it
considered and dropped); Ivy takes such a pom as found, then fails ``download failed:
org.slf4j#slf4j-api;2.0.17!slf4j-api.jar`` without asking Central. Such a jar is fetched into the
Maven repository and the resolution tried again (``MAX_REPAIRS`` times at most).

A success is kept as a stamp (its jars) and a failure as one line, both in
``<ivy>/streamjobs-resolved``: a warm cache costs reading one small file, and a failure known for
the same request is refused at Run for ``FAILURE_KEPT_SECONDS`` instead of tried again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Protocol

from streamjobs.domain.connectors import maven_repository_path
from streamjobs.domain.jar_requests import PACKAGES_SETTING, JarRequest
from streamjobs.launch.command import Toolchain
from streamjobs.launch.maven_central import MAVEN_CENTRAL_URL, JarUnavailable, fetch_jar

STAMPS_DIRECTORY = "streamjobs-resolved"
RESOLVER_HOME = "streamjobs-resolver-home"
MAX_REPAIRS = 10
FAILURE_KEPT_SECONDS = 600.0
RESOLVER_TIMEOUT_SECONDS = 900.0
JARS_MARKER = "STREAMJOBS-RESOLVED-JARS="
_PRINT_JARS = f"""
from pyspark import SparkConf, SparkContext
SparkContext._ensure_initialized()
print({JARS_MARKER!r} + SparkConf().get("spark.jars", ""))
"""
_DOWNLOAD_FAILED = re.compile(r"download failed: ([^#\s]+)#([^;\s]+);([^!\s]+)!")
_UNRESOLVED = re.compile(r"unresolved dependency: ([^#\s]+)#([^;\s]+);([^:\s]+): ([^\],\n]+)")


@dataclass(frozen=True)
class JarResolution:
    """The outcome of resolving one ``JarRequest``: its jar files, or why it failed."""

    jars: tuple[str, ...] = ()
    """Paths of the jars the driver gets in ``spark.jars`` (the packages' and their deps')."""
    error: str | None = None
    """One line naming the coordinate that failed and why."""
    seconds: float = 0.0
    """How long the resolution took (0 when it came from a stamp)."""

    @property
    def failed(self) -> bool:
        return self.error is not None


class JarResolver(Protocol):
    """Resolves jar requests: ``SparkJarResolver``, or ``launch.fake_jars`` in tests.

    Contract: ``known`` answers quickly from what was recorded (None: not resolved yet, or a
    failure long enough ago to try again); ``resolve`` may take minutes, never raises for a
    coordinate that cannot be resolved (it returns a failed ``JarResolution`` naming it) and
    records its outcome for ``known``.
    """

    def known(self, request: JarRequest) -> JarResolution | None: ...

    def resolve(self, request: JarRequest) -> JarResolution: ...


def known_failure(resolver: JarResolver, request: JarRequest) -> str | None:
    """The one-line failure a recent resolution of ``request`` ended with, if any."""
    if request.empty:
        return None
    known = resolver.known(request)
    return known.error if known is not None else None


class SparkJarResolver:
    """Resolves with the installed Spark into the server's Maven repository and Ivy directory."""

    def __init__(
        self,
        *,
        maven_repository: Path,
        ivy_directory: Path,
        spark_submit: Path,
        python: str,
        central: str = MAVEN_CENTRAL_URL,
    ) -> None:
        self._maven_repository = maven_repository
        self._ivy_directory = ivy_directory
        self._spark_submit = spark_submit
        self._python = python
        self._central = central

    @classmethod
    def installed(cls, *, maven_repository: Path, ivy_directory: Path) -> SparkJarResolver:
        """The resolver of the installed pyspark, with this interpreter for its script."""
        toolchain = Toolchain.installed(maven_repository.expanduser().absolute())
        return cls(
            maven_repository=toolchain.maven_repository,
            ivy_directory=ivy_directory.expanduser().absolute(),
            spark_submit=toolchain.spark_submit,
            python=toolchain.python,
        )

    def known(self, request: JarRequest) -> JarResolution | None:
        """The stamped outcome of ``request``: a success whose jars are all still there, or a
        failure younger than ``FAILURE_KEPT_SECONDS``; None when it must be resolved."""
        stamp = self._stamp(request)
        try:
            recorded = json.loads(stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if recorded.get("key") != self._key(request):
            return None
        if recorded.get("error"):
            fresh = time.time() - float(recorded.get("at", 0)) < FAILURE_KEPT_SECONDS
            return JarResolution(error=str(recorded["error"])) if fresh else None
        jars = tuple(str(jar) for jar in recorded.get("jars", []))
        local = [self._maven_repository_jar(coordinate) for coordinate in request.local_jars]
        if all(Path(path).is_file() for path in [*jars, *local]):
            return JarResolution(jars=jars)
        return None

    def resolve(self, request: JarRequest, *, force: bool = False) -> JarResolution:
        """Resolve ``request`` (from its stamp unless ``force``), stamping the outcome."""
        if request.empty:
            return JarResolution()
        known = None if force else self.known(request)
        if known is not None:
            return known
        started = time.monotonic()
        try:
            for coordinate in request.local_jars:
                fetch_jar(coordinate, self._maven_repository, central=self._central)
            jars = self._resolve_packages(request) if request.packages else ()
        except JarUnavailable as error:
            outcome = JarResolution(error=str(error), seconds=time.monotonic() - started)
        else:
            outcome = JarResolution(jars=jars, seconds=time.monotonic() - started)
        self._write_stamp(request, outcome)
        return outcome

    def _resolve_packages(self, request: JarRequest) -> tuple[str, ...]:
        for _ in range(MAX_REPAIRS):
            finished = self._run_spark_resolver(request)
            if finished.returncode == 0:
                return _printed_jars(finished.stdout)
            missing = jars_missing_beside_their_poms(finished.stderr)
            if not missing:
                raise JarUnavailable(failure_line(finished.stderr))
            for coordinate in missing:
                fetch_jar(coordinate, self._maven_repository, central=self._central)
        raise JarUnavailable(
            f"Spark's resolver still misses jars after {MAX_REPAIRS} repairs of "
            f"{self._maven_repository}"
        )

    def _run_spark_resolver(self, request: JarRequest) -> subprocess.CompletedProcess[str]:
        home = self._resolver_home()
        settings = {
            **dict(request.resolver_settings),
            PACKAGES_SETTING: ",".join(request.packages),
            "spark.jars.ivy": str(self._ivy_directory),
        }
        command = [str(self._spark_submit), "--master", "local[1]"]
        for key, value in settings.items():
            command += ["--conf", f"{key}={value}"]
        environment = {
            **os.environ,
            "PYSPARK_PYTHON": self._python,
            "PYSPARK_DRIVER_PYTHON": self._python,
            "SPARK_SUBMIT_OPTS": f"-Duser.home={home}",
        }
        with tempfile.TemporaryDirectory(prefix="streamjobs-jars-") as work:
            script = Path(work) / "print_jars.py"
            script.write_text(_PRINT_JARS, encoding="utf-8")
            try:
                return subprocess.run(
                    [*command, str(script)],
                    capture_output=True,
                    text=True,
                    stdin=subprocess.DEVNULL,
                    env=environment,
                    cwd=work,
                    timeout=RESOLVER_TIMEOUT_SECONDS,
                )
            except subprocess.TimeoutExpired:
                raise JarUnavailable(
                    f"Spark's resolver did not finish {', '.join(request.packages)} within "
                    f"{RESOLVER_TIMEOUT_SECONDS:g} s"
                ) from None
            except OSError as error:
                raise JarUnavailable(f"cannot run {self._spark_submit}: {error}") from None

    def _resolver_home(self) -> Path:
        """A home whose ``.m2/repository`` is the server's Maven repository."""
        home = self._ivy_directory / RESOLVER_HOME
        link = home / ".m2" / "repository"
        self._maven_repository.mkdir(parents=True, exist_ok=True)
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() and Path(os.readlink(link)) != self._maven_repository.resolve():
            link.unlink()
        if not link.is_symlink():
            link.symlink_to(self._maven_repository.resolve(), target_is_directory=True)
        return home

    def _maven_repository_jar(self, coordinate: str) -> str:
        return str(self._maven_repository / maven_repository_path(coordinate))

    def _stamp(self, request: JarRequest) -> Path:
        digest = hashlib.sha256(self._key(request).encode()).hexdigest()[:24]
        return self._ivy_directory / STAMPS_DIRECTORY / f"{digest}.json"

    def _key(self, request: JarRequest) -> str:
        return json.dumps(
            {
                "spark": _pyspark_version(),
                "packages": request.packages,
                "settings": request.resolver_settings,
                "local": request.local_jars,
                "maven": str(self._maven_repository),
            },
            sort_keys=True,
        )

    def _write_stamp(self, request: JarRequest, outcome: JarResolution) -> None:
        stamp = self._stamp(request)
        stamp.parent.mkdir(parents=True, exist_ok=True)
        recorded = {"key": self._key(request), "jars": outcome.jars, "at": time.time()}
        if outcome.error is not None:
            recorded["error"] = outcome.error
        partial = stamp.with_suffix(".part")
        partial.write_text(json.dumps(recorded), encoding="utf-8")
        os.replace(partial, stamp)


def jars_missing_beside_their_poms(ivy_output: str) -> list[str]:
    """The ``group:artifact:version`` of each jar Ivy failed to copy from ``~/.m2``."""
    found = (":".join(match.groups()) for match in _DOWNLOAD_FAILED.finditer(ivy_output))
    return list(dict.fromkeys(found))


def failure_line(ivy_output: str) -> str:
    """One line saying which coordinate Spark's resolver could not resolve, and why."""
    unresolved = [
        f"{group}:{artifact}:{revision} ({reason.strip()})"
        for group, artifact, revision, reason in _UNRESOLVED.findall(ivy_output)
    ]
    if unresolved:
        unique = list(dict.fromkeys(unresolved))
        return f"unresolved dependency {', '.join(unique)}"
    lines = [line.strip() for line in ivy_output.splitlines() if line.strip()]
    exceptions = [line for line in lines if line.startswith("Exception in thread")]
    return (exceptions or lines or ["Spark's resolver failed without a word"])[-1]


def _printed_jars(output: str) -> tuple[str, ...]:
    for line in output.splitlines():
        if line.startswith(JARS_MARKER):
            listed = line.removeprefix(JARS_MARKER).split(",")
            return tuple(_local_file(jar) for jar in listed if jar)
    raise JarUnavailable("Spark's resolver finished without listing the jars it resolved")


def _local_file(jar: str) -> str:
    parsed = urllib.parse.urlparse(jar)
    return urllib.parse.unquote(parsed.path) if parsed.scheme == "file" else jar


def _pyspark_version() -> str:
    try:
        return version("pyspark")
    except PackageNotFoundError:
        return "unknown"
