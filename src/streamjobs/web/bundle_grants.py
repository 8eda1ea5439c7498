"""The grants form of a bundle's settings page: its rows as submitted (a subject and ticked
permission boxes per row), the grants they make, each refusal shown at the row it is about, and
a bundle's grants as rows again."""

from __future__ import annotations

import re
from typing import Any

from fastapi import Request

from streamjobs.domain.access import BundleGrant, Permission, Subject
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.services.bundles import BundleView

FormFields = dict[str, list[str]]


async def submitted_fields(request: Request) -> FormFields:
    """The submitted form, every name with all its values (checkboxes repeat names)."""
    data = await request.form()
    return {key: [v for v in data.getlist(key) if isinstance(v, str)] for key in data}


def first_value(fields: FormFields, key: str) -> str:
    return next(iter(fields.get(key, [])), "")


def grant_rows_of(fields: FormFields) -> list[dict[str, Any]]:
    """The grant rows as submitted: ``subject-N`` and its ticked ``permission-N`` boxes."""
    rows = []
    index = 0
    while f"subject-{index}" in fields:
        rows.append(
            {
                "subject": first_value(fields, f"subject-{index}").strip(),
                "permissions": set(fields.get(f"permission-{index}", [])),
            }
        )
        index += 1
    return rows


def grants_of(bundle: str, rows: list[dict[str, Any]]) -> tuple[list[BundleGrant], list[int]]:
    """The grants the rows make and, for each, the row it came from; ``InvalidInput`` at
    ``rows[N]`` for a row that makes no sense."""
    grants: list[BundleGrant] = []
    owners: list[int] = []
    errors = []
    seen: set[tuple[Subject, Permission]] = set()
    for index, row in enumerate(rows):
        if not row["subject"]:
            if row["permissions"]:
                errors.append(FieldError(f"rows[{index}]", "name a user or group to grant to"))
            continue
        try:
            subject = Subject.parse(row["subject"], path=f"rows[{index}]")
        except InvalidInput as error:
            errors.extend(error.errors)
            continue
        unknown = row["permissions"] - set(Permission)
        if unknown:
            errors.append(FieldError(f"rows[{index}]", f"unknown permission(s) {sorted(unknown)}"))
            continue
        for permission in sorted(Permission(p) for p in row["permissions"]):
            if (subject, permission) not in seen:
                seen.add((subject, permission))
                grants.append(BundleGrant(bundle, subject, permission))
                owners.append(index)
    if errors:
        raise InvalidInput(errors)
    return grants, owners


def row_errors(errors: tuple[FieldError, ...], owners: list[int]) -> dict[str, str]:
    """Each error by the row it is about (``rows[N]`` or the service's ``grants[K]...``)."""
    shown: dict[str, str] = {}
    for error in errors:
        row = re.match(r"rows\[(\d+)\]", error.path)
        grant = re.match(r"grants\[(\d+)\]", error.path)
        if row:
            key = f"row-{row.group(1)}"
        elif grant and int(grant.group(1)) < len(owners):
            key = f"row-{owners[int(grant.group(1))]}"
        else:
            key = ""
        shown[key] = error.message if key else str(error)
    return shown


def rows_of(view: BundleView) -> list[dict[str, Any]]:
    by_subject: dict[str, set[str]] = {}
    for grant in view.grants:
        by_subject.setdefault(str(grant.subject), set()).add(str(grant.permission))
    return [{"subject": s, "permissions": p} for s, p in sorted(by_subject.items())]
