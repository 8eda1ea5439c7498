"""The commands about people: ``whoami``; ``create``, ``get`` and ``delete`` of users, service
accounts, groups and access tokens; ``add member`` and ``remove member``.

A password is read from standard input (``--password-stdin``), never from a flag, which keeps it
out of the shell's history and the process list. A new token's secret is printed once, alone on
standard output, so ``TOKEN=$(streamjobs create token ci)`` captures it; the rest goes to stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.table import Table

from streamjobs.cli.failures import EXIT_INVALID_INPUT, fail, reported_failures
from streamjobs.cli.output import (
    OutputFormat,
    console,
    new_table,
    print_document,
    print_list,
    print_one,
    when,
)
from streamjobs.client import StreamjobsClient

ClientFactory = Callable[[typer.Context], StreamjobsClient]

OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]
UserOption = Annotated[
    str | None,
    typer.Option("--user", "-u", help="Whose tokens (default: yours, the token's owner)."),
]
SERVICE_ACCOUNT = "serviceAccount"


def register(
    app: typer.Typer,
    create_app: typer.Typer,
    get_app: typer.Typer,
    delete_app: typer.Typer,
    client_for: ClientFactory,
) -> None:
    """Add ``whoami``, ``add``/``remove member`` and the people kinds to create, get, delete."""
    add_app = typer.Typer(help="Add a user to a group.", no_args_is_help=True)
    remove_app = typer.Typer(help="Take a user out of a group.", no_args_is_help=True)
    app.add_typer(add_app, name="add")
    app.add_typer(remove_app, name="remove")

    @app.command("whoami")
    def whoami(ctx: typer.Context, output: OutputOption = OutputFormat.table) -> None:
        """Show who you are: kind, groups, domain permissions and bundle permissions."""
        with client_for(ctx) as client, reported_failures():
            me = client.whoami()
            bundles = client.list_bundles()["items"] if output is OutputFormat.table else []
        if output is OutputFormat.table:
            console().print(describe_principal(me, bundles))
        else:
            print_document(me, output)

    @create_app.command("user")
    def create_user(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(help="The user's name, e.g. alice.")],
        password_stdin: Annotated[
            bool,
            typer.Option(
                "--password-stdin",
                help="Read a password (12 characters or more) from standard input; without "
                "it, the user signs in with access tokens only.",
            ),
        ] = False,
        admin: Annotated[
            bool, typer.Option("--admin", help="Make an admin (admins only).")
        ] = False,
    ) -> None:
        """Create a user (needs Manage users)."""
        password = _password_from_stdin() if password_stdin else None
        with client_for(ctx) as client, reported_failures():
            client.create_user(name, password=password, admin=admin)
        console().print(f"user/{name} created")

    @create_app.command("serviceaccount")
    def create_service_account(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(help="The service account's name, e.g. ci.")],
    ) -> None:
        """Create a service account: no password, it signs in with tokens (see grant run-as)."""
        with client_for(ctx) as client, reported_failures():
            client.create_user(name, kind=SERVICE_ACCOUNT)
        console().print(f"serviceaccount/{name} created")

    @create_app.command("group")
    def create_group(ctx: typer.Context, name: str) -> None:
        """Create a group (needs Manage users)."""
        with client_for(ctx) as client, reported_failures():
            client.create_group(name)
        console().print(f"group/{name} created")

    @create_app.command("token")
    def create_token(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(help="What the token is for, e.g. laptop or ci.")],
        user: UserOption = None,
        expires_in_days: Annotated[
            int | None,
            typer.Option("--expires-in-days", help="1 to 3650 days (default: until revoked)."),
        ] = None,
        output: OutputOption = OutputFormat.table,
    ) -> None:
        """Issue an access token and print its secret: this is the only time it is shown."""
        with client_for(ctx) as client, reported_failures():
            owner = user or client.whoami()["name"]
            token = client.create_token(owner, name, expires_in_days=expires_in_days)
        if output is not OutputFormat.table:
            print_document(token, output)
            return
        expires = when(token["expiresAt"]) if token["expiresAt"] else "never (until revoked)"
        console(stderr=True).print(
            f"token/{token['id']} ({token['name']}) created for user {owner}, expires {expires}; "
            "its secret is below, shown this once"
        )
        sys.stdout.write(token["token"] + "\n")

    @get_app.command("users")
    def get_users(ctx: typer.Context, output: OutputOption = OutputFormat.table) -> None:
        """List users and service accounts (needs Manage users or Manage bundles)."""
        with client_for(ctx) as client, reported_failures():
            users = client.list_users()["items"]
        print_list(users, output, _users_table)

    @get_app.command("user")
    def get_user(ctx: typer.Context, name: str, output: OutputOption = OutputFormat.yaml) -> None:
        """Show one user or service account as YAML or JSON."""
        with client_for(ctx) as client, reported_failures():
            user = client.get_user(name)
        print_one(user, output, _users_table)

    @get_app.command("groups")
    def get_groups(ctx: typer.Context, output: OutputOption = OutputFormat.table) -> None:
        """List groups and their members."""
        with client_for(ctx) as client, reported_failures():
            groups = client.list_groups()["items"]
        print_list(groups, output, _groups_table)

    @get_app.command("tokens")
    def get_tokens(
        ctx: typer.Context, user: UserOption = None, output: OutputOption = OutputFormat.table
    ) -> None:
        """List a user's access tokens, revoked and expired ones too (never their secrets)."""
        with client_for(ctx) as client, reported_failures():
            tokens = client.list_tokens(user or client.whoami()["name"])["items"]
        print_list(tokens, output, _tokens_table)

    @delete_app.command("user")
    def delete_user(ctx: typer.Context, name: str) -> None:
        """Delete a user or service account, with its tokens, memberships and grants."""
        with client_for(ctx) as client, reported_failures():
            client.delete_user(name)
        console().print(f"user/{name} deleted")

    @delete_app.command("group")
    def delete_group(ctx: typer.Context, name: str) -> None:
        """Delete a group and every grant to it (its members stay)."""
        with client_for(ctx) as client, reported_failures():
            client.delete_group(name)
        console().print(f"group/{name} deleted")

    @delete_app.command("token")
    def delete_token(
        ctx: typer.Context,
        token_id: Annotated[str, typer.Argument(metavar="ID", help="The token's ID (get tokens).")],
        user: UserOption = None,
    ) -> None:
        """Revoke an access token: it stops working at once."""
        with client_for(ctx) as client, reported_failures():
            token = client.revoke_token(user or client.whoami()["name"], token_id)
        console().print(f"token/{token['id']} ({token['name']}) revoked")

    @add_app.command("member")
    def add_member(ctx: typer.Context, group: str, user: str) -> None:
        """Add USER to GROUP: they get what the group is granted."""
        with client_for(ctx) as client, reported_failures():
            client.add_group_member(group, user)
        console().print(f"user/{user} added to group/{group}")

    @remove_app.command("member")
    def remove_member(ctx: typer.Context, group: str, user: str) -> None:
        """Take USER out of GROUP."""
        with client_for(ctx) as client, reported_failures():
            client.remove_group_member(group, user)
        console().print(f"user/{user} removed from group/{group}")


def _password_from_stdin() -> str:
    """Standard input without its one trailing newline (what ``echo`` or a file adds)."""
    password = sys.stdin.read()
    password = password[:-1] if password.endswith("\n") else password
    password = password[:-1] if password.endswith("\r") else password
    if not password:
        raise fail("--password-stdin: standard input holds no password", code=EXIT_INVALID_INPUT)
    return password


def describe_principal(me: dict[str, Any], bundles: list[dict[str, Any]]) -> str:
    """Who the caller is, for a person to read."""
    permissions = "every permission (admin)" if me["admin"] else ", ".join(me["permissions"]) or "-"
    lines = [
        f"Name:         {me['name']}",
        f"Kind:         {me['kind']}",
        f"Admin:        {'yes' if me['admin'] else 'no'}",
        f"Groups:       {', '.join(me['groups']) or '-'}",
        f"Permissions:  {permissions}",
        "Bundles:" + ("" if bundles else "      -"),
        *(
            f"  {bundle['name']}: {', '.join(bundle['yourPermissions']) or '-'}"
            for bundle in bundles
        ),
    ]
    return "\n".join(lines)


def _users_table(users: list[dict[str, Any]]) -> Table:
    table = new_table(
        "NAME", "KIND", "ADMIN", "PASSWORD", "GROUPS", "PERMISSIONS", "RUN-AS BY", "CREATED"
    )
    for user in users:
        table.add_row(
            user["name"],
            "serviceaccount" if user["kind"] == SERVICE_ACCOUNT else user["kind"],
            "yes" if user["admin"] else "no",
            "yes" if user["signsInWithPassword"] else "no",
            ",".join(user["groups"]) or "-",
            ",".join(user["permissions"]) or "-",
            ",".join(user["runAsGrantees"]) or "-",
            when(user["createdAt"]),
        )
    return table


def _groups_table(groups: list[dict[str, Any]]) -> Table:
    table = new_table("NAME", "MEMBERS", "CREATED")
    for group in groups:
        table.add_row(group["name"], ",".join(group["members"]) or "-", when(group["createdAt"]))
    return table


def _tokens_table(tokens: list[dict[str, Any]]) -> Table:
    table = new_table("ID", "NAME", "USER", "STATUS", "CREATED", "EXPIRES", "LAST USED")
    for token in tokens:
        table.add_row(
            token["id"],
            token["name"],
            token["user"],
            token_status(token),
            when(token["createdAt"]),
            when(token["expiresAt"]) if token["expiresAt"] else "never",
            when(token["lastUsedAt"]) if token["lastUsedAt"] else "-",
        )
    return table


def token_status(token: dict[str, Any]) -> str:
    if token["revokedAt"]:
        return "revoked"
    if token["expiresAt"] and datetime.fromisoformat(token["expiresAt"]) <= datetime.now(UTC):
        return "expired"
    return "active"
