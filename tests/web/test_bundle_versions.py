"""Settings → Bundles when two people edit one bundle: each form carries the version the page
showed, and a form sent after someone else's change saves nothing and shows the bundle as it now
is (409), like the API's ``If-Match``."""

from __future__ import annotations

import html

from streamjobs.domain.access import BundleGrant, Permission, Subject, SubjectKind
from streamjobs.domain.quotas import Quota
from tests.staged_server import Stage
from tests.web.access_helpers import add_user, admin_of, read
from tests.web.conftest import Browser

BUNDLES = "/settings/bundles"
QUOTAS = {"description": "", "maxRunningApplications": "", "maxMemoryMb": ""}
CHANGED_MEANWHILE = "was changed by someone else after you opened this page"


def shown_versions(browser: Browser, bundle: str) -> set[str]:
    """The version every form of the bundle's page carries."""
    page = read(browser.page(f"{BUNDLES}/{bundle}").text)
    return {
        element.attrs["value"]
        for element in page.elements
        if element.tag == "input" and element.attrs.get("name") == "version"
    }


def test_a_form_sent_after_another_change_saves_nothing(stage: Stage, browser: Browser) -> None:
    services, admin = stage.services, admin_of(stage)
    add_user(stage, "alice")
    services.bundles.create("pay", actor=admin)
    (opened,) = shown_versions(browser, "pay")
    services.bundles.update("pay", actor=admin, description="theirs", quota=Quota(max_cores=4))

    stale_quotas = browser.submit(f"{BUNDLES}/pay", {**QUOTAS, "maxCores": "8", "version": opened})
    stale_grants = browser.submit(
        f"{BUNDLES}/pay/grants",
        {"subject-0": "user:alice", "permission-0": "RUN", "version": opened},
    )
    stale_delete = browser.submit(f"{BUNDLES}/pay/delete", {"version": opened})

    for answer in (stale_quotas, stale_grants):
        assert answer.status_code == 409
        assert CHANGED_MEANWHILE in " ".join(answer.text.split())
        assert read(answer.text).by_id["quota-description"].attrs["value"] == "theirs"
    assert stale_delete.status_code == 409
    kept = services.bundles.get("pay", actor=admin)
    assert (kept.bundle.description, kept.bundle.quota, kept.grants) == (
        "theirs",
        Quota(max_cores=4),
        (),
    )

    (current,) = shown_versions(browser, "pay")
    saved = browser.submit(
        f"{BUNDLES}/pay/grants",
        {"subject-0": "user:alice", "permission-0": "RUN", "version": current},
    )
    assert saved.status_code == 303
    assert services.bundles.get("pay", actor=admin).grants == (
        BundleGrant("pay", Subject(SubjectKind.USER, "alice"), Permission.RUN),
    )
    assert shown_versions(browser, "pay") == {str(int(current) + 1)}


def test_a_version_that_is_no_number_is_refused(stage: Stage, browser: Browser) -> None:
    stage.services.bundles.create("pay", actor=admin_of(stage))

    refused = browser.submit(f"{BUNDLES}/pay", {**QUOTAS, "maxCores": "8", "version": "soon"})

    assert refused.status_code == 422
    assert "version: must be a whole number from 0 to 2147483647, not 'soon'" in html.unescape(
        refused.text
    )
    assert stage.services.bundles.get("pay", actor=admin_of(stage)).bundle.quota == Quota()
