"""A resource's version as clients send it back (a manifest's ``metadata.resourceVersion``, an
``If-Match`` header, a form's hidden field): one reading for all, so that a version that is no
whole number, or one too large for the store's column, is bad input at its path, never a crash.
"""

from __future__ import annotations

from streamjobs.domain.errors import FieldError, InvalidInput

MAX_RESOURCE_VERSION = 2**31 - 1
"""The largest version the store's INTEGER column holds on both backends."""


def resource_version(value: object, *, path: str) -> int:
    """``value`` (``3``, ``"3"``) as a version; ``InvalidInput`` at ``path`` otherwise."""
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or int(text) > MAX_RESOURCE_VERSION:
        message = f"must be a whole number from 0 to {MAX_RESOURCE_VERSION}, not {value!r}"
        raise InvalidInput([FieldError(path, message)])
    return int(text)
