"""A bundle's data roots and Spark setting policy through the bundle service, on each backend:
kept in normal form, refused with the field path of each bad entry (nothing written), managed
only with Manage bundles, audited, and seeded into the ``default`` bundle on the first start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamjobs.domain.access import Actor, DomainPermission, Principal, Subject, SubjectKind
from streamjobs.domain.bundle_policy import SparkConfPolicy
from streamjobs.domain.clock import FakeClock
from streamjobs.domain.errors import Forbidden, InvalidInput
from streamjobs.domain.quotas import Quota
from streamjobs.services.audit_log import AuditQuery
from streamjobs.services.container import Services, open_services
from streamjobs.settings import Settings

ADMIN = Actor(Principal("admin", is_admin=True))


def paths_of(error: pytest.ExceptionInfo[InvalidInput]) -> list[str]:
    return [field.path for field in error.value.errors]


def test_data_roots_are_kept_in_normal_form_with_the_spark_policy(services: Services) -> None:
    created = services.bundles.create(
        "pay",
        actor=ADMIN,
        data_roots=["/data/pay/", "file:/data/shared/../lake", "S3A://Bucket/pay"],
        spark_conf=SparkConfPolicy(allowed=(" spark.jars.repositories",), refused=("spark.*",)),
    )

    bundle = services.bundles.get("pay", actor=ADMIN).bundle
    assert bundle == created.bundle
    assert bundle.data_roots == ("file:///data/pay", "file:///data/lake", "s3a://bucket/pay")
    assert bundle.spark_conf_allowed == ("spark.jars.repositories",)
    assert bundle.spark_conf_refused == ("spark.*",)
    entry = services.audit.list(AuditQuery(action="bundle.created"), actor=ADMIN).items[0]
    assert entry.detail["dataRoots"] == list(bundle.data_roots)
    assert entry.detail["sparkConf"] == {
        "allowed": ["spark.jars.repositories"],
        "refused": ["spark.*"],
    }


def test_a_bundle_created_without_roots_has_none(services: Services) -> None:
    assert services.bundles.create("pay", actor=ADMIN).bundle.data_roots == ()


@pytest.mark.parametrize(
    ("root", "message"),
    [
        ("data/pay", "relative path"),
        ("", "absolute path or a URI"),
        ("/", "whole file system"),
        ("file:///", "whole file system"),
        ("s3a://", "whole file system"),
        ("file://elsewhere/data", "another host"),
        ("mailto:someone", "authority"),
        ("HOME", "inside the server's home"),
        ("HOME/checkpoints/../apps", "inside the server's home"),
        ("PARENT", "holds the server's home"),
    ],
)
def test_a_bad_data_root_is_refused_at_its_index(
    services: Services, root: str, message: str
) -> None:
    home = services.settings.resolved_home
    root = root.replace("HOME", str(home)).replace("PARENT", str(home.parent))

    with pytest.raises(InvalidInput) as refused:
        services.bundles.create("pay", actor=ADMIN, data_roots=["/data/ok", root])

    assert paths_of(refused) == ["dataRoots[1]"]
    assert message in refused.value.errors[0].message
    assert [view.bundle.name for view in services.bundles.list(actor=ADMIN)] == ["default"]


def test_a_root_repeated_in_another_form_is_refused(services: Services) -> None:
    with pytest.raises(InvalidInput) as refused:
        services.bundles.create("pay", actor=ADMIN, data_roots=["/data/pay", "file:///data/pay/"])

    assert paths_of(refused) == ["dataRoots[1]"]
    assert "repeats dataRoots[0]" in refused.value.errors[0].message


@pytest.mark.parametrize(
    "entry",
    ["hadoop.fs.defaultFS", "spark", "spark.", "spark..x", "spark.sql.*.x", "spark x", "sparks.*"],
)
def test_a_spark_policy_entry_that_is_no_setting_is_refused(services: Services, entry: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        services.bundles.create(
            "pay", actor=ADMIN, spark_conf=SparkConfPolicy(allowed=("spark.ok", entry))
        )

    assert paths_of(refused) == ["sparkConf.allowed[1]"]


def test_spark_policy_entries_are_not_repeated_nor_both_allowed_and_refused(
    services: Services,
) -> None:
    policy = SparkConfPolicy(
        allowed=("spark.jars.repositories", "spark.jars.repositories"),
        refused=("spark.sql.*", "spark.jars.repositories"),
    )

    with pytest.raises(InvalidInput) as refused:
        services.bundles.create("pay", actor=ADMIN, quota=Quota(max_cores=-1), spark_conf=policy)

    assert paths_of(refused) == [
        "quota.maxCores",
        "sparkConf.allowed[1]",
        "sparkConf.refused[1]",
    ]
    assert "also allowed" in refused.value.errors[2].message


def test_an_update_replaces_the_policy_given_and_keeps_the_rest(services: Services) -> None:
    services.bundles.create("pay", actor=ADMIN, data_roots=["/data/pay"])

    quotas_only = services.bundles.update(
        "pay", actor=ADMIN, description="Payments", quota=Quota(max_cores=4), expected_version=1
    )
    replaced = services.bundles.update(
        "pay",
        actor=ADMIN,
        description="Payments",
        quota=Quota(max_cores=4),
        data_roots=["/data/other"],
        spark_conf=SparkConfPolicy(allowed=("spark.jars.repositories",)),
        expected_version=2,
    )
    policy_only = services.bundles.set_policy(
        "pay", actor=ADMIN, data_roots=[], spark_conf=SparkConfPolicy(), expected_version=3
    )

    assert quotas_only.bundle.data_roots == ("file:///data/pay",)
    assert replaced.bundle.data_roots == ("file:///data/other",)
    assert replaced.bundle.spark_conf_allowed == ("spark.jars.repositories",)
    final = policy_only.bundle
    assert (final.description, final.quota, final.version) == ("Payments", Quota(max_cores=4), 4)
    assert (final.data_roots, final.spark_conf_allowed) == ((), ())
    entry = services.audit.list(AuditQuery(action="bundle.configured"), actor=ADMIN).items[0]
    assert (entry.detail["dataRoots"], entry.detail["maxCores"]) == ([], 4)


def test_a_refused_policy_change_writes_nothing(services: Services) -> None:
    services.bundles.create("pay", actor=ADMIN, data_roots=["/data/pay"])

    with pytest.raises(InvalidInput):
        services.bundles.set_policy(
            "pay", actor=ADMIN, data_roots=["/data/new", "/"], spark_conf=SparkConfPolicy()
        )

    bundle = services.bundles.get("pay", actor=ADMIN).bundle
    assert (bundle.data_roots, bundle.version) == (("file:///data/pay",), 1)


def test_only_those_who_manage_bundles_set_the_policy(services: Services) -> None:
    services.people.create_user("alice", actor=ADMIN)
    services.people.create_user("bob", actor=ADMIN)
    alice = Actor(services.identity.principal("alice"))
    services.people.set_domain_grant(
        Subject(SubjectKind.USER, "bob"),
        DomainPermission.MANAGE_BUNDLES,
        granted=True,
        actor=ADMIN,
    )
    bob = Actor(services.identity.principal("bob"))

    with pytest.raises(Forbidden):
        services.bundles.set_policy(
            "default", actor=alice, data_roots=["/data"], spark_conf=SparkConfPolicy()
        )
    changed = services.bundles.set_policy(
        "default", actor=bob, data_roots=["/data"], spark_conf=SparkConfPolicy()
    )

    assert changed.bundle.data_roots == ("file:///data",)


def settings_of(database_url: str, tmp_path: Path, **given: Any) -> Settings:
    return Settings(home=tmp_path / "home", database_url=database_url, **given)


def test_the_default_bundle_gets_its_roots_on_the_first_start(
    database_url: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    settings = settings_of(
        database_url,
        tmp_path,
        default_data_roots=["/tmp/streamjobs/", "file:///tmp/streamjobs", str(home / "apps")],
        checkpoint_root="file:///var/checkpoints",
    )

    services = open_services(settings, clock=FakeClock())

    default = services.bundles.get("default", actor=ADMIN).bundle
    assert default.data_roots == ("file:///tmp/streamjobs",)
    assert default.version == 2


def test_the_checkpoint_root_is_the_servers_and_never_a_data_root(
    database_url: str, tmp_path: Path
) -> None:
    """Derived checkpoints are each their own job's: a root holding them all is refused."""
    settings = settings_of(
        database_url,
        tmp_path,
        default_data_roots=["/srv/data", "/var/checkpoints/default"],
        checkpoint_root="file:///var/checkpoints",
    )

    services = open_services(settings, clock=FakeClock())

    assert services.bundles.get("default", actor=ADMIN).bundle.data_roots == ("file:///srv/data",)


def test_roots_changed_after_the_first_start_are_left_alone(
    database_url: str, tmp_path: Path
) -> None:
    first = open_services(settings_of(database_url, tmp_path), clock=FakeClock())
    first.bundles.set_policy("default", actor=ADMIN, data_roots=[], spark_conf=SparkConfPolicy())
    first.store.close()

    again = open_services(
        settings_of(database_url, tmp_path, default_data_roots=["/srv/data"]), clock=FakeClock()
    )

    default = again.bundles.get("default", actor=ADMIN).bundle
    assert (default.data_roots, default.version) == ((), 3)


def test_a_relative_default_data_root_is_a_settings_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="relative path"):
        Settings(home=tmp_path, default_data_roots=["data"])
