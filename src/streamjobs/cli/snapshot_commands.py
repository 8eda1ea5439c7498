"""``streamjobs snapshot JOB``, ``get snapshots``, ``describe snapshot`` and ``delete snapshot``:
the named copies of a pipeline job's checkpoint that ``run --from-snapshot`` starts from.

The server takes a snapshot at the running pipeline's next batch boundary, so a request answers
before the snapshot exists; ``snapshot`` then polls it until it is READY or FAILED, which is what
a script wants before it stops or upgrades the job. It fails (exit 1) when the snapshot fails or
the time given runs out, since the script cannot rely on that snapshot then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from streamjobs.cli.failures import fail, reported_failures
from streamjobs.cli.output import OutputFormat, console, new_table, print_list, print_one, when
from streamjobs.cli.polling import until_final
from streamjobs.client import StreamjobsClient
from streamjobs.formatting import UNKNOWN, size

ClientFactory = Callable[[typer.Context], StreamjobsClient]
OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]
POLL_SECONDS = 1.0
DEFAULT_TIMEOUT_SECONDS = 300.0
TAKING = "TAKING"
FAILED = "FAILED"


def register(
    app: typer.Typer,
    get_app: typer.Typer,
    describe_app: typer.Typer,
    delete_app: typer.Typer,
    client_for: ClientFactory,
) -> None:
    """Add the snapshot commands to the ``streamjobs`` command."""

    @app.command("snapshot")
    def snapshot(
        ctx: typer.Context,
        job: str,
        name: Annotated[
            str | None,
            typer.Option("--name", help="The snapshot's name (default manual-<UTC date>-<time>)."),
        ] = None,
        wait: Annotated[
            bool,
            typer.Option(
                "--wait/--no-wait",
                help="Wait until the snapshot is READY or FAILED (--no-wait: return once it is "
                "requested).",
            ),
        ] = True,
        timeout: Annotated[
            float, typer.Option(min=0, help="Give up waiting (and fail) after this many seconds.")
        ] = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        """Take a snapshot of a running pipeline's checkpoint at its next batch boundary."""
        with client_for(ctx) as client, reported_failures():
            taken = client.take_snapshot(job, name)
            what = f"snapshot/{job}/{taken['name']}"
            console().print(f"{what} requested")
            if not wait:
                return
            taken = _awaited(client, taken, what, timeout)
        if taken["status"] == FAILED:
            raise fail(f"{what} failed: {taken.get('error') or 'no reason given'}")
        console().print(f"{what} ready ({size(taken.get('sizeBytes'))})")

    @get_app.command("snapshots")
    def get_snapshots(
        ctx: typer.Context,
        job: str,
        name: Annotated[str | None, typer.Argument(help="Show only this snapshot.")] = None,
        output: OutputOption = OutputFormat.table,
    ) -> None:
        """List a job's snapshots, newest first."""
        with client_for(ctx) as client, reported_failures():
            if name is not None:
                snapshots = [client.get_snapshot(job, name)]
            else:
                snapshots = client.list_snapshots(job)["items"]
        if name is not None and output is not OutputFormat.table:
            print_one(snapshots[0], output, _snapshots_table)
        else:
            print_list(snapshots, output, _snapshots_table)

    @describe_app.command("snapshot")
    def describe_snapshot(ctx: typer.Context, job: str, name: str) -> None:
        """Show one snapshot for a person to read: what it was taken from and where each output
        stood."""
        with client_for(ctx) as client, reported_failures():
            document = client.get_snapshot(job, name)
        console().print(Text(describe(document)))

    @delete_app.command("snapshot")
    def delete_snapshot(ctx: typer.Context, job: str, name: str) -> None:
        """Delete a snapshot and its copy of the checkpoint (refused while it is being taken)."""
        with client_for(ctx) as client, reported_failures():
            client.delete_snapshot(job, name)
        console().print(f"snapshot/{job}/{name} deleted")


def _awaited(
    client: StreamjobsClient, snapshot: dict[str, Any], what: str, timeout: float
) -> dict[str, Any]:
    """The snapshot once it is no longer TAKING; ``fail`` when ``timeout`` seconds pass first."""
    job, name = snapshot["job"], snapshot["name"]
    return until_final(
        snapshot,
        lambda: client.get_snapshot(job, name),
        is_final=lambda current: current["status"] != TAKING,
        timeout=timeout,
        poll_seconds=POLL_SECONDS,
        timed_out=lambda _: (
            f"{what} is still being taken after {timeout:g} s (see it later with "
            f"'streamjobs describe snapshot {job} {name}')"
        ),
    )


def describe(snapshot: dict[str, Any]) -> str:
    """A person's view of one snapshot; each output's position in words."""
    lines = [
        f"Name:           {snapshot['name']}",
        f"Job:            {snapshot['job']}",
        f"Kind:           {snapshot['kind']}",
        f"Status:         {snapshot['status']}",
        f"Application:    {snapshot.get('application') or '-'}",
        f"Spec version:   {_or_dash(snapshot.get('specVersion'))}",
        f"Requested:      {when(snapshot['requestedAt'])} by {snapshot.get('requestedBy') or '-'}",
        f"Taken:          {_when(snapshot.get('takenAt'))}",
        f"Size:           {size(snapshot.get('sizeBytes'))}",
    ]
    if snapshot.get("error"):
        lines.append(f"Error:          {snapshot['error']}")
    batches = snapshot.get("batches") or {}
    lines.append("Batches:" + ("" if batches else "        -"))
    lines += [f"  {query}: batch {batch}" for query, batch in sorted(batches.items())]
    positions = snapshot.get("positions") or []
    lines.append("Positions:" + ("" if positions else "      -"))
    lines += [f"  {item['output']}: {item['description']}" for item in positions]
    return "\n".join(lines)


def _snapshots_table(snapshots: list[dict[str, Any]]) -> Table:
    table = new_table("NAME", "KIND", "STATUS", "APPLICATION", "BATCHES", "SIZE", "TAKEN")
    for item in snapshots:
        batches = item.get("batches") or {}
        table.add_row(
            item["name"],
            item["kind"],
            item["status"],
            item.get("application") or "-",
            ",".join(f"{query}={batch}" for query, batch in sorted(batches.items())) or "-",
            size(item.get("sizeBytes")),
            _when(item.get("takenAt")),
        )
    return table


def _when(timestamp: str | None) -> str:
    return when(timestamp) if timestamp else UNKNOWN


def _or_dash(value: object) -> str:
    return "-" if value is None else str(value)
