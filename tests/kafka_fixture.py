"""The ``kafka_broker`` fixture: one real Kafka broker for the whole test session.

``tests/conftest.py`` imports the fixture from here. The broker is a single KRaft node on
127.0.0.1, started from jars that Maven resolves (see ``streamjobs.devtools.kafka``). Without
``java`` or ``mvn``, or without the jars and the network to fetch them, its tests are skipped, and
fail in CI (``CI=true``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from streamjobs.devtools.kafka import KafkaBroker
from streamjobs.devtools.maven import ResolutionError, ToolUnavailableError


def start_kafka_broker() -> KafkaBroker:
    """Start a broker, or skip the test (fail it in CI) when this machine cannot run one."""
    from tests.conftest import skip_or_fail  # conftest imports this module: import it late

    try:
        return KafkaBroker().start()
    except (ToolUnavailableError, ResolutionError) as missing:
        skip_or_fail(f"cannot start a Kafka broker: {missing}")


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[KafkaBroker]:
    """A running Kafka broker shared by the session's tests, stopped and deleted at its end."""
    broker = start_kafka_broker()
    yield broker
    broker.stop()
