"""``streamjobs dev kafka``: the tests' Kafka broker, for trying pipelines on a laptop."""

from __future__ import annotations

import signal
import threading
from typing import Annotated

import typer

from streamjobs.cli.failures import fail
from streamjobs.cli.output import console

dev_app = typer.Typer(help="Local services for trying pipelines, without Docker.")


@dev_app.command("kafka")
def kafka(
    port: Annotated[
        int | None, typer.Option(help="Port to listen on (default: a free one).")
    ] = None,
) -> None:
    """Run a single-node Kafka broker on 127.0.0.1 until Ctrl-C; its data is then removed.

    The broker never outlives this command: killed any way (SIGKILL too), it takes the broker
    with it.
    """
    from streamjobs.devtools.kafka import BrokerStartError, KafkaBroker
    from streamjobs.devtools.maven import ResolutionError, ToolUnavailableError

    stop = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stop.set())
    try:
        broker = KafkaBroker(port=port, bound_to_starter=True).start()
    except (BrokerStartError, ResolutionError, ToolUnavailableError) as error:
        raise fail(f"cannot start the Kafka broker: {error}") from None
    try:
        console().print(
            f"Kafka broker on {broker.bootstrap_servers} (KRaft, data in {broker.directory}).\n"
            f"Use bootstrapServers: {broker.bootstrap_servers} in a kafka Connection. "
            "Ctrl-C stops it and removes its data."
        )
        stop.wait()
    finally:
        broker.stop()
        console().print("Kafka broker stopped; its data is removed.")
