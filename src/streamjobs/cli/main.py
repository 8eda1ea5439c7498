"""The ``streamjobs`` command: kubectl-like verbs that talk to the server through ``client``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from streamjobs.cli import (
    access_commands,
    app_commands,
    bundle_commands,
    destination_commands,
    people_commands,
    secret_commands,
    server_commands,
    session_commands,
    snapshot_commands,
    upgrade_commands,
    wait_commands,
)
from streamjobs.cli.config import Login, resolve_login, save_login
from streamjobs.cli.dev_commands import dev_app
from streamjobs.cli.failures import EXIT_INVALID_INPUT, fail, report_bad_settings, reported_failures
from streamjobs.cli.manifests import SourcedDocument, read_manifests
from streamjobs.cli.output import (
    OutputFormat,
    console,
    describe_connection,
    describe_job,
    print_connections,
    print_document,
    print_jobs,
)
from streamjobs.cli.pipeline_commands import pipeline_app
from streamjobs.client import StreamjobsClient
from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.kinds import Kind, in_apply_order, parse_resource
from streamjobs.domain.spec import manifest_json_schema, split_server_fields
from streamjobs.settings import Settings

app = typer.Typer(
    name="streamjobs",
    help="Declare Spark Structured Streaming jobs once; streamjobs runs them and keeps them up.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
create_app = typer.Typer(
    help="Create a resource from options: users, groups, tokens, bundles, secrets…",
    no_args_is_help=True,
)
get_app = typer.Typer(help="List or show resources.", no_args_is_help=True)
describe_app = typer.Typer(help="Show a resource in detail.", no_args_is_help=True)
delete_app = typer.Typer(help="Delete a resource.", no_args_is_help=True)
app.add_typer(create_app, name="create")
app.add_typer(get_app, name="get")
app.add_typer(describe_app, name="describe")
app.add_typer(delete_app, name="delete")
server_commands.register(app)
app.add_typer(pipeline_app, name="pipeline")
app.add_typer(dev_app, name="dev")

ServerOption = Annotated[
    str | None, typer.Option("--server", help="Server URL (default: saved login or env).")
]
TokenOption = Annotated[
    str | None, typer.Option("--token", help="Access token (default: saved login or env).")
]
FilenameOption = Annotated[
    list[str],
    typer.Option("-f", "--filename", help="A manifest file, a directory of them, or - for stdin."),
]
OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]


@app.callback()
def root(ctx: typer.Context, server: ServerOption = None, token: TokenOption = None) -> None:
    ctx.obj = Login(server=server or "", token=token)


def _client(ctx: typer.Context) -> StreamjobsClient:
    given: Login = ctx.obj
    login = resolve_login(given.server or None, given.token)
    return StreamjobsClient(login.server, login.token)


app_commands.register(app, get_app, describe_app, _client)
secret_commands.register(create_app, get_app, delete_app, _client)
people_commands.register(app, create_app, get_app, delete_app, _client)
bundle_commands.register(app, create_app, get_app, describe_app, delete_app, _client)
destination_commands.register(app, create_app, get_app, describe_app, delete_app, _client)
access_commands.register(app, get_app, _client)
session_commands.register(app, _client)
wait_commands.register(app, _client)
snapshot_commands.register(app, get_app, describe_app, delete_app, _client)
upgrade_commands.register(app, get_app, describe_app, _client)


@dataclass(frozen=True)
class CheckedManifest:
    """A manifest that passed every offline rule of its kind."""

    item: SourcedDocument
    kind: Kind
    name: str


def _checked(documents: list[SourcedDocument]) -> list[CheckedManifest]:
    """Validate every manifest (any kind) before anything is sent, so a bad file changes nothing."""
    problems = []
    checked = []
    checkpoint_root = Settings().resolved_checkpoint_root
    for item in documents:
        manifest, _ = split_server_fields(item.document)
        try:
            parsed = parse_resource(manifest, checkpoint_root=checkpoint_root, source=item.source)
        except InvalidInput as error:
            problems.append(error.detail)
            continue
        checked.append(CheckedManifest(item, Kind(parsed.kind), parsed.metadata.name))
    if problems:
        raise fail("\n".join(problems), code=EXIT_INVALID_INPUT)
    return checked


@app.command()
def validate(filename: FilenameOption) -> None:
    """Check manifests (jobs and connections) against every rule, offline (no server needed)."""
    with reported_failures():
        documents = read_manifests(filename)
    for manifest in _checked(documents):
        console().print(f"{manifest.item.source}: valid ({manifest.kind.label}/{manifest.name})")


@app.command()
def apply(ctx: typer.Context, filename: FilenameOption) -> None:
    """Create or update the jobs, connections and notification destinations in the manifests
    (FILE, DIR or - for stdin).

    Connections and destinations are applied first, so the jobs that use them find them.
    """
    with reported_failures():
        documents = read_manifests(filename)
    checked = _checked(documents)
    with _client(ctx) as client:
        appliers = {
            Kind.CONNECTION: client.apply_connection,
            Kind.NOTIFICATION_DESTINATION: client.apply_destination,
            Kind.STREAMING_JOB: client.apply_job,
        }
        for manifest in in_apply_order(checked, lambda manifest: manifest.kind):
            with reported_failures(manifest.item.source):
                result, _ = appliers[manifest.kind](manifest.item.document)
            console().print(f"{manifest.kind.label}/{manifest.name} {result}")
            _print_warnings(client)


@get_app.command("jobs")
def get_jobs(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Show only this job.")] = None,
    output: OutputOption = OutputFormat.table,
    status: Annotated[str | None, typer.Option(help="Only jobs with this status.")] = None,
    tag: Annotated[
        str | None, typer.Option(help="Only jobs with this tag (key or key=value).")
    ] = None,
    bundle: Annotated[str | None, typer.Option(help="Only jobs in this bundle.")] = None,
    search: Annotated[str | None, typer.Option(help="Only jobs whose name contains this.")] = None,
) -> None:
    """List streaming jobs."""
    with _client(ctx) as client, reported_failures():
        if name is not None:
            jobs = [client.get_job(name)]
        else:
            jobs = _all(client.list_jobs, status=status, tag=tag, bundle=bundle, search=search)
    print_jobs(jobs, output)


@get_app.command("job")
def get_job(
    ctx: typer.Context,
    name: str,
    output: OutputOption = OutputFormat.yaml,
    template: Annotated[bool, typer.Option(help="The full resolved template instead.")] = False,
) -> None:
    """Show one streaming job as YAML or JSON."""
    with _client(ctx) as client, reported_failures():
        document = client.job_template(name) if template else client.get_job(name)
    if output is OutputFormat.table:
        print_jobs([document], output)
    else:
        print_document(document, output)


def _all(list_page: Callable[..., dict[str, Any]], **filters: str | None) -> list[dict[str, Any]]:
    """Every item of a list, read page by page."""
    items: list[dict[str, Any]] = []
    while True:
        page = list_page(**filters, limit=500, offset=len(items))
        items.extend(page["items"])
        if not page["items"] or len(items) >= page["total"]:
            return items


@describe_app.command("job")
def describe(ctx: typer.Context, name: str) -> None:
    """Show one streaming job for a person to read."""
    with _client(ctx) as client, reported_failures():
        job = client.get_job(name)
    console().print(describe_job(job))


@delete_app.command("job")
def delete(
    ctx: typer.Context,
    name: str,
    abort: Annotated[
        bool,
        typer.Option(
            "--abort",
            help="Abort the job's live application first and delete the job once it has "
            "ended (without it, a job with a live application is not deleted).",
        ),
    ] = False,
    delete_checkpoint: Annotated[
        bool,
        typer.Option(
            "--delete-checkpoint",
            help="Delete the job's checkpoint with it. Without it the checkpoint stays, and a job "
            "created under this name again resumes from it.",
        ),
    ] = False,
) -> None:
    """Delete a streaming job (its checkpoint stays, unless --delete-checkpoint)."""
    with _client(ctx) as client, reported_failures():
        client.delete_job(name, abort=abort, delete_checkpoint=delete_checkpoint)
        with_checkpoint = " with its checkpoint" if delete_checkpoint else ""
        console().print(f"streamingjob/{name} deleted{with_checkpoint}")
        _print_warnings(client)


def _print_warnings(client: StreamjobsClient) -> None:
    """The server's warnings about what it just did, on stderr as kubectl prints them."""
    for warning in client.take_warnings():
        typer.echo(f"Warning: {warning}", err=True)


@get_app.command("connections")
def get_connections(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Show only this connection.")] = None,
    output: OutputOption = OutputFormat.table,
    connection_type: Annotated[
        str | None, typer.Option("--type", help="Only kafka, lakehouse, files or jdbc.")
    ] = None,
    search: Annotated[str | None, typer.Option(help="Only names that contain this.")] = None,
) -> None:
    """List connections."""
    with _client(ctx) as client, reported_failures():
        if name is not None:
            connections = [client.get_connection(name)]
        else:
            connections = _all(client.list_connections, type=connection_type, search=search)
    print_connections(connections, output)


@get_app.command("connection")
def get_connection(ctx: typer.Context, name: str, output: OutputOption = OutputFormat.yaml) -> None:
    """Show one connection as YAML or JSON."""
    with _client(ctx) as client, reported_failures():
        document = client.get_connection(name)
    if output is OutputFormat.table:
        print_connections([document], output)
    else:
        print_document(document, output)


@describe_app.command("connection")
def describe_one_connection(ctx: typer.Context, name: str) -> None:
    """Show one connection for a person to read."""
    with _client(ctx) as client, reported_failures():
        connection = client.get_connection(name)
    console().print(describe_connection(connection))


@delete_app.command("connection")
def delete_connection(ctx: typer.Context, name: str) -> None:
    """Delete a connection (refused while a job's dataset uses it)."""
    with _client(ctx) as client, reported_failures():
        client.delete_connection(name)
    console().print(f"connection/{name} deleted")


@app.command()
def schema() -> None:
    """Print the JSON Schema of the StreamingJob manifest (for editors)."""
    sys.stdout.write(json.dumps(manifest_json_schema(), indent=2) + "\n")


@app.command()
def login(
    server: Annotated[str, typer.Option("--server", help="Server URL.")],
    token: Annotated[str, typer.Option("--token", help="Access token.")],
) -> None:
    """Check the token against the server and save both for later commands (mode 600)."""
    with StreamjobsClient(server, token) as client, reported_failures():
        client.list_jobs(limit=1)
    path = save_login(Login(server=server, token=token))
    console().print(f"logged in to {server}; saved in {path}")


def main() -> None:
    try:
        app()
    except ValidationError as error:
        if error.title != Settings.__name__:
            raise
        sys.exit(report_bad_settings(error))
