"""Settings → Bundles: a bundle's data roots and Spark setting policy, shown to whoever sees the
bundle and edited (one entry a line) by those with Manage bundles; a bad entry is shown beside
its field with its line, a stale or forged form saves nothing."""

from __future__ import annotations

from contextlib import closing

from streamjobs.domain.access import Permission
from streamjobs.domain.bundle_policy import SparkConfPolicy
from tests.staged_server import Stage
from tests.web.access_helpers import add_user, admin_of, field_error, read, signed_in
from tests.web.conftest import Browser

BUNDLES = "/settings/bundles"
POLICY = f"{BUNDLES}/pay/policy"


def shown_text(html: str, element_id: str) -> str:
    return " ".join(read(html).by_id[element_id].text.split())


def test_the_policy_form_saves_and_the_pages_show_it(stage: Stage, browser: Browser) -> None:
    services, admin = stage.services, admin_of(stage)
    services.bundles.create("pay", actor=admin, data_roots=["/data/old"])

    saved = browser.submit(
        POLICY,
        {
            "dataRoots": "/data/pay/\n\n  s3a://Lake/pay  \n",
            "sparkConfAllowed": "spark.jars.repositories",
            "sparkConfRefused": "spark.sql.catalog.*\nspark.eventLog.*",
            "version": "1",
        },
    )

    assert saved.status_code == 303
    assert saved.headers["location"] == f"{BUNDLES}/pay?done=policy&name=pay#policy"
    bundle = services.bundles.get("pay", actor=admin).bundle
    assert bundle.data_roots == ("file:///data/pay", "s3a://lake/pay")
    assert bundle.spark_conf_allowed == ("spark.jars.repositories",)
    assert bundle.spark_conf_refused == ("spark.sql.catalog.*", "spark.eventLog.*")
    page = browser.page(saved.headers["location"])
    assert "Data roots and Spark settings of “pay” saved." in page.text
    facts = read(page.text).find("dd", None, data_policy="dataRoots")
    assert " ".join(facts[0].text.split()) == "file:///data/pay s3a://lake/pay"
    assert shown_text(page.text, "policy-roots") == "file:///data/pay s3a://lake/pay"
    (row,) = read(browser.page(BUNDLES).text).find("tr", None, data_bundle="pay")
    row_text = " ".join(row.text.split())
    assert "file:///data/pay s3a://lake/pay" in row_text
    assert "allowed spark.jars.repositories" in row_text
    assert "refused spark.sql.catalog.*, spark.eventLog.*" in row_text


def test_a_bad_root_is_shown_beside_its_field_with_its_line(stage: Stage, browser: Browser) -> None:
    services, admin = stage.services, admin_of(stage)
    services.bundles.create("pay", actor=admin, data_roots=["/data/old"])
    typed = "/data/new\n\nrelative/path\n/"

    refused = browser.submit(
        POLICY, {"dataRoots": typed, "sparkConfAllowed": "hadoop.fs.x", "version": "1"}
    )

    assert refused.status_code == 422
    roots_error = field_error(refused.text, "policy-roots")
    assert "line 3: 'relative/path' is a relative path" in roots_error
    assert "line 4: '/' is a whole file system" in roots_error
    assert "line 1: 'hadoop.fs.x' is neither a Spark setting" in field_error(
        refused.text, "policy-allowed"
    )
    assert read(refused.text).by_id["policy-roots"].text.strip("\n") == typed
    kept = services.bundles.get("pay", actor=admin).bundle
    assert (kept.data_roots, kept.spark_conf_allowed, kept.version) == (
        ("file:///data/old",),
        (),
        1,
    )


def test_a_root_under_the_servers_home_is_refused(stage: Stage, browser: Browser) -> None:
    stage.services.bundles.create("pay", actor=admin_of(stage))
    home = stage.services.settings.resolved_home

    refused = browser.submit(POLICY, {"dataRoots": str(home / "apps"), "version": "1"})

    assert refused.status_code == 422
    assert "inside the server's home" in field_error(refused.text, "policy-roots")


def test_a_stale_or_forged_policy_form_saves_nothing(stage: Stage, browser: Browser) -> None:
    services, admin = stage.services, admin_of(stage)
    services.bundles.create("pay", actor=admin)
    services.bundles.set_policy(
        "pay", actor=admin, data_roots=["/data/theirs"], spark_conf=SparkConfPolicy()
    )

    stale = browser.submit(POLICY, {"dataRoots": "/data/mine", "version": "1"})
    forged = browser.client.post(POLICY, data={"dataRoots": "/data/mine", "csrf": "forged"})

    assert stale.status_code == 409
    assert shown_text(stale.text, "policy-roots") == "file:///data/theirs"
    assert forged.status_code == 403
    assert services.bundles.get("pay", actor=admin).bundle.data_roots == ("file:///data/theirs",)


def test_without_manage_bundles_the_policy_is_shown_but_not_editable(stage: Stage) -> None:
    services, admin = stage.services, admin_of(stage)
    services.bundles.create(
        "pay",
        actor=admin,
        data_roots=["/data/pay"],
        spark_conf=SparkConfPolicy(refused=("spark.sql.*",)),
    )
    add_user(stage, "alice", bundle="pay", permissions=[Permission.VIEW])
    alice = signed_in(stage, "alice")
    with closing(alice.client):
        page = alice.page(f"{BUNDLES}/pay")
        refused = alice.submit(POLICY, {"dataRoots": "/", "version": "2"})

    assert page.status_code == 200
    shown = read(page.text)
    assert not shown.forms_to(POLICY)
    assert "policy-roots" not in shown.by_id
    facts = " ".join(shown.find("dd", None, data_policy="sparkConfRefused")[0].text.split())
    assert facts == "spark.sql.*"
    assert "file:///data/pay" in page.text
    assert refused.status_code == 403
    assert services.bundles.get("pay", actor=admin).bundle.data_roots == ("file:///data/pay",)
