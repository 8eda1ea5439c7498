"""``streamjobs wait``: block until an application reaches a state, as ``kubectl wait`` does.

A script (the README's tour, a deployment step) cannot stop an application before it runs, or
run the job again before the stop has ended; polling the application by hand in a shell loop is
what this saves. It fails when the application ends in another state, since the awaited one can
then never come, and when the time given runs out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated

import typer

from streamjobs.cli.failures import EXIT_INVALID_INPUT, fail, reported_failures
from streamjobs.cli.output import console
from streamjobs.client import StreamjobsClient
from streamjobs.domain.states import TERMINAL_STATES, AppState, label

POLL_SECONDS = 1.0
DEFAULT_TIMEOUT_SECONDS = 300.0


def register(app: typer.Typer, client_for: Callable[[typer.Context], StreamjobsClient]) -> None:
    """Add ``wait`` to the ``streamjobs`` command."""

    @app.command("wait")
    def wait(
        ctx: typer.Context,
        application_id: str,
        state: Annotated[
            str,
            typer.Option(
                "--for", help="The state to wait for: Running, Stopped… (or RUNNING, STOPPED…)."
            ),
        ],
        timeout: Annotated[
            float, typer.Option(min=0, help="Give up (and fail) after this many seconds.")
        ] = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        """Wait until an application is in a state; fail if it ends in another one first."""
        wanted = awaited_state(state)
        deadline = time.monotonic() + timeout
        with client_for(ctx) as client, reported_failures():
            current = _state_of(client, application_id)
            while current is not wanted:
                if current in TERMINAL_STATES:
                    raise fail(
                        f"application/{application_id} ended {label(current)}; it will never be "
                        f"{label(wanted)}"
                    )
                if time.monotonic() >= deadline:
                    raise fail(
                        f"application/{application_id} is still {label(current)} after "
                        f"{timeout:g} s, not {label(wanted)}"
                    )
                time.sleep(POLL_SECONDS)
                current = _state_of(client, application_id)
        console().print(f"application/{application_id} {label(current)}")


def awaited_state(text: str) -> AppState:
    """The state ``text`` names, as the CLI shows it (``Pending Rerun``) or the API does."""
    try:
        return AppState(text.strip().upper().replace(" ", "_").replace("-", "_"))
    except ValueError:
        names = ", ".join(label(state) for state in AppState)
        raise fail(f"{text!r} is not a state; one of {names}", code=EXIT_INVALID_INPUT) from None


def _state_of(client: StreamjobsClient, application_id: str) -> AppState:
    return AppState(client.get_application(application_id)["state"])
