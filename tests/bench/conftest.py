"""The bench harness's own tests: each is marked ``bench`` (``-m bench`` / ``-m "not bench"``).

Plain ``pytest`` runs them with the rest, so CI covers the harness. The Spark ones borrow the
shared session of tests/spark.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.spark.conftest import spark  # noqa: F401 - the shared local[2] session

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.bench)
