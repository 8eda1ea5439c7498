"""A version a client sends back is a whole number the store can hold, or bad input at its path."""

from __future__ import annotations

import pytest

from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.versions import MAX_RESOURCE_VERSION, resource_version


@pytest.mark.parametrize(("value", "version"), [(3, 3), ("3", 3), (" 12 ", 12), ("0", 0)])
def test_whole_numbers_are_versions(value: object, version: int) -> None:
    assert resource_version(value, path="metadata.resourceVersion") == version


@pytest.mark.parametrize(
    "value", ["soon", "", "-1", "1.5", "²", "٣", str(MAX_RESOURCE_VERSION + 1)]
)
def test_anything_else_is_bad_input_at_its_path(value: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        resource_version(value, path="header.If-Match")

    (error,) = refused.value.errors
    assert error.path == "header.If-Match"
    assert f"from 0 to {MAX_RESOURCE_VERSION}" in error.message
