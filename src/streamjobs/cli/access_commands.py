"""The commands about who may do what: ``grant``, ``revoke``, ``get permissions`` and
``get audit``.

``grant PERMISSION SUBJECT`` takes one of three forms, told apart by PERMISSION:

- a bundle permission (VIEW, RUN, UPDATE, DELETE) with ``--bundle B``: on the jobs of bundle B.
  The bundle's grants are read, changed and put back whole (the API replaces them all at once);
- a domain permission (CREATE_JOB, MANAGE_BUNDLES, MANAGE_USERS), without ``--bundle``;
- ``run-as SERVICE_ACCOUNT SUBJECT``: SUBJECT may run jobs as that service account.

SUBJECT is ``user:NAME`` (a user or a service account) or ``group:NAME``. Several permissions of
one kind may be given at once, separated by commas: ``grant VIEW,RUN user:alice --bundle b``.
``revoke`` takes the same forms.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.table import Table

from streamjobs.cli.failures import EXIT_INVALID_INPUT, fail, reported_failures
from streamjobs.cli.output import OutputFormat, console, new_table, print_document, when
from streamjobs.client import StreamjobsClient, retry_on_conflict
from streamjobs.domain.access import DomainPermission, Permission, Subject

ClientFactory = Callable[[typer.Context], StreamjobsClient]

OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]
RUN_AS = "run-as"
BUNDLE_PERMISSIONS = [str(permission) for permission in Permission]
DOMAIN_PERMISSIONS = [str(permission) for permission in DomainPermission]

PermissionArgument = Annotated[
    str,
    typer.Argument(
        metavar="PERMISSION|run-as",
        help=f"With --bundle: {', '.join(BUNDLE_PERMISSIONS)}. Without: "
        f"{', '.join(DOMAIN_PERMISSIONS)}. Several with commas (VIEW,RUN). Or run-as.",
    ),
]
SubjectArgument = Annotated[
    str,
    typer.Argument(
        metavar="SUBJECT|SERVICE_ACCOUNT",
        help="user:NAME or group:NAME; after run-as, the service account's name.",
    ),
]
RunAsSubjectArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="SUBJECT", help="After run-as: user:NAME or group:NAME.", show_default=False
    ),
]
BundleOption = Annotated[
    str | None,
    typer.Option("--bundle", "-b", help="The bundle whose jobs a bundle permission is on."),
]


@dataclass(frozen=True)
class Change:
    """One grant or revoke, checked: exactly one of ``bundle``, ``service_account`` or
    neither (domain permissions) is set."""

    subject: str
    permissions: tuple[str, ...] = ()
    bundle: str | None = None
    service_account: str | None = None


def register(app: typer.Typer, get_app: typer.Typer, client_for: ClientFactory) -> None:
    """Add ``grant``, ``revoke``, ``get permissions`` and ``get audit``."""

    @app.command("grant")
    def grant(
        ctx: typer.Context,
        permission: PermissionArgument,
        subject: SubjectArgument,
        run_as_subject: RunAsSubjectArgument = None,
        bundle: BundleOption = None,
    ) -> None:
        """Grant a bundle permission (--bundle B), a domain permission, or run-as.

        streamjobs grant VIEW,RUN user:alice --bundle payments

        streamjobs grant CREATE_JOB group:data-eng

        streamjobs grant run-as ci-bot user:alice
        """
        change = _checked("grant", permission, subject, run_as_subject, bundle)
        with client_for(ctx) as client, reported_failures():
            message = _apply(client, change, granted=True)
        console().print(message)

    @app.command("revoke")
    def revoke(
        ctx: typer.Context,
        permission: PermissionArgument,
        subject: SubjectArgument,
        run_as_subject: RunAsSubjectArgument = None,
        bundle: BundleOption = None,
    ) -> None:
        """Take back a bundle permission (--bundle B), a domain permission, or run-as.

        streamjobs revoke RUN user:alice --bundle payments

        streamjobs revoke run-as ci-bot user:alice
        """
        change = _checked("revoke", permission, subject, run_as_subject, bundle)
        with client_for(ctx) as client, reported_failures():
            message = _apply(client, change, granted=False)
        console().print(message)

    @get_app.command("permissions")
    def get_permissions(
        ctx: typer.Context, bundle: BundleOption = None, output: OutputOption = OutputFormat.table
    ) -> None:
        """List who holds which domain permission, or with --bundle, the bundle's grants."""
        with client_for(ctx) as client, reported_failures():
            if bundle is None:
                document = client.list_permissions()
            else:
                document = {"bundle": bundle, "items": client.get_bundle(bundle)["grants"]}
        if output is not OutputFormat.table:
            print_document(document, output)
        elif bundle is None:
            console().print(_domain_grants_table(document))
        else:
            table = new_table("SUBJECT", "PERMISSIONS")
            for item in document["items"]:
                table.add_row(item["subject"], ",".join(item["permissions"]))
            console().print(table)

    @get_app.command("audit")
    def get_audit(
        ctx: typer.Context,
        actor: Annotated[str | None, typer.Option(help="Only changes by this user.")] = None,
        kind: Annotated[
            str | None, typer.Option(help="Only changes to this kind: job, bundle, user…")
        ] = None,
        action: Annotated[
            str | None, typer.Option(help="Only actions starting with this, e.g. job.run.")
        ] = None,
        limit: Annotated[int, typer.Option(help="At most this many, newest first.")] = 50,
        offset: Annotated[int, typer.Option(help="Skip this many of the newest.")] = 0,
        output: OutputOption = OutputFormat.table,
    ) -> None:
        """Show the audit trail, newest first: who changed what, when, from where (admins)."""
        with client_for(ctx) as client, reported_failures():
            page = client.list_audit(
                actor=actor, kind=kind, action=action, limit=limit, offset=offset
            )
        if output is not OutputFormat.table:
            print_document(page, output)
            return
        console().print(_audit_table(page["items"]))
        shown = page["offset"] + len(page["items"])
        if shown < page["total"]:
            console(stderr=True).print(
                f"{len(page['items'])} of {page['total']} entries; --offset {shown} for more"
            )


def _checked(
    verb: str, permission: str, subject: str, run_as_subject: str | None, bundle: str | None
) -> Change:
    """The change the arguments ask for, or exit 2 saying what is wrong with them."""
    if permission.lower() == RUN_AS:
        if run_as_subject is None:
            raise _usage(
                f"{verb} run-as needs a service account and a subject: {verb} run-as "
                "SERVICE_ACCOUNT user:NAME|group:NAME"
            )
        if bundle is not None:
            raise _usage(f"{verb} run-as is not about a bundle: drop --bundle")
        return Change(_subject(run_as_subject), service_account=subject)
    if run_as_subject is not None:
        raise _usage(f"unexpected argument {run_as_subject!r}: only run-as takes two")
    names = tuple(dict.fromkeys(p.strip().upper() for p in permission.split(",") if p.strip()))
    unknown = [p for p in names if p not in BUNDLE_PERMISSIONS + DOMAIN_PERMISSIONS]
    if unknown or not names:
        raise _usage(
            f"{', '.join(unknown) or repr(permission)} is not a permission: with --bundle, "
            f"{', '.join(BUNDLE_PERMISSIONS)}; without, {', '.join(DOMAIN_PERMISSIONS)}; or run-as"
        )
    if bundle is not None and (domain := [p for p in names if p in DOMAIN_PERMISSIONS]):
        raise _usage(f"{', '.join(domain)} is not a bundle permission: drop --bundle")
    if bundle is None and (on_bundle := [p for p in names if p in BUNDLE_PERMISSIONS]):
        raise _usage(
            f"{', '.join(on_bundle)} is a permission on a bundle's jobs: name it with --bundle"
        )
    return Change(_subject(subject), permissions=names, bundle=bundle)


def _subject(text: str) -> str:
    with reported_failures():
        return str(Subject.parse(text))


def _usage(message: str) -> typer.Exit:
    return fail(message, code=EXIT_INVALID_INPUT)


def _apply(client: StreamjobsClient, change: Change, *, granted: bool) -> str:
    """Make the change on the server; what to tell the user."""
    if change.service_account is not None:
        if granted:
            client.grant_run_as(change.service_account, change.subject)
            return f"{change.subject} may run jobs as serviceaccount/{change.service_account}"
        client.revoke_run_as(change.service_account, change.subject)
        return f"{change.subject} may no longer run jobs as serviceaccount/{change.service_account}"
    if change.bundle is not None:
        return _change_bundle_grants(client, change, granted=granted)
    for permission in change.permissions:
        if granted:
            client.grant_permission(permission, change.subject)
        else:
            client.revoke_permission(permission, change.subject)
    listed = ", ".join(change.permissions)
    return (
        f"granted {listed} to {change.subject}"
        if granted
        else (f"revoked {listed} from {change.subject}")
    )


def _change_bundle_grants(client: StreamjobsClient, change: Change, *, granted: bool) -> str:
    """Read the bundle's grants, add or take away the permissions, and put them back (again,
    from a fresh read, if someone else changed the bundle in between)."""
    name = change.bundle
    assert name is not None
    where = f"bundle/{name}"
    asked = set(change.permissions)

    def change_grants() -> tuple[set[str], set[str]]:
        bundle = client.get_bundle(name)
        grants = {g["subject"]: set(g["permissions"]) for g in bundle["grants"]}
        held = grants.setdefault(change.subject, set())
        changing = asked - held if granted else asked & held
        if changing:
            if granted:
                held.update(changing)
            else:
                held.difference_update(changing)
            body = [
                {"subject": subject, "permissions": sorted(permissions)}
                for subject, permissions in sorted(grants.items())
                if permissions
            ]
            client.set_bundle_grants(name, body, resource_version=bundle["resourceVersion"])
        return changing, held

    changing, held = retry_on_conflict(change_grants)
    if not changing:
        state = "already holds" if granted else "holds none of"
        return f"{change.subject} {state} {', '.join(change.permissions)} on {where}; unchanged"
    listed = ", ".join(p for p in change.permissions if p in changing)
    if granted:
        return f"granted {listed} on {where} to {change.subject}"
    message = f"revoked {listed} on {where} from {change.subject}"
    if Permission.VIEW in changing and held:
        message += f" (it still sees the jobs: {', '.join(sorted(held))} implies VIEW)"
    return message


def _domain_grants_table(document: dict[str, Any]) -> Table:
    labels: dict[str, str] = document.get("permissions", {})
    table = new_table("PERMISSION", "MEANING", "SUBJECT")
    for item in sorted(document["items"], key=lambda i: (i["permission"], i["subject"])):
        permission = item["permission"]
        table.add_row(permission, labels.get(permission, "-"), item["subject"])
    return table


def _plain(value: object) -> str:
    """A detail's value as written in JSON (null, true, 3), a string as it is."""
    return value if isinstance(value, str) else json.dumps(value)


def _audit_table(entries: list[dict[str, Any]]) -> Table:
    table = new_table("AT", "ACTOR", "ACTION", "RESOURCE", "DETAIL", "SOURCE")
    table.columns[4].no_wrap = False  # a long detail wraps within its column, squeezing no other
    for entry in entries:
        resource = entry["resource"]
        detail = entry.get("detail") or {}
        table.add_row(
            when(entry["at"]),
            entry["actor"],
            entry["action"],
            f"{resource['kind']}/{resource['name']}",
            ",".join(f"{key}={_plain(value)}" for key, value in detail.items()) or "-",
            entry.get("source") or "-",
        )
    return table
