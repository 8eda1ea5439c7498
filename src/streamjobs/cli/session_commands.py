"""``streamjobs unlock`` and ``streamjobs sign-out``: a user manager lets a user whose sign-in was
locked after too many failures sign in again, or ends every web session of a user."""

from __future__ import annotations

from collections.abc import Callable

import typer

from streamjobs.cli.failures import reported_failures
from streamjobs.cli.output import console
from streamjobs.client import StreamjobsClient

ClientFactory = Callable[[typer.Context], StreamjobsClient]


def register(app: typer.Typer, client_for: ClientFactory) -> None:
    """Add ``unlock`` and ``sign-out`` to ``app``."""

    @app.command("unlock")
    def unlock(ctx: typer.Context, name: str) -> None:
        """Let user NAME sign in again after a lockout (needs Manage users)."""
        with client_for(ctx) as client, reported_failures():
            client.unlock_user(name)
        console().print(f"user/{name} may sign in again")

    @app.command("sign-out")
    def sign_out(ctx: typer.Context, name: str) -> None:
        """End every web session of user NAME at once (yours, or anyone's with Manage users);
        their access tokens keep working."""
        with client_for(ctx) as client, reported_failures():
            ended = client.end_sessions(name)
        console().print(f"user/{name} signed out everywhere ({ended} session(s) ended)")
