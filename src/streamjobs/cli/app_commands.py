"""The commands about applications (runs of jobs): ``run``, ``stop``, ``suspend``, ``resume``,
``abort``, ``get apps``, ``describe app``, ``logs`` and ``events``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.table import Table

from streamjobs.cli.failures import reported_failures
from streamjobs.cli.output import OutputFormat, console, print_document
from streamjobs.client import StreamjobsClient
from streamjobs.domain.states import label
from streamjobs.formatting import rate

FOLLOW_PAUSE_SECONDS = 1.0
TERMINAL = {"COMPLETED", "FAILED", "ABORTED", "STOPPED"}

ClientFactory = Callable[[typer.Context], StreamjobsClient]


def register(
    app: typer.Typer, get_app: typer.Typer, describe_app: typer.Typer, client_for: ClientFactory
) -> None:
    """Add the application commands to the ``streamjobs`` command."""

    @app.command("run")
    def run(
        ctx: typer.Context,
        name: str,
        quiet: Annotated[
            bool,
            typer.Option(
                "-q", "--quiet", help="Print only the application's id: app=$(streamjobs run -q J)"
            ),
        ] = False,
        from_snapshot: Annotated[
            str | None,
            typer.Option(
                "--from-snapshot",
                help="Start from a copy of this snapshot of the job instead of its checkpoint "
                "as it is (the checkpoint it replaces is kept as a snapshot).",
            ),
        ] = None,
        allow_replay: Annotated[
            bool,
            typer.Option(
                "--allow-replay",
                help="With --from-snapshot: start even when an output has gone on past the "
                "snapshot's position (the batches since are run again).",
            ),
        ] = False,
    ) -> None:
        """Run a job: start a new application of it."""
        with client_for(ctx) as client, reported_failures():
            application = client.run_job(
                name, from_snapshot=from_snapshot, allow_replay=allow_replay
            )
        if quiet:
            typer.echo(application["id"])
        else:
            origin = f" from snapshot {from_snapshot}" if from_snapshot else ""
            console().print(
                f"application/{application['id']} ({application['name']}) started{origin}"
            )

    @app.command("stop")
    def stop(ctx: typer.Context, name: str) -> None:
        """Stop a job's live application after its micro-batch in flight."""
        with client_for(ctx) as client, reported_failures():
            application = client.stop_job(name)
        console().print(f"application/{application['id']} {application['state'].lower()}")

    @app.command("suspend")
    def suspend(ctx: typer.Context, name: str) -> None:
        """Suspend a job's live application: stop it gracefully with an aligned snapshot and
        keep it Suspended (not counted against quotas) until ``resume``."""
        with client_for(ctx) as client, reported_failures():
            application = client.suspend_job(name)
        console().print(f"application/{application['id']} {application['state'].lower()}")

    @app.command("resume")
    def resume(ctx: typer.Context, name: str) -> None:
        """Resume a job's suspended application from its checkpoint."""
        with client_for(ctx) as client, reported_failures():
            application = client.resume_job(name)
        console().print(f"application/{application['id']} resumed")

    @app.command("abort")
    def abort(ctx: typer.Context, application_id: str) -> None:
        """Abort an application (SIGTERM to its driver, SIGKILL after the grace period)."""
        with client_for(ctx) as client, reported_failures():
            application = client.abort_application(application_id)
        console().print(f"application/{application['id']} {application['state'].lower()}")

    @get_app.command("apps")
    def get_apps(
        ctx: typer.Context,
        job: Annotated[str | None, typer.Argument(help="Only this job's applications.")] = None,
        output: Annotated[OutputFormat, typer.Option("-o", "--output")] = OutputFormat.table,
        status: Annotated[str | None, typer.Option(help="Only in this state.")] = None,
        triggered_by: Annotated[str | None, typer.Option(help="Only started by this user.")] = None,
        tag: Annotated[
            str | None, typer.Option(help="Only with this tag (key or key=value).")
        ] = None,
        search: Annotated[str | None, typer.Option(help="Part of the name or id.")] = None,
        limit: Annotated[int, typer.Option(help="At most this many, newest first.")] = 50,
    ) -> None:
        """List applications, newest first."""
        with client_for(ctx) as client, reported_failures():
            page = client.list_applications(
                job, status=status, triggeredBy=triggered_by, tag=tag, search=search, limit=limit
            )
        if output is OutputFormat.table:
            console().print(_applications_table(page["items"]))
        else:
            print_document(page, output)

    @describe_app.command("app")
    def describe_app_command(ctx: typer.Context, application_id: str) -> None:
        """Show an application, its attempts, latest figures and events."""
        with client_for(ctx) as client, reported_failures():
            application = client.get_application(application_id)
            events = client.application_events(application_id)["items"]
        console().print(describe_application(application, events))

    @app.command("logs")
    def logs(
        ctx: typer.Context,
        application_id: str,
        follow: Annotated[
            bool, typer.Option("-f", "--follow", help="Keep printing new lines.")
        ] = False,
        instance: Annotated[
            str, typer.Option(help="driver, driver-stdout, executor-<id>…")
        ] = "driver",
        attempt: Annotated[
            int | None, typer.Option(help="Attempt number (default latest).")
        ] = None,
        tail: Annotated[int, typer.Option(help="Print the last N lines first.")] = 200,
    ) -> None:
        """Print an application's driver or executor log."""
        with client_for(ctx) as client, reported_failures():
            piece = client.application_log(
                application_id, instance=instance, attempt=attempt, tail=tail
            )
            typer.echo(piece["text"], nl=False)
            offset = piece["size"]
            while follow:
                time.sleep(FOLLOW_PAUSE_SECONDS)
                piece = client.application_log(
                    application_id, instance=instance, attempt=piece["attempt"], start=offset
                )
                typer.echo(piece["text"], nl=False)
                offset = piece["end"]
                if (
                    not piece["text"]
                    and client.get_application(application_id)["state"] in TERMINAL
                ):
                    return

    @app.command("events")
    def events(ctx: typer.Context, application_id: str) -> None:
        """Print what happened to an application, in order."""
        with client_for(ctx) as client, reported_failures():
            items = client.application_events(application_id)["items"]
        for event in items:
            typer.echo(f"{event['at']}  {event['kind']:<22} {event['message']}")


def _applications_table(applications: list[dict[str, Any]]) -> Table:
    table = Table(box=None, header_style="bold")
    for column in (
        "ID",
        "NAME",
        "STATE",
        "STARTED",
        "BY",
        "ATTEMPTS",
        "INPUT ROWS/S",
        "PROCESSED ROWS/S",
    ):
        table.add_column(column)
    for application in applications:
        latest = application.get("latest") or {}
        table.add_row(
            application["id"],
            application["name"],
            label(application["state"]),
            application["createdAt"][:19].replace("T", " "),
            application["triggeredBy"],
            f"{application['submissionAttempts']}/{application['executionAttempts']}",
            rate(latest.get("inputRowsPerSecond")),
            rate(latest.get("processedRowsPerSecond")),
        )
    return table


def _or_dash(value: object) -> str:
    return "-" if value is None else str(value)


def _standby(standby: dict[str, Any]) -> str:
    """The standby driver held now: its attempt, starting or ready, its process, and since."""
    since = standby["readyAt"] or standby["submittedAt"]
    return (
        f"attempt {standby['attempt']}, {standby['state']}, pid {_or_dash(standby['pid'])}, "
        f"since {since}"
    )


def _standby_mark(attempt: dict[str, Any]) -> str:
    """How an attempt listing marks a standby driver's attempt: held, or when it was promoted."""
    if not attempt.get("standby"):
        return ""
    if attempt.get("promotedAt"):
        return f"  (standby, promoted at {attempt['promotedAt']})"
    return "  (standby)"


def describe_application(application: dict[str, Any], events: list[dict[str, Any]]) -> str:
    """An application for a person to read."""
    latest = application.get("latest") or {}
    executors = application["executorState"]
    lines = [
        f"Name:            {application['name']}",
        f"ID:              {application['id']}",
        f"Job:             {application['job']}",
        f"State:           {label(application['state'])}",
        f"Triggered by:    {application['triggeredBy']} (runs as {application['runAs']})",
        f"Started:         {application['createdAt']}",
        f"Last transition: {application['transitionTime']}",
        f"Attempts:        {application['submissionAttempts']} submitted, "
        f"{application['executionAttempts']} ran, {application['restarts']} restarts",
        f"Driver:          {application.get('driverState') or '-'}",
        f"Executors:       {executors['running']} running, {executors['pending']} pending",
    ]
    if application.get("standby"):
        lines.append(f"Standby driver:  {_standby(application['standby'])}")
    if application.get("nextAttemptAt"):
        heading = "Queries start:" if application["state"] == "STARTING" else "Next attempt:"
        lines.append(f"{heading:<17}{application['nextAttemptAt']}")
    if application.get("exitCode") is not None:
        lines.append(f"Exit code:       {application['exitCode']}")
    if application.get("errorMessage"):
        lines.append(f"Error:           {application['errorMessage']}")
    if latest:
        lines.append(
            f"Latest:          batch {latest.get('batchId')}, "
            f"{rate(latest.get('inputRowsPerSecond'))} rows/s in, "
            f"{rate(latest.get('processedRowsPerSecond'))} rows/s processed, "
            f"{latest.get('batchDurationMs')} ms a batch"
        )
    lines.append("Attempts:")
    for attempt in application.get("attempts", []):
        line = (
            f"  #{attempt['number']}  submitted {attempt['submittedAt']}  "
            f"ended {attempt['endedAt'] or '-'}  exit {_or_dash(attempt['exitCode'])}  "
            f"{attempt['outcome'] or ''}"
        )
        lines.append(line.rstrip() + _standby_mark(attempt))
    lines.append("Events:")
    lines += [f"  {event['at']}  {event['kind']}: {event['message']}" for event in events[-20:]]
    return "\n".join(lines)
