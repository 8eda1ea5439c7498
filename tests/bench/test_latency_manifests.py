"""Figure 6's subjects: every trigger's manifest is one streamjobs accepts, and the hand-written
script is handed the Spark settings streamjobs derives for it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from bench.latency_subjects import (
    BASELINE,
    BASELINE_SCRIPT,
    DEFAULT,
    LOW_LATENCY,
    MASTER,
    MODES,
    REAL_TIME,
    STREAMJOBS,
    Mode,
    Topics,
    command,
    prepare,
    stop_file,
)
from bench.throughput_subjects import RunPaths, shared_conf

from streamjobs.domain.spec import parse_manifest

TOPICS = Topics(input="in-0", output="out-0")


def prepared(tmp_path: Path, subject: str, mode: Mode) -> RunPaths:
    paths = RunPaths(tmp_path / "run")
    prepare(paths, subject, mode, TOPICS)
    return paths


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.key)
def test_every_trigger_makes_a_manifest_streamjobs_accepts(tmp_path: Path, mode: Mode) -> None:
    paths = prepared(tmp_path, STREAMJOBS, mode)
    job = parse_manifest(yaml.safe_load(paths.manifest.read_text()))
    assert job.spec.pipeline is not None
    streaming = job.spec.pipeline.streaming
    assert str(streaming.trigger_mode) == mode.streaming.get("triggerMode", "ProcessingTime")
    assert streaming.trigger_duration == mode.streaming.get("triggerDuration")
    (output,) = job.spec.pipeline.outputs
    assert output.output_mode.value == ("update" if mode is REAL_TIME else "append")


def test_the_low_latency_subject_asks_for_low_latency(tmp_path: Path) -> None:
    paths = prepared(tmp_path, LOW_LATENCY, DEFAULT)
    job = parse_manifest(yaml.safe_load(paths.manifest.read_text()))
    assert job.spec.pipeline is not None
    assert job.spec.pipeline.streaming.low_latency is True


def test_the_script_gets_the_trigger_and_the_settings_streamjobs_derives(tmp_path: Path) -> None:
    paths = prepared(tmp_path, BASELINE, REAL_TIME)
    argv, environment = command(BASELINE, paths, REAL_TIME, TOPICS, "127.0.0.1:9", tmp_path)
    assert argv[1] == str(BASELINE_SCRIPT)
    assert "--trigger=realTime:5 minutes" in argv
    assert f"--stop-file={stop_file(paths)}" in argv
    conf = shared_conf(paths, MASTER)
    assert "spark.app.name" not in conf
    assert "kafka" in conf["spark.jars.packages"]
    assert all(f"--conf={key}={value}" in argv for key, value in conf.items())
    assert environment == {}
