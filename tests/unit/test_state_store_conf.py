"""The Spark settings of ``processing.stateStore`` and of FAIR scheduling, and where they show."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from streamjobs.domain.spark_conf import (
    CHANGELOG_CHECKPOINTING_SETTING,
    ROCKSDB_STATE_STORE,
    SCHEDULER_MODE_SETTING,
    STATE_STORE_PROVIDER_SETTING,
    session_conf,
)
from streamjobs.domain.spec import parse_manifest, resolved_template
from streamjobs.launch.base import NodeSize
from streamjobs.launch.command import Toolchain, spark_settings
from tests.factories import changed, pipeline_manifest, python_manifest
from tests.launch.conftest import attempt_for

pytestmark = pytest.mark.snapshots
REPOSITORY = PurePosixPath("/m2")


def conf_of(manifest: dict[str, object]) -> dict[str, str]:
    return session_conf(parse_manifest(manifest), connections=(), maven_repository=REPOSITORY)


def rocksdb(manifest: dict[str, object]) -> dict[str, object]:
    return changed(manifest, ("spec.processing", {"stateStore": "rocksdb"}))


def test_rocksdb_selects_its_provider_with_changelog_checkpointing() -> None:
    conf = conf_of(rocksdb(pipeline_manifest()))
    assert conf[STATE_STORE_PROVIDER_SETTING] == ROCKSDB_STATE_STORE
    assert conf[CHANGELOG_CHECKPOINTING_SETTING] == "true"


def test_the_default_state_store_leaves_spark_its_own() -> None:
    conf = conf_of(pipeline_manifest())
    assert STATE_STORE_PROVIDER_SETTING not in conf
    assert CHANGELOG_CHECKPOINTING_SETTING not in conf


def test_pipelines_schedule_fairly_and_programs_as_they_choose() -> None:
    assert conf_of(pipeline_manifest())[SCHEDULER_MODE_SETTING] == "FAIR"
    assert SCHEDULER_MODE_SETTING not in conf_of(python_manifest())


def test_the_jobs_own_spark_conf_wins_over_what_the_manifest_derives() -> None:
    own = {CHANGELOG_CHECKPOINTING_SETTING: "false", SCHEDULER_MODE_SETTING: "FIFO"}
    manifest = changed(rocksdb(pipeline_manifest()), ("spec.configuration", {"sparkConf": own}))
    conf = conf_of(manifest)
    assert conf[STATE_STORE_PROVIDER_SETTING] == ROCKSDB_STATE_STORE
    assert conf[CHANGELOG_CHECKPOINTING_SETTING] == "false"
    assert conf[SCHEDULER_MODE_SETTING] == "FIFO"


def test_the_template_and_the_driver_command_show_the_state_store() -> None:
    manifest = rocksdb(pipeline_manifest())
    template = resolved_template(parse_manifest(manifest), checkpoint_root="file:///ckpt")
    assert template["spec"]["processing"]["stateStore"] == "rocksdb"
    default = resolved_template(parse_manifest(pipeline_manifest()), checkpoint_root="file:///c")
    assert default["spec"]["processing"]["stateStore"] == "hdfs"

    attempt = attempt_for(manifest, Path("/apps/a/1"), driver=NodeSize(cores=1, memory_mb=1024))
    toolchain = Toolchain(
        spark_submit=Path("/spark/bin/spark-submit"),
        python="/venv/bin/python",
        runner_entry=Path("/src/streamjobs/runner/__main__.py"),
        maven_repository=Path("/m2"),
    )
    settings = dict(spark_settings(attempt, master="local[1]", ui_port=4040, toolchain=toolchain))
    assert settings[STATE_STORE_PROVIDER_SETTING] == ROCKSDB_STATE_STORE
    assert settings[CHANGELOG_CHECKPOINTING_SETTING] == "true"
    assert settings[SCHEDULER_MODE_SETTING] == "FAIR"
