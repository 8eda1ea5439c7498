"""The ``streamjobs`` command: kubectl-like verbs that talk to the server through ``client.py``."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from streamjobs.cli import server_commands
from streamjobs.cli.config import Login, resolve_login, save_login
from streamjobs.cli.failures import EXIT_INVALID_INPUT, fail, reported_failures
from streamjobs.cli.manifests import SourcedDocument, read_manifests
from streamjobs.cli.output import OutputFormat, console, describe_job, print_document, print_jobs
from streamjobs.client import StreamjobsClient
from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.spec import manifest_json_schema, parse_manifest, split_server_fields
from streamjobs.settings import Settings

app = typer.Typer(
    name="streamjobs",
    help="Declare Spark Structured Streaming jobs once; streamjobs runs them and keeps them up.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
get_app = typer.Typer(help="List or show resources.", no_args_is_help=True)
describe_app = typer.Typer(help="Show a resource in detail.", no_args_is_help=True)
delete_app = typer.Typer(help="Delete a resource.", no_args_is_help=True)
app.add_typer(get_app, name="get")
app.add_typer(describe_app, name="describe")
app.add_typer(delete_app, name="delete")
server_commands.register(app)

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


def _checked(documents: list[SourcedDocument]) -> None:
    """Validate every manifest before anything is sent, so a bad file changes nothing."""
    problems = []
    checkpoint_root = Settings().resolved_checkpoint_root
    for item in documents:
        manifest, _ = split_server_fields(item.document)
        try:
            parse_manifest(manifest, checkpoint_root=checkpoint_root, source=item.source)
        except InvalidInput as error:
            problems.append(error.detail)
    if problems:
        raise fail("\n".join(problems), code=EXIT_INVALID_INPUT)


@app.command()
def validate(filename: FilenameOption) -> None:
    """Check manifests against every rule, offline (no server needed)."""
    with reported_failures():
        documents = read_manifests(filename)
    _checked(documents)
    for item in documents:
        console().print(f"{item.source}: valid (streamingjob/{item.document['metadata']['name']})")


@app.command()
def apply(ctx: typer.Context, filename: FilenameOption) -> None:
    """Create or update the jobs in the manifests (FILE, DIR or - for stdin)."""
    with reported_failures():
        documents = read_manifests(filename)
    _checked(documents)
    with _client(ctx) as client:
        for item in documents:
            with reported_failures(item.source):
                result, job = client.apply_job(item.document)
            console().print(f"streamingjob/{job['metadata']['name']} {result}")


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
            jobs = _all_jobs(client, status=status, tag=tag, bundle=bundle, search=search)
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


def _all_jobs(client: StreamjobsClient, **filters: str | None) -> list[dict[str, object]]:
    jobs: list[dict[str, object]] = []
    while True:
        page = client.list_jobs(**filters, limit=500, offset=len(jobs))
        jobs.extend(page["items"])
        if not page["items"] or len(jobs) >= page["total"]:
            return jobs


@describe_app.command("job")
def describe(ctx: typer.Context, name: str) -> None:
    """Show one streaming job for a person to read."""
    with _client(ctx) as client, reported_failures():
        job = client.get_job(name)
    console().print(describe_job(job))


@delete_app.command("job")
def delete(ctx: typer.Context, name: str) -> None:
    """Delete a streaming job."""
    with _client(ctx) as client, reported_failures():
        client.delete_job(name)
    console().print(f"streamingjob/{name} deleted")


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
    app()
