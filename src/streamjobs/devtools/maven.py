"""Resolve Maven coordinates to jar files in ``~/.m2/repository`` with the ``mvn`` command.

Two things need jars from Maven Central: the Kafka broker the tests and ``streamjobs dev kafka``
start, and the Spark connectors (Kafka, Delta, Iceberg, JDBC) that ``spark.jars.packages`` names.
``resolve_classpath`` writes a throwaway pom listing the coordinates and asks
``mvn dependency:build-classpath`` for the jars: offline first, so a warm cache never touches the
network, and online when something is missing. Spark's own resolver (Ivy) looks in
``~/.m2/repository`` before the network, and Maven leaves both jars and poms there, so resolving
the connector packages here first makes Spark start without downloading anything.

Some poms (Spark's parent) declare repositories of their own, such as a Google Cloud mirror of
Central that a machine may not reach; a global settings file sends every repository other than
Central to Central itself. A user's own ``~/.m2/settings.xml`` still applies and takes precedence.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape

MAVEN_CENTRAL_URL = "https://repo.maven.apache.org/maven2"
DEPENDENCY_PLUGIN_VERSION = "3.9.0"
CLASSPATH_FILE = "classpath.txt"

_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>streamjobs.devtools</groupId>
  <artifactId>resolve-classpath</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>{plugin_version}</version>
      </plugin>
    </plugins>
  </build>
</project>
"""
_DEPENDENCY = """    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{version}</version>{exclusions}
    </dependency>"""
_NO_DEPENDENCIES = """
      <exclusions>
        <exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion>
      </exclusions>"""
_SETTINGS = """<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
  <mirrors>
    <mirror>
      <id>streamjobs-central-for-others</id>
      <mirrorOf>*,!central</mirrorOf>
      <url>{url}</url>
    </mirror>
  </mirrors>
</settings>
"""


class ToolUnavailableError(Exception):
    """A program a development service needs (``mvn``, ``java``) is not installed here."""


class ResolutionError(Exception):
    """Maven could not resolve the coordinates; the message holds Maven's own output."""


def resolve_classpath(
    coordinates: Iterable[str], offline_first: bool = True, transitive: bool = True
) -> list[Path]:
    """The jars of ``coordinates`` (``group:artifact:version``) and of their runtime dependencies.

    With ``offline_first`` Maven runs with ``-o`` first and goes online only if that fails;
    without ``transitive`` it fetches the named jars alone.
    """
    wanted = list(coordinates)
    if not wanted:
        return []
    mvn = find_program("mvn", install_hint="apt-get install maven")
    with tempfile.TemporaryDirectory(prefix="streamjobs-maven-") as work:
        project = Path(work)
        write_project(project, wanted, transitive)
        if offline_first:
            try:
                return _build_classpath(mvn, project, offline=True)
            except ResolutionError:
                pass
        return _build_classpath(mvn, project, offline=False)


def find_program(name: str, install_hint: str) -> str:
    """The path of ``name`` on PATH, or ``ToolUnavailableError`` saying how to install it."""
    found = shutil.which(name)
    if found is None:
        raise ToolUnavailableError(f"'{name}' is not on PATH; install it, e.g. `{install_hint}`")
    return found


def write_project(directory: Path, coordinates: list[str], transitive: bool = True) -> None:
    """Write ``pom.xml`` depending on ``coordinates`` and ``settings.xml`` into ``directory``."""
    dependencies = "\n".join(_dependency_xml(coordinate, transitive) for coordinate in coordinates)
    pom = _POM.format(dependencies=dependencies, plugin_version=DEPENDENCY_PLUGIN_VERSION)
    (directory / "pom.xml").write_text(pom, encoding="utf-8")
    (directory / "settings.xml").write_text(
        _SETTINGS.format(url=MAVEN_CENTRAL_URL), encoding="utf-8"
    )


def _dependency_xml(coordinate: str, transitive: bool) -> str:
    parts = coordinate.split(":")
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"{coordinate!r} is not a Maven coordinate group:artifact:version")
    group, artifact, version = (escape(part) for part in parts)
    exclusions = "" if transitive else _NO_DEPENDENCIES
    return _DEPENDENCY.format(
        group=group, artifact=artifact, version=version, exclusions=exclusions
    )


def _build_classpath(mvn: str, project: Path, offline: bool) -> list[Path]:
    output_file = project / CLASSPATH_FILE
    command = [
        mvn,
        "--batch-mode",
        "--no-transfer-progress",
        "--quiet",
        "-Dstyle.color=never",
        "--global-settings",
        str(project / "settings.xml"),
        *(["--offline"] if offline else []),
        "dependency:build-classpath",
        "-Dmdep.includeScope=runtime",
        f"-Dmdep.outputFile={output_file}",
    ]
    finished = subprocess.run(
        command, cwd=project, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    if finished.returncode != 0 or not output_file.is_file():
        mode = "offline" if offline else "online"
        raise ResolutionError(f"mvn ({mode}) failed:\n{finished.stdout}{finished.stderr}")
    text = output_file.read_text(encoding="utf-8").strip()
    return [Path(entry) for entry in text.split(os.pathsep) if entry]
