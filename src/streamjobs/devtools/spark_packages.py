"""Warm Spark's own package resolver for Spark sessions started in-process (the tests, the bench).

A driver the server starts gets its jars from the server (``streamjobs.launch.jars``). Sessions
that a test or ``streamjobs pipeline run`` starts in-process still name their connectors in
``spark.jars.packages``, with the user's ``~/.m2`` and Ivy directory; this warms those. Spark
resolves ``spark.jars.packages`` with Ivy: it looks in ``~/.m2/repository`` first, then on
Maven Central, and keeps what it downloads in its own cache (``~/.ivy2.5.2``). Having ``mvn`` put
the packages in ``~/.m2/repository`` is not enough on its own, for two reasons seen here:

- Ivy picks versions its own way (a parent pom's dependency management also rules transitive
  dependencies), e.g. ``slf4j-api`` 2.0.17 where Maven picks 1.7.36: such jars are not there.
- Maven keeps the poms of versions it considered and dropped, without their jars. Ivy takes such a
  pom as "found in local-m2-cache", then fails: ``download failed:
  org.slf4j#slf4j-api;2.0.17!slf4j-api.jar``, and never asks Maven Central.

So ``warm_spark_resolver`` runs Spark's resolver itself (``spark-submit`` of an empty script, no
Spark context) and, when Ivy misses a jar beside its pom, fetches that jar from Maven Central
(as the server does, ``launch.jars``) and tries again. Once it succeeds, the same resolution is
served by ``~/.m2`` and the Ivy cache alone, and a stamp file in Spark's Ivy directory says so,
to skip the few seconds each check costs next time (deleting that directory deletes the stamps).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyspark

from streamjobs.devtools.maven import ResolutionError
from streamjobs.launch.jars import jars_missing_beside_their_poms
from streamjobs.launch.maven_central import JarUnavailable, fetch_jar

SPARK_IVY_HOME = Path.home() / ".ivy2.5.2"  # Spark 4's default for spark.jars.ivy
MAVEN_REPOSITORY = Path.home() / ".m2" / "repository"  # where Spark's resolver looks first
MAX_REPAIRS = 10
OUTPUT_LINES_IN_ERRORS = 30


def warm_spark_resolver(
    packages: Sequence[str], spark_conf: Mapping[str, str], force: bool = False
) -> bool:
    """Resolve ``packages`` as a Spark session with ``spark_conf`` would, repairing ``~/.m2``.

    Returns False when a stamp says this resolution already succeeded (unless ``force``).
    """
    stamp = stamp_path(packages, spark_conf)
    if not packages or (stamp.is_file() and not force):
        return False
    for _ in range(MAX_REPAIRS):
        finished = run_spark_resolver(packages, spark_conf)
        if finished.returncode == 0:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(_stamp_key(packages, spark_conf), encoding="utf-8")
            return True
        missing = jars_missing_beside_their_poms(finished.stderr)
        if not missing:
            raise ResolutionError(_failure_message(packages, finished.stderr))
        try:
            for coordinate in missing:
                fetch_jar(coordinate, MAVEN_REPOSITORY)
        except JarUnavailable as error:
            raise ResolutionError(str(error)) from None
    raise ResolutionError(f"Spark's resolver still misses jars after {MAX_REPAIRS} repairs")


def run_spark_resolver(
    packages: Sequence[str], spark_conf: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    """``spark-submit --packages`` of an empty Python script: Ivy resolves, nothing else runs."""
    settings = {**spark_conf, "spark.jars.packages": ",".join(packages)}
    with tempfile.TemporaryDirectory(prefix="streamjobs-spark-resolver-") as work:
        script = Path(work) / "nothing.py"
        script.write_text("", encoding="utf-8")
        command = [str(spark_submit()), "--master", "local[1]"]
        for key, value in settings.items():
            command += ["--conf", f"{key}={value}"]
        environment = {**os.environ, "PYSPARK_PYTHON": sys.executable}
        return subprocess.run(
            [*command, str(script)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=environment,
        )


def stamp_path(packages: Sequence[str], spark_conf: Mapping[str, str]) -> Path:
    """Where the stamp of a successful resolution of ``packages`` with ``spark_conf`` goes."""
    ivy_home = Path(spark_conf.get("spark.jars.ivy", SPARK_IVY_HOME))
    digest = hashlib.sha256(_stamp_key(packages, spark_conf).encode()).hexdigest()[:20]
    return ivy_home / "streamjobs-resolved" / digest


def _stamp_key(packages: Sequence[str], spark_conf: Mapping[str, str]) -> str:
    return json.dumps(
        {"pyspark": pyspark.__version__, "packages": list(packages), "conf": dict(spark_conf)},
        sort_keys=True,
    )


def spark_submit() -> Path:
    """The ``spark-submit`` of the installed pyspark."""
    return Path(pyspark.__file__).parent / "bin" / "spark-submit"


def _failure_message(packages: Sequence[str], output: str) -> str:
    tail = "\n".join(output.splitlines()[-OUTPUT_LINES_IN_ERRORS:])
    return f"Spark could not resolve {', '.join(packages)}:\n{tail}"
