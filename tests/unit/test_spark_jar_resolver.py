"""``SparkJarResolver`` over a stand-in ``spark-submit`` and a local Maven Central.

The stand-in behaves as Spark's resolver does in the cases that matter (it lists the jars it
resolved, reports an unresolved dependency as Ivy does, or misses a jar beside its pom), so the
stamps, the failure lines and the repairs are checked without Spark or the network. The real
resolver is exercised by the slow tests (``tests/e2e/test_resolved_connectors.py``).
"""

from __future__ import annotations

import hashlib
import http.server
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamjobs.domain.jar_requests import JarRequest
from streamjobs.launch import jars as jars_module
from streamjobs.launch.jars import (
    SparkJarResolver,
    failure_line,
    jars_missing_beside_their_poms,
    known_failure,
)
from streamjobs.launch.maven_central import JarUnavailable, fetch_jar

PACKAGE = "com.example:udfs:1.0"
LOCAL_JAR = "com.example:token-provider:4.0.0"
SLF4J = "org.slf4j:slf4j-api:2.0.17"

STAND_IN = f"""#!{sys.executable}
import json, os, sys
from pathlib import Path
arguments = sys.argv[1:]
conf = dict(a.split("=", 1) for a in arguments[arguments.index("--conf") + 1::2] if "=" in a)
calls = Path(os.environ["STAND_IN_CALLS"])
calls.write_text(calls.read_text() + json.dumps({{"conf": conf,
    "opts": os.environ.get("SPARK_SUBMIT_OPTS", "")}}) + "\\n")
mode = os.environ["STAND_IN_MODE"]
ivy = Path(conf["spark.jars.ivy"])
if mode == "unresolved":
    sys.stderr.write(":: UNRESOLVED DEPENDENCIES ::\\n"
        'Exception in thread "main" java.lang.RuntimeException: [unresolved dependency: '
        "com.example#udfs;1.0: not found]\\n")
    sys.exit(1)
if mode == "pom-without-jar":
    repository = Path(os.environ["STAND_IN_M2"])
    if not (repository / "org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar").is_file():
        sys.stderr.write("[download failed: org.slf4j#slf4j-api;2.0.17!slf4j-api.jar]\\n")
        sys.exit(1)
if mode == "crash":
    sys.stderr.write("Error: something else entirely\\n")
    sys.exit(1)
(ivy / "jars").mkdir(parents=True, exist_ok=True)
listed = []
for package in conf["spark.jars.packages"].split(","):
    jar = ivy / "jars" / (package.replace(":", "_") + ".jar")
    jar.write_text("jar")
    listed.append("file://" + str(jar))
print("some output first")
print("STREAMJOBS-RESOLVED-JARS=" + ",".join(listed))
"""


class Central:
    """A directory served over HTTP as a Maven repository."""

    def __init__(self, root: Path, url: str) -> None:
        self.root = root
        self.url = url

    def publish(self, coordinate: str, content: bytes, sha1: str | None = None) -> None:
        group, artifact, version = coordinate.split(":")
        folder = self.root.joinpath(*group.split("."), artifact, version)
        folder.mkdir(parents=True, exist_ok=True)
        jar = folder / f"{artifact}-{version}.jar"
        jar.write_bytes(content)
        digest = sha1 or hashlib.sha1(content, usedforsecurity=False).hexdigest()
        (folder / f"{jar.name}.sha1").write_text(f"{digest}  {jar.name}\n")


@pytest.fixture
def central(tmp_path: Path) -> Iterator[Central]:
    root = tmp_path / "central"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield Central(root, f"http://127.0.0.1:{server.server_address[1]}")
    server.shutdown()
    server.server_close()


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    record = tmp_path / "calls.jsonl"
    record.write_text("")
    monkeypatch.setenv("STAND_IN_CALLS", str(record))
    monkeypatch.setenv("STAND_IN_MODE", "ok")
    monkeypatch.setenv("STAND_IN_M2", str(tmp_path / "m2"))
    return record


@pytest.fixture
def resolver(tmp_path: Path, central: Central, calls: Path) -> SparkJarResolver:
    stand_in = tmp_path / "spark-submit"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    return SparkJarResolver(
        maven_repository=tmp_path / "m2",
        ivy_directory=tmp_path / "ivy",
        spark_submit=stand_in,
        python=sys.executable,
        central=central.url,
    )


def runs(calls: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in calls.read_text().splitlines()]


def test_a_resolution_lists_the_jar_files_and_is_stamped(
    resolver: SparkJarResolver, calls: Path, tmp_path: Path
) -> None:
    request = JarRequest(packages=(PACKAGE,), resolver_settings=(("spark.jars.excludes", "x:y"),))

    first = resolver.resolve(request)
    again = resolver.resolve(request)

    jar = tmp_path / "ivy" / "jars" / "com.example_udfs_1.0.jar"
    assert first.jars == (str(jar),)
    assert first.error is None
    assert again.jars == first.jars
    assert len(runs(calls)) == 1, "the stamp answers the second time"
    conf = runs(calls)[0]["conf"]
    assert isinstance(conf, dict)
    assert conf["spark.jars.excludes"] == "x:y"
    assert conf["spark.jars.ivy"] == str(tmp_path / "ivy")


def test_spark_s_resolver_sees_the_servers_maven_repository_as_its_own(
    resolver: SparkJarResolver, calls: Path, tmp_path: Path
) -> None:
    resolver.resolve(JarRequest(packages=(PACKAGE,)))

    options = str(runs(calls)[0]["opts"])
    home = Path(options.removeprefix("-Duser.home="))
    assert (home / ".m2" / "repository").resolve() == (tmp_path / "m2").resolve()


def test_a_jar_gone_from_the_cache_is_resolved_again(
    resolver: SparkJarResolver, calls: Path
) -> None:
    request = JarRequest(packages=(PACKAGE,))
    Path(resolver.resolve(request).jars[0]).unlink()

    assert resolver.known(request) is None
    resolver.resolve(request)
    assert len(runs(calls)) == 2


def test_an_unresolved_coordinate_fails_in_one_line_naming_it(
    resolver: SparkJarResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAND_IN_MODE", "unresolved")
    request = JarRequest(packages=(PACKAGE,))

    outcome = resolver.resolve(request)

    assert outcome.error == "unresolved dependency com.example:udfs:1.0 (not found)"
    assert known_failure(resolver, request) == outcome.error


def test_a_known_failure_is_forgotten_after_a_while(
    resolver: SparkJarResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAND_IN_MODE", "unresolved")
    request = JarRequest(packages=(PACKAGE,))
    resolver.resolve(request)
    later = jars_module.time.time() + jars_module.FAILURE_KEPT_SECONDS + 1
    monkeypatch.setattr(jars_module.time, "time", lambda: later)

    assert known_failure(resolver, request) is None


def test_a_failure_of_another_request_is_not_this_ones(
    resolver: SparkJarResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAND_IN_MODE", "unresolved")
    resolver.resolve(JarRequest(packages=(PACKAGE,)))

    assert known_failure(resolver, JarRequest(packages=("com.example:udfs:1.1",))) is None
    assert known_failure(resolver, JarRequest()) is None


def test_a_jar_missing_beside_its_pom_is_fetched_and_the_resolution_tried_again(
    resolver: SparkJarResolver,
    central: Central,
    calls: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STAND_IN_MODE", "pom-without-jar")
    central.publish(SLF4J, b"slf4j")

    outcome = resolver.resolve(JarRequest(packages=(PACKAGE,)))

    assert outcome.error is None
    assert len(runs(calls)) == 2
    fetched = tmp_path / "m2/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar"
    assert fetched.read_bytes() == b"slf4j"


def test_a_jar_missing_beside_its_pom_and_on_central_fails_naming_it(
    resolver: SparkJarResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAND_IN_MODE", "pom-without-jar")

    outcome = resolver.resolve(JarRequest(packages=(PACKAGE,)))

    assert outcome.error is not None
    assert outcome.error.startswith(f"{SLF4J}: not found on Maven Central")


def test_a_resolver_that_fails_otherwise_gives_its_last_words(
    resolver: SparkJarResolver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAND_IN_MODE", "crash")

    outcome = resolver.resolve(JarRequest(packages=(PACKAGE,)))

    assert outcome.error == "Error: something else entirely"


def test_local_jars_are_fetched_into_the_maven_repository(
    resolver: SparkJarResolver, central: Central, calls: Path, tmp_path: Path
) -> None:
    central.publish(LOCAL_JAR, b"provider")
    request = JarRequest(local_jars=(LOCAL_JAR,))

    outcome = resolver.resolve(request)

    assert outcome.error is None
    assert outcome.jars == ()
    jar = tmp_path / "m2/com/example/token-provider/4.0.0/token-provider-4.0.0.jar"
    assert jar.read_bytes() == b"provider"
    assert jar.stat().st_mode & 0o777 == 0o644, "readable by every driver's account"
    assert runs(calls) == [], "no package: Spark's resolver is not run"
    jar.unlink()
    assert resolver.known(request) is None, "a stamp whose local jar is gone does not count"


def test_a_missing_local_jar_fails_naming_it(resolver: SparkJarResolver) -> None:
    outcome = resolver.resolve(JarRequest(packages=(PACKAGE,), local_jars=(LOCAL_JAR,)))

    assert outcome.error is not None
    assert outcome.error.startswith(f"{LOCAL_JAR}: not found on Maven Central")


def test_a_jar_that_does_not_match_its_checksum_is_refused(
    central: Central, tmp_path: Path
) -> None:
    central.publish(LOCAL_JAR, b"tampered", sha1="0" * 40)

    with pytest.raises(JarUnavailable, match="does not match its SHA-1"):
        fetch_jar(LOCAL_JAR, tmp_path / "m2", central=central.url)

    assert not list((tmp_path / "m2").rglob("*.jar")), "nothing half-written is left"


def test_an_unreachable_central_is_said_so(tmp_path: Path) -> None:
    with pytest.raises(JarUnavailable, match=f"^{LOCAL_JAR}: Maven Central unreachable"):
        fetch_jar(LOCAL_JAR, tmp_path / "m2", central="http://127.0.0.1:9")


def test_ivy_output_is_read_for_the_jars_missing_beside_their_poms() -> None:
    output = (
        "[download failed: org.slf4j#slf4j-api;2.0.17!slf4j-api.jar, "
        "download failed: org.slf4j#slf4j-api;2.0.17!slf4j-api.jar(bundle), "
        "download failed: com.x#y;1!y.jar]"
    )
    assert jars_missing_beside_their_poms(output) == [SLF4J, "com.x:y:1"]
    assert jars_missing_beside_their_poms("all fine") == []


def test_the_failure_line_lists_every_unresolved_coordinate_once() -> None:
    output = (
        ":: a#b;1: not found\n"
        "java.lang.RuntimeException: [unresolved dependency: a#b;1: not found, "
        "unresolved dependency: c#d;2: not found]\n"
        "java.lang.RuntimeException: [unresolved dependency: a#b;1: not found]"
    )
    assert failure_line(output) == "unresolved dependency a:b:1 (not found), c:d:2 (not found)"
    assert failure_line("") == "Spark's resolver failed without a word"
