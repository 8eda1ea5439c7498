"""The cause of a failed driver, found in real logs of each kind (``tests/unit/failure_logs``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamjobs.domain.failure_causes import MAX_CAUSE_LENGTH, failure_cause

LOGS = Path(__file__).parent / "failure_logs"


def cause_in(kind: str) -> str | None:
    stderr = (LOGS / f"{kind}.stderr.log").read_text(encoding="utf-8")
    stdout = (LOGS / f"{kind}.stdout.log").read_text(encoding="utf-8")
    return failure_cause(stderr, stdout)


@pytest.mark.parametrize(
    ("kind", "cause"),
    [
        ("key_error", "KeyError: 'x'"),
        (
            "path_not_found",
            "AnalysisException: [PATH_NOT_FOUND] Path does not exist: "
            "file:/tmp/causes-samples/no-such-dir. SQLSTATE: 42K03",
        ),
        (
            "file_not_found",
            "FileNotFoundError: [Errno 2] No such file or directory: "
            "'/tmp/causes-samples/settings.json'",
        ),
        (
            "unresolved",
            "unresolved dependency org.example.nothing:no-such-connector_2.13:9.9.9: not found",
        ),
        (
            "kafka_class",
            "java.lang.NoClassDefFoundError: org.apache.spark.kafka010.KafkaConfigUpdater "
            "(a jar the job needs is not on its classpath)",
        ),
        ("no_class", "Failed to load class com.example.NoSuchMain."),
        (
            "missing_app",
            "/work/main/.venv/bin/python: can't open file '/tmp/causes-samples/no_such_app.py': "
            "[Errno 2] No such file or directory",
        ),
    ],
)
def test_each_kind_of_failure_gives_its_cause(kind: str, cause: str) -> None:
    assert cause_in(kind) == cause


def test_a_multi_line_analysis_exception_gives_its_first_line() -> None:
    cause = cause_in("table_not_found")
    assert cause is not None
    assert cause.startswith(
        "AnalysisException: [TABLE_OR_VIEW_NOT_FOUND] The table or view `clicks` cannot be found."
    )
    assert "UnresolvedRelation" not in cause


def test_a_log_that_says_no_cause_gives_none() -> None:
    """The stderr of a driver that ran fine until killed: Spark's start-up lines only."""
    assert failure_cause((LOGS / "key_error.stderr.log").read_text(encoding="utf-8")) is None
    assert failure_cause("", "") is None
    assert failure_cause() is None


def test_a_warning_that_a_file_does_not_exist_is_no_cause() -> None:
    warning = (
        "26/11/25 10:24:11 WARN DependencyUtils: Local jar /m2/x.jar does not exist, skipping."
    )
    assert failure_cause(warning) is None
    error = "26/11/25 10:24:11 ERROR SparkContext: Path file:/data/in does not exist"
    assert failure_cause(warning, error) == "Path file:/data/in does not exist"


def test_a_failed_download_is_named() -> None:
    line = (
        'Exception in thread "main" java.lang.RuntimeException: [download failed: '
        "org.apache.kafka#kafka-clients;3.9.0!kafka-clients.jar]"
    )
    assert failure_cause(line) == (
        "download failed: org.apache.kafka#kafka-clients;3.9.0!kafka-clients.jar"
    )


def test_of_several_unresolved_dependencies_the_first_is_named() -> None:
    line = (
        'Exception in thread "main" java.lang.RuntimeException: [unresolved dependency: '
        "a#b;1: not found, unresolved dependency: c#d;2: not found]"
    )
    assert failure_cause(line) == "unresolved dependency a:b:1: not found"


def test_the_last_traceback_is_the_one_that_ended_the_driver() -> None:
    log = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "job.py", line 3, in <module>',
            "ValueError: first",
            "",
            "During handling of the above exception, another exception occurred:",
            "",
            "Traceback (most recent call last):",
            '  File "job.py", line 5, in <module>',
            "    raise RuntimeError('second')",
            "RuntimeError: second",
        ]
    )
    assert failure_cause(log) == "RuntimeError: second"


def test_a_py4j_error_names_the_java_exception_under_it() -> None:
    log = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "job.py", line 3, in <module>',
            "py4j.protocol.Py4JJavaError: An error occurred while calling o41.start.",
            ": java.lang.IllegalStateException: the sink is closed",
            "\tat org.example.Sink.write(Sink.java:12)",
        ]
    )
    assert failure_cause(log) == "java.lang.IllegalStateException: the sink is closed"


def test_an_exception_without_a_message_is_its_name() -> None:
    log = 'Traceback (most recent call last):\n  File "job.py", line 1\nKeyboardInterrupt\n'
    assert failure_cause(log) == "KeyboardInterrupt"


def test_a_java_main_exception_is_named() -> None:
    log = (
        'Exception in thread "main" java.lang.IllegalArgumentException: no topic given\n'
        "\tat com.example.Job.main(Job.java:10)\n"
    )
    assert failure_cause(log) == "java.lang.IllegalArgumentException: no topic given"


def test_a_traceback_cut_before_its_end_gives_no_python_cause() -> None:
    log = 'Traceback (most recent call last):\n  File "job.py", line 1, in <module>\n'
    assert failure_cause(log) is None


def test_a_long_cause_is_cut_and_kept_on_one_line() -> None:
    log = "Traceback (most recent call last):\nValueError: " + "x\ty " * 400
    cause = failure_cause(log)
    assert cause is not None
    assert len(cause) == MAX_CAUSE_LENGTH
    assert cause.endswith("…")
    assert "\t" not in cause


def test_control_characters_do_not_reach_the_cause() -> None:
    log = "Traceback (most recent call last):\nValueError: bad \x1b[31mred\x1b[0m value\n"
    assert failure_cause(log) == "ValueError: bad [31mred[0m value"


def test_a_class_spark_missed_on_the_way_does_not_hide_the_python_exception() -> None:
    stderr = (
        "26/11/25 10:24:11 WARN HiveConf: HiveConf of name hive.stats.jdbc.timeout does not exist\n"
        "Caused by: java.lang.ClassNotFoundException: org.apache.hadoop.hive.conf.HiveConf\n"
    )
    stdout = "Traceback (most recent call last):\nKeyError: 'x'\n"
    assert failure_cause(stderr, stdout) == "KeyError: 'x'"


def test_a_missing_class_without_a_python_exception_is_the_cause() -> None:
    stderr = (
        'Exception in thread "main" java.lang.NoClassDefFoundError: com/example/Codec\n'
        "\tat com.example.Job.main(Job.java:10)\n"
    )
    assert failure_cause(stderr) == (
        "java.lang.NoClassDefFoundError: com.example.Codec "
        "(a jar the job needs is not on its classpath)"
    )
