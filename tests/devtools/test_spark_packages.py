"""Reading Spark's resolver output: which jars Ivy missed beside their poms in ``~/.m2``."""

from __future__ import annotations

from streamjobs.devtools.spark_packages import jars_missing_beside_their_poms, stamp_path

IVY_FAILURE = """\
\tfound org.slf4j#slf4j-api;2.0.17 in local-m2-cache
downloading file:/root/.m2/repository/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar ...
\t[FAILED     ] org.slf4j#slf4j-api;2.0.17!slf4j-api.jar:  (0ms)
Exception in thread "main" java.lang.RuntimeException: [download failed: \
org.slf4j#slf4j-api;2.0.17!slf4j-api.jar, download failed: \
org.xerial.snappy#snappy-java;1.1.10.8!snappy-java.jar(bundle)]
"""


def test_each_jar_ivy_failed_to_copy_is_named_once_as_a_coordinate() -> None:
    assert jars_missing_beside_their_poms(IVY_FAILURE) == [
        "org.slf4j:slf4j-api:2.0.17",
        "org.xerial.snappy:snappy-java:1.1.10.8",
    ]


def test_other_failures_name_no_jar() -> None:
    unresolved = ":: org.apache.spark#spark-token-provider-kafka-0-10_2.13;4.1.3: not found"

    assert jars_missing_beside_their_poms(unresolved) == []


def test_a_resolution_is_stamped_by_its_packages_and_settings() -> None:
    kafka = stamp_path(["g:kafka:1"], {})

    assert kafka == stamp_path(["g:kafka:1"], {})
    assert kafka != stamp_path(["g:kafka:2"], {})
    assert kafka != stamp_path(["g:kafka:1"], {"spark.jars.excludes": "g:token"})
    assert stamp_path(["g:kafka:1"], {"spark.jars.ivy": "/ivy"}).is_relative_to("/ivy")
