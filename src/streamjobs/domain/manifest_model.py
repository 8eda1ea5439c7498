"""The base of every manifest block, apart from the blocks themselves so that the blocks of one
concern (``alerts``) can live in their own module and ``manifest`` still gathers them all.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic.fields import ComputedFieldInfo, FieldInfo

JavaInt = Annotated[int, Field(le=2**31 - 1)]
"""A count or duration that reaches the JVM as an int; a larger one would overflow there."""
JavaLong = Annotated[int, Field(le=2**63 - 1)]


def _field_title(name: str, field: FieldInfo | ComputedFieldInfo) -> str:
    """JSON Schema titles are the manifest's keys (``sparkConf``, not ``Spark Conf``)."""
    return field.alias or to_camel(name)


class ManifestModel(BaseModel):
    """Base of every manifest block: camelCase keys (snake_case accepted too), and unknown keys
    are errors, so a misspelt key fails instead of being silently ignored."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        serialize_by_alias=True,
        extra="forbid",
        allow_inf_nan=False,
        use_attribute_docstrings=True,
        field_title_generator=_field_title,
    )
