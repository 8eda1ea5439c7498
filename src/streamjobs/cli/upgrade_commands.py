"""``streamjobs upgrade JOB``, ``get upgrades JOB`` and ``describe upgrade JOB ID``: move a job's
running application to the job's current spec, and the job's history of upgrades.

The server checks first (last-state and snapshot mode) and refuses an upgrade whose new spec does
not fit the running one's checkpoint, listing each reason; ``--dry-run`` shows that check alone
and exits 1 when it finds the new spec does not fit. Otherwise ``upgrade`` follows the upgrade
until it has ended (the new application watched for ``spec.upgrade.rollbackWithinSeconds``),
printing each status it reaches, and exits 1 when it was rolled back or failed: a script cannot
count on the new spec running then.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from streamjobs.cli.failures import fail, reported_failures
from streamjobs.cli.output import OutputFormat, console, new_table, print_list, print_one, when
from streamjobs.cli.polling import until_final
from streamjobs.client import StreamjobsClient
from streamjobs.formatting import UNKNOWN

ClientFactory = Callable[[typer.Context], StreamjobsClient]
OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]
POLL_SECONDS = 1.0
DEFAULT_TIMEOUT_SECONDS = 900.0
ENDED = frozenset({"SUCCEEDED", "ROLLED_BACK", "FAILED"})


class Mode(StrEnum):
    last_state = "last-state"
    snapshot = "snapshot"
    stateless = "stateless"


def register(
    app: typer.Typer, get_app: typer.Typer, describe_app: typer.Typer, client_for: ClientFactory
) -> None:
    """Add the upgrade commands to the ``streamjobs`` command."""

    @app.command("upgrade")
    def upgrade(
        ctx: typer.Context,
        job: str,
        mode: Annotated[
            Mode,
            typer.Option(
                "--mode",
                help="last-state: the new spec on the same checkpoint; snapshot: on a copy of "
                "the snapshot taken at the stop; stateless: on a fresh checkpoint.",
            ),
        ] = Mode.last_state,
        dry_run: Annotated[
            bool,
            typer.Option("--dry-run", help="Only check whether the new spec fits; stop nothing."),
        ] = False,
        wait: Annotated[
            bool,
            typer.Option(
                "--wait/--no-wait",
                help="Follow the upgrade until it has ended (--no-wait: return once the "
                "application is stopping).",
            ),
        ] = True,
        timeout: Annotated[
            float, typer.Option(min=0, help="Give up following (and fail) after this many seconds.")
        ] = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        """Upgrade a job's running application to the job's current spec."""
        with client_for(ctx) as client, reported_failures():
            if dry_run:
                report = client.upgrade_job(job, mode=mode.value, dry_run=True)
            else:
                upgraded = client.upgrade_job(job, mode=mode.value)
                what = f"upgrade/{job}/{upgraded['id']}"
                console().print(f"{what} requested ({upgraded['mode']}): {_status(upgraded)}")
                if not wait:
                    return
                upgraded = _followed(client, upgraded, what, timeout)
        if dry_run:
            console().print(Text(describe_report(report)))
            if not report["compatible"]:
                raise typer.Exit(1)
            return
        if upgraded["status"] != "SUCCEEDED":
            raise fail(
                f"{what} {upgraded['status']}: {upgraded.get('reason') or 'no reason given'}"
            )

    @get_app.command("upgrades")
    def get_upgrades(
        ctx: typer.Context,
        job: str,
        upgrade_id: Annotated[str | None, typer.Argument(help="Show only this upgrade.")] = None,
        output: OutputOption = OutputFormat.table,
    ) -> None:
        """List a job's upgrades, newest first."""
        with client_for(ctx) as client, reported_failures():
            if upgrade_id is not None:
                upgrades = [client.get_upgrade(job, upgrade_id)]
            else:
                upgrades = client.list_upgrades(job)["items"]
        if upgrade_id is not None and output is not OutputFormat.table:
            print_one(upgrades[0], output, _upgrades_table)
        else:
            print_list(upgrades, output, _upgrades_table)

    @describe_app.command("upgrade")
    def describe_upgrade(ctx: typer.Context, job: str, upgrade_id: str) -> None:
        """Show one upgrade for a person to read: how it went, and what it changed (a diff)."""
        with client_for(ctx) as client, reported_failures():
            document = client.get_upgrade(job, upgrade_id)
        console().print(Text(describe(document)))


def _followed(
    client: StreamjobsClient, upgrade: dict[str, Any], what: str, timeout: float
) -> dict[str, Any]:
    """The upgrade once it has ended, each status it reaches printed; ``fail`` when ``timeout``
    seconds pass first."""
    job, upgrade_id = upgrade["job"], upgrade["id"]
    return until_final(
        upgrade,
        lambda: client.get_upgrade(job, upgrade_id),
        is_final=lambda current: current["status"] in ENDED,
        timeout=timeout,
        poll_seconds=POLL_SECONDS,
        timed_out=lambda current: (
            f"{what} is still {current['status']} after {timeout:g} s (see it later with "
            f"'streamjobs describe upgrade {job} {upgrade_id}')"
        ),
        on_change=lambda current: console().print(f"{what}: {_status(current)}"),
    )


def _status(upgrade: dict[str, Any]) -> str:
    status = upgrade["status"]
    if status == "WATCHING" and upgrade.get("watchUntil"):
        return f"WATCHING until {when(upgrade['watchUntil'])}"
    if status in ENDED or status == "ROLLING_BACK":
        return f"{status}: {upgrade.get('reason') or '-'}"
    return str(status)


def describe_report(report: dict[str, Any]) -> str:
    """The compatibility check's report for a person: the verdict, then each reason and note."""
    fits = "the new spec fits" if report["compatible"] else "the new spec does NOT fit"
    lines = [f"Check ({report.get('mode', 'last-state')}): {fits}"]
    reasons = list(report.get("refusals") or [])
    dry_run = report.get("dryRun")
    if dry_run:
        reasons += dry_run.get("failures") or []
    lines += [f"  refused  {item['path']} ({item['rule']}): {item['message']}" for item in reasons]
    lines += [f"  note     {warning}" for warning in report.get("warnings") or []]
    if dry_run:
        for query in dry_run.get("queries") or []:
            verdict = "fits" if query["compatible"] else "does not fit"
            lines.append(f"  dry run  query {query['query']} at batch {query['batch']}: {verdict}")
    return "\n".join(lines)


def describe(upgrade: dict[str, Any]) -> str:
    """A person's view of one upgrade; what it changed as a unified diff."""
    rollback = upgrade.get("rollbackVersion")
    lines = [
        f"Id:             {upgrade['id']}",
        f"Job:            {upgrade['job']}",
        f"Mode:           {upgrade['mode']}",
        f"Status:         {upgrade['status']}",
        f"Versions:       {upgrade['fromVersion']} -> {upgrade['toVersion']}"
        + (f" (rolled back as {rollback})" if rollback is not None else ""),
        f"From:           {upgrade.get('fromApplication') or '-'}",
        f"To:             {upgrade.get('toApplication') or '-'}",
    ]
    if upgrade.get("rollbackApplication"):
        lines.append(f"Rollback:       {upgrade['rollbackApplication']}")
    lines += [
        f"Snapshot:       {upgrade.get('snapshot') or '-'}",
        f"Requested:      {when(upgrade['requestedAt'])} by {upgrade['requestedBy']}",
        f"Started:        {_when(upgrade.get('startedAt'))}",
        f"Watched until:  {_when(upgrade.get('watchUntil'))}",
        f"Finished:       {_when(upgrade.get('finishedAt'))}",
        f"Reason:         {upgrade.get('reason') or '-'}",
        "Changes:" + ("" if upgrade.get("diff") else "        none"),
    ]
    if upgrade.get("diff"):
        lines += [f"  {line}" for line in upgrade["diff"].splitlines()]
    return "\n".join(lines)


def _upgrades_table(upgrades: list[dict[str, Any]]) -> Table:
    table = new_table("ID", "MODE", "STATUS", "VERSIONS", "REQUESTED", "BY", "FINISHED")
    for item in upgrades:
        table.add_row(
            item["id"],
            item["mode"],
            item["status"],
            f"{item['fromVersion']} -> {item['toVersion']}",
            when(item["requestedAt"]),
            item["requestedBy"],
            _when(item.get("finishedAt")),
        )
    return table


def _when(timestamp: str | None) -> str:
    return when(timestamp) if timestamp else UNKNOWN
