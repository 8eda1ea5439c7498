"""What the settings pages share about their forms: a form sent back with what was typed and an
error beside each field, reading optional whole numbers, and the notice after a change.

A settings page holds several small forms; when one of them is refused, the page is rendered again
(422, or 409 for a name already taken) with that form's values and errors, and every other form
empty. A service's error whose path names none of the form's fields is shown at the top of it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode

from fastapi.responses import RedirectResponse

from streamjobs.domain.errors import AlreadyExists, FieldError, InvalidInput


@dataclass(frozen=True)
class Failed:
    """A refused form: which one (``form``), what was typed, each field's error ("" for the
    form as a whole)."""

    form: str
    values: Mapping[str, str] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)


def failed(
    form: str, values: Mapping[str, str], errors: Iterable[FieldError], fields: Collection[str]
) -> Failed:
    """The refused ``form``; errors at a path not among ``fields`` go to the form itself."""
    shown: dict[str, str] = {}
    for error in errors:
        key = error.path if error.path in fields else ""
        message = error.message if key or not error.path else str(error)
        shown[key] = f"{shown[key]}; {message}" if key in shown else message
    return Failed(form=form, values=dict(values), errors=shown)


def refused(
    form: str,
    values: Mapping[str, str],
    error: InvalidInput | AlreadyExists,
    fields: Collection[str],
) -> tuple[Failed, int]:
    """The refused ``form`` and its status: 422 for bad input, 409 for a name already taken
    (shown at the form's ``name`` field)."""
    if isinstance(error, AlreadyExists):
        return failed(form, values, [FieldError("name", error.detail)], fields), 409
    return failed(form, values, error.errors, fields), 422


def whole_numbers(fields: Mapping[str, str]) -> dict[str, int | None]:
    """Each optional whole-number field by its path (empty: None); ``InvalidInput`` naming every
    field that is not one."""
    numbers: dict[str, int | None] = {}
    errors = []
    for path, text in fields.items():
        text = text.strip()
        if not text:
            numbers[path] = None
            continue
        try:
            numbers[path] = int(text)
        except ValueError:
            errors.append(FieldError(path, f"{text!r} is not a whole number"))
    if errors:
        raise InvalidInput(errors)
    return numbers


def back_to(page: str, anchor: str = "", **query: str) -> RedirectResponse:
    """POST-redirect-GET to ``page`` with the outcome in ``query``, at ``anchor``."""
    target = f"{page}?{urlencode(query)}" if query else page
    return RedirectResponse(target + (f"#{anchor}" if anchor else ""), status_code=303)


def notice_of(outcomes: Mapping[str, str], done: str, name: str) -> str | None:
    """The notice for a known outcome code (``done``) about ``name``; None for any other code,
    so the page never repeats text taken from its address."""
    template = outcomes.get(done)
    return template.format(name=name) if template and name else None
