"""Revision 0017 clears the snapshot interval earlier servers filled into every stored job (the
old default, 10000, which did nothing), since the field now takes periodic snapshots; a value
other than the old default was written on purpose and stays."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from sqlalchemy import Engine

from streamjobs.store import Store, migrate
from tests.factories import pipeline_manifest
from tests.store.conftest import AddJob
from tests.store.test_input_claims_migration import downgrade_to

pytestmark = pytest.mark.snapshots


def with_interval(manifest: dict[str, Any], interval: int) -> dict[str, Any]:
    stored = copy.deepcopy(manifest)
    stored["spec"]["processing"] = {"snapshotIntervalMillis": interval, "suspendOnFailure": True}
    return stored


def test_the_filled_default_is_cleared_and_a_chosen_interval_kept(
    store: Store, engine: Engine, add_job: AddJob
) -> None:
    add_job("filled", manifest=with_interval(pipeline_manifest("filled"), 10000))
    chosen = with_interval(pipeline_manifest("chosen"), 60000)
    add_job("chosen", manifest=chosen)
    downgrade_to(engine, "0016")

    migrate(engine)

    with store.transaction() as repos:
        filled = repos.jobs.get("filled")
        kept = repos.jobs.get("chosen")
    assert filled.manifest["spec"]["processing"] == {"suspendOnFailure": True}
    assert filled.version == 2
    assert kept.manifest == chosen
    assert kept.version == 1
