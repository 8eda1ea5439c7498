"""How a job runs: configuration, dependencies, instance sizes, restart policy, processing and the
exactly-once guarantee; a manifest that breaks each rule, the path of the error and its words."""

from __future__ import annotations

from typing import Any

import pytest

from streamjobs.domain.errors import FieldError
from streamjobs.domain.manifest import StateStore
from streamjobs.domain.spec import (
    Deployment,
    Guarantee,
    RestartPolicyType,
)
from tests.unit.manifests import (
    EXACTLY_ONCE,
    OUTPUT,
    PIPELINE,
    STREAMING,
    assert_error,
    broken,
    changed,
    errors_of,
    parse,
    python_manifest,
)


class TestConfiguration:
    @pytest.mark.parametrize(
        ("manifest", "path", "message_part"),
        [
            broken(
                PIPELINE,
                [("spec.configuration.sparkConf", {"sql.shuffle.partitions": "8"})],
                'spec.configuration.sparkConf["sql.shuffle.partitions"]',
                "is not a valid Spark configuration key: a key that starts with 'spark.'",
                "spark-conf-key",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.sparkConfSecrets", {"hadoop.secret": "s"})],
                'spec.configuration.sparkConfSecrets["hadoop.secret"]',
                "is not a valid Spark configuration key",
                "spark-conf-secret-key",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.sparkConf", {"spark.x": {"nested": 1}})],
                'spec.configuration.sparkConf["spark.x"]',
                "must be a valid string",
                "spark-conf-not-scalar",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.env", {"MY-VAR": "x"})],
                "spec.configuration.env.MY-VAR",
                "is not a valid environment variable name",
                "env-name",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.envSecrets", {"API_KEY": " "})],
                "spec.configuration.envSecrets.API_KEY",
                "is not a valid name",
                "env-secret-name",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.javaOptions", ["-Xmx1g"])],
                "spec.configuration.javaOptions",
                "must be a valid string",
                "java-options",
            ),
            broken(
                PIPELINE,
                [("spec.configuration.configMaps", [""])],
                "spec.configuration.configMaps[0]",
                "is not a valid name",
                "config-map-name",
            ),
        ],
    )
    def test_rules(self, manifest: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(manifest, path, message_part)

    def test_scalar_values_are_kept_as_text(self) -> None:
        values = {"spark.a": 8, "spark.b": True, "spark.c": False, "spark.d": 0.5, "spark.e": "x"}
        manifest = changed(
            PIPELINE, ("spec.configuration", {"sparkConf": values, "env": {"N": 3, "DEBUG": True}})
        )
        configuration = parse(manifest).spec.configuration
        assert configuration.spark_conf == {
            "spark.a": "8",
            "spark.b": "true",
            "spark.c": "false",
            "spark.d": "0.5",
            "spark.e": "x",
        }
        assert configuration.env == {"N": "3", "DEBUG": "true"}

    def test_secrets_are_names(self) -> None:
        manifest = changed(
            PIPELINE,
            ("spec.configuration.envSecrets", {"API_KEY": "payments-api-key"}),
            ("spec.configuration.sparkConfSecrets", {"spark.hadoop.fs.s3a.secret.key": "s3"}),
        )
        configuration = parse(manifest).spec.configuration
        assert configuration.env_secrets == {"API_KEY": "payments-api-key"}
        assert configuration.spark_conf_secrets == {"spark.hadoop.fs.s3a.secret.key": "s3"}


class TestDependencies:
    @pytest.mark.parametrize(
        "package", ["org.apache.spark", "a:b", "a:b:c:d", "a:b:", "a b:c:d", ":b:c"]
    )
    def test_packages_are_maven_coordinates(self, package: str) -> None:
        manifest = changed(PIPELINE, ("spec.dependencies.packages", [package]))
        message_part = "is not a valid Maven coordinate: group:artifact:version"
        assert_error(manifest, "spec.dependencies.packages[0]", message_part)

    def test_valid_dependencies(self) -> None:
        dependencies = {
            "packages": ["org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.4"],
            "jars": ["file:///opt/jars/udfs.jar"],
            "files": ["local:///etc/app/conf.properties"],
            "pyFiles": ["libs/helpers.zip"],
        }
        parsed = parse(changed(PIPELINE, ("spec.dependencies", dependencies))).spec.dependencies
        assert parsed.py_files == ["libs/helpers.zip"]

    def test_locations_are_not_blank(self) -> None:
        manifest = changed(PIPELINE, ("spec.dependencies.jars", [" "]))
        assert_error(manifest, "spec.dependencies.jars[0]", "is not a valid location")


class TestInstance:
    @pytest.mark.parametrize(
        ("key", "value"), [("executor", "medium"), ("executors", 2), ("dynamic", False)]
    )
    def test_executor_fields_are_for_standard_only(self, key: str, value: Any) -> None:
        manifest = changed(PIPELINE, (f"spec.instance.{key}", value))
        assert_error(
            manifest,
            f"spec.instance.{key}",
            f"{key} is for deployment standard only; singleNode runs the whole job in its "
            f"driver (remove {key}, or set deployment: standard)",
        )

    def test_single_node_defaults(self) -> None:
        instance = parse(PIPELINE).spec.instance
        assert instance.deployment is Deployment.SINGLE_NODE
        assert (instance.driver, instance.executor, instance.executors) == ("small", None, None)
        assert (instance.dynamic, instance.volume) == (None, None)

    def test_standard_defaults(self) -> None:
        instance = parse(changed(PIPELINE, ("spec.instance.deployment", "standard"))).spec.instance
        assert (instance.executor, instance.executors, instance.dynamic) == ("medium", 1, False)

    def test_standard_keeps_what_is_given(self) -> None:
        given = {"deployment": "standard", "executor": "large", "executors": 4, "dynamic": True}
        instance = parse(changed(PIPELINE, ("spec.instance", given))).spec.instance
        assert (instance.executor, instance.executors, instance.dynamic) == ("large", 4, True)

    @pytest.mark.parametrize(
        ("instance", "path", "message_part"),
        [
            ({"deployment": "cluster"}, "spec.instance.deployment", "'singleNode' or 'standard'"),
            (
                {"deployment": "standard", "executors": 0},
                "spec.instance.executors",
                "must be greater than or equal to 1",
            ),
            ({"driver": ""}, "spec.instance.driver", "is not a valid name"),
            (
                {"volume": {"size": "ten gigs", "mountPath": "/data"}},
                "spec.instance.volume.size",
                "is not a valid Kubernetes quantity",
            ),
            (
                {"volume": {"size": "10Gi", "mountPath": "data"}},
                "spec.instance.volume.mountPath",
                "is not a valid absolute path",
            ),
            ({"volume": {"size": "10Gi"}}, "spec.instance.volume.mountPath", "is required"),
        ],
    )
    def test_rules(self, instance: dict[str, Any], path: str, message_part: str) -> None:
        assert_error(changed(PIPELINE, ("spec.instance", instance)), path, message_part)

    @pytest.mark.parametrize("size", ["10Gi", "500M", "1.5Ti", "1e9", "100"])
    def test_well_formed_volumes_are_refused_without_kubernetes(self, size: str) -> None:
        volume = {"size": size, "mountPath": "/data"}
        errors = errors_of(changed(PIPELINE, ("spec.instance.volume", volume)))
        assert [error.path for error in errors] == ["spec.instance.volume"]
        assert "needs the Kubernetes deployment" in errors[0].message


class TestRestartPolicy:
    def test_defaults(self) -> None:
        policy = parse(PIPELINE).spec.restart_policy
        assert policy.type is RestartPolicyType.NEVER
        assert (
            policy.on_submission_failure_retries,
            policy.on_submission_failure_retry_interval,
            policy.on_failure_retries,
            policy.on_failure_retry_interval,
        ) == (1, 5, 1, 5)

    @pytest.mark.parametrize(
        ("key", "value", "message_part"),
        [
            ("type", "Sometimes", "must be 'Never', 'Always' or 'OnFailure'"),
            ("onSubmissionFailureRetries", -1, "must be greater than or equal to 0"),
            ("onFailureRetries", -1, "must be greater than or equal to 0"),
            ("onSubmissionFailureRetryInterval", 0, "must be greater than or equal to 1"),
            ("onFailureRetryInterval", 0, "must be greater than or equal to 1"),
            ("onFailureRetries", "many", "must be a valid integer"),
        ],
    )
    def test_rules(self, key: str, value: Any, message_part: str) -> None:
        manifest = changed(PIPELINE, (f"spec.restartPolicy.{key}", value))
        assert_error(manifest, f"spec.restartPolicy.{key}", message_part)

    def test_zero_retries_are_allowed(self) -> None:
        policy = {"type": "OnFailure", "onFailureRetries": 0, "onSubmissionFailureRetries": 0}
        parsed = parse(changed(PIPELINE, ("spec.restartPolicy", policy))).spec.restart_policy
        assert parsed.type is RestartPolicyType.ON_FAILURE


class TestProcessing:
    def test_defaults(self) -> None:
        processing = parse(PIPELINE).spec.processing
        assert processing.guarantee is Guarantee.AT_LEAST_ONCE
        assert processing.snapshot_interval_millis is None
        assert processing.snapshots_to_keep == 3
        assert processing.suspend_on_failure is False
        assert processing.initial_snapshot_name is None
        assert processing.state_store is StateStore.HDFS

    @pytest.mark.parametrize(
        ("key", "value", "message_part"),
        [
            ("guarantee", "ALWAYS", "must be 'NONE', 'AT_LEAST_ONCE' or 'EXACTLY_ONCE'"),
            ("snapshotIntervalMillis", 0, "must be greater than or equal to 5000"),
            ("snapshotIntervalMillis", 4999, "must be greater than or equal to 5000"),
            ("snapshotsToKeep", 0, "must be greater than or equal to 1"),
            ("suspendOnFailure", "later", "must be a valid boolean"),
            ("initialSnapshotName", "", "is not a valid snapshot name"),
            ("initialSnapshotName", "-first", "is not a valid snapshot name"),
            ("stateStore", "memory", "must be 'hdfs' or 'rocksdb'"),
        ],
    )
    def test_rules(self, key: str, value: Any, message_part: str) -> None:
        manifest = changed(PIPELINE, (f"spec.processing.{key}", value))
        assert_error(manifest, f"spec.processing.{key}", message_part)


class TestExactlyOnce:
    def test_needs_a_checkpoint_location(self) -> None:
        assert_error(
            changed(PIPELINE, EXACTLY_ONCE),
            f"{STREAMING}.checkpointLocation",
            "EXACTLY_ONCE needs a checkpoint location",
        )

    def test_a_checkpoint_root_is_enough(self) -> None:
        assert parse(changed(PIPELINE, EXACTLY_ONCE), checkpoint_root="file:///cp").spec

    def test_an_explicit_checkpoint_location_is_enough(self) -> None:
        manifest = changed(PIPELINE, EXACTLY_ONCE, (f"{STREAMING}.checkpointLocation", "/cp/a"))
        assert parse(manifest).spec

    @pytest.mark.parametrize("sink", ["kafka", "console"])
    def test_kafka_and_console_sinks_cannot_give_it(self, sink: str) -> None:
        output = {"name": "evens", "format": sink}
        if sink == "kafka":
            output["dataset"] = "kafka-main:evens"
        errors = errors_of(changed(PIPELINE, EXACTLY_ONCE, (OUTPUT, output)), "file:///cp")
        assert errors == (
            FieldError(
                f"{OUTPUT}.format",
                f"'{sink}' cannot give EXACTLY_ONCE; use AT_LEAST_ONCE or an idempotent sink "
                "(parquet, delta, iceberg, jdbc with keys)",
            ),
        )

    def test_a_jdbc_sink_needs_key_columns(self) -> None:
        output = {"name": "evens", "format": "jdbc", "dataset": "warehouse:public.evens"}
        assert_error(
            changed(PIPELINE, EXACTLY_ONCE, (OUTPUT, output)),
            f"{OUTPUT}.options.keyColumns",
            "'jdbc' without keyColumns cannot give EXACTLY_ONCE",
            checkpoint_root="file:///cp",
        )

    def test_continuous_processing_cannot_give_it(self) -> None:
        manifest = changed(PIPELINE, EXACTLY_ONCE, (f"{STREAMING}.triggerMode", "Continuous"))
        assert_error(
            manifest,
            f"{STREAMING}.triggerMode",
            "Continuous cannot give EXACTLY_ONCE (continuous processing is at-least-once)",
            checkpoint_root="file:///cp",
        )

    @pytest.mark.parametrize("guarantee", ["NONE", "AT_LEAST_ONCE"])
    def test_other_guarantees_accept_any_sink(self, guarantee: str) -> None:
        output = {"name": "evens", "format": "console"}
        manifest = changed(PIPELINE, ("spec.processing.guarantee", guarantee), (OUTPUT, output))
        assert parse(manifest).spec.processing.guarantee == guarantee

    def test_applications_manage_their_own_guarantee(self) -> None:
        assert_error(
            changed(python_manifest(), EXACTLY_ONCE),
            "spec.processing.guarantee",
            "python/jvm jobs manage their own delivery guarantee",
        )
