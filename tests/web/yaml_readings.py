"""Counts the YAML documents composed in this process (the test servers run in it too), so that a
test can show a text is read once, not once more for each of its errors."""

from __future__ import annotations

from typing import Any

import pytest
from yaml.composer import Composer

from tests.factories import RATE_PIPELINE_YAML


class CountedReadings:
    """How many YAML documents were composed (read into a node tree) since it was made."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        compose_document = Composer.compose_document

        def counted(composer: Composer) -> Any:
            self.count += 1
            return compose_document(composer)

        monkeypatch.setattr(Composer, "compose_document", counted)


def with_bad_inputs(count: int) -> str:
    """The rate pipeline block with ``count`` more inputs, each of an unknown format."""
    extra = "".join(f"  - name: extra{i}\n    format: ratez\n" for i in range(count))
    return RATE_PIPELINE_YAML.replace("steps:\n", extra + "steps:\n")
