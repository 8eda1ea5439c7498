"""The commands about secrets: ``create secret``, ``get secrets`` and ``delete secret``.

A value is read from a file or standard input (``--from-file PATH|-``), which keeps it out of the
shell's history and the process list; ``--from-literal`` is there for throwaway values. Nothing
prints a value: the server never returns one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from streamjobs.cli.failures import EXIT_INVALID_INPUT, fail, reported_failures
from streamjobs.cli.output import OutputFormat, console, print_document
from streamjobs.client import StreamjobsClient

ClientFactory = Callable[[typer.Context], StreamjobsClient]

BundleOption = Annotated[
    str, typer.Option("--bundle", "-b", help="The resource bundle the secret belongs to.")
]


def register(
    create_app: typer.Typer,
    get_app: typer.Typer,
    delete_app: typer.Typer,
    client_for: ClientFactory,
) -> None:
    """Add the secret commands to ``create``, ``get`` and ``delete``."""

    @create_app.command("secret")
    def create_secret(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(help="The secret's name, e.g. db-password.")],
        bundle: BundleOption = "default",
        from_file: Annotated[
            str | None,
            typer.Option(
                "--from-file",
                help="Read the value from this file, or from standard input with -. The "
                "file's exact content is the value (a trailing newline too).",
            ),
        ] = None,
        from_literal: Annotated[
            str | None,
            typer.Option(
                "--from-literal",
                help="The value itself; it stays in the shell's history, so prefer --from-file.",
            ),
        ] = None,
    ) -> None:
        """Create a secret in a bundle, or replace its value."""
        value = _value(from_file, from_literal)
        with client_for(ctx) as client, reported_failures():
            result, _ = client.put_secret(bundle, name, value)
        console().print(f"secret/{name} {result} in bundle {bundle}")

    @get_app.command("secrets")
    def get_secrets(
        ctx: typer.Context,
        bundle: BundleOption = "default",
        output: Annotated[OutputFormat, typer.Option("-o", "--output")] = OutputFormat.table,
    ) -> None:
        """List a bundle's secrets: names and when and by whom they changed, never values."""
        with client_for(ctx) as client, reported_failures():
            page = client.list_secrets(bundle)
        if output is OutputFormat.table:
            console().print(_secrets_table(page["items"]))
        else:
            print_document({"kind": "List", "items": page["items"]}, output)

    @delete_app.command("secret")
    def delete_secret(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(help="The secret to delete.")],
        bundle: BundleOption = "default",
    ) -> None:
        """Delete a secret; jobs that name it fail to start until it exists again."""
        with client_for(ctx) as client, reported_failures():
            client.delete_secret(bundle, name)
        console().print(f"secret/{name} deleted from bundle {bundle}")


def _value(from_file: str | None, from_literal: str | None) -> str:
    """The value from exactly one of the two options."""
    if (from_file is None) == (from_literal is None):
        raise fail(
            "give the value with exactly one of --from-file or --from-literal",
            code=EXIT_INVALID_INPUT,
        )
    if from_literal is not None:
        return from_literal
    assert from_file is not None
    try:
        raw = sys.stdin.buffer.read() if from_file == "-" else Path(from_file).read_bytes()
    except OSError as error:
        raise fail(
            f"{from_file}: cannot be read: {error.strerror}", code=EXIT_INVALID_INPUT
        ) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise fail(f"{from_file}: the value must be UTF-8 text", code=EXIT_INVALID_INPUT) from None


def _secrets_table(secrets: list[dict[str, Any]]) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for column in ("NAME", "VERSION", "UPDATED", "UPDATED BY", "CREATED BY"):
        table.add_column(column, no_wrap=True)
    for secret in secrets:
        table.add_row(
            secret["name"],
            str(secret["version"]),
            secret["updatedAt"][:19].replace("T", " "),
            secret["updatedBy"],
            secret["createdBy"],
        )
    return table
