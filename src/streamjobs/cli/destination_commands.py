"""``streamjobs create|get|describe|delete|test destination``: the notification destinations
(email, webhook, Slack) that jobs name in ``spec.notifications``.

``create destination`` builds the manifest from flags and checks it offline first, so a bad flag
is refused at its field path before anything is sent; ``apply -f`` takes the same manifest as a
file. ``test destination`` sends a test notification through the server and exits non-zero with
the reason when it is not delivered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from streamjobs.cli.failures import EXIT_INVALID_INPUT, fail, reported_failures
from streamjobs.cli.output import OutputFormat, console, new_table, print_list, print_one, when
from streamjobs.client import StreamjobsClient
from streamjobs.domain.destinations import destination_manifest, parse_destination

ClientFactory = Callable[[typer.Context], StreamjobsClient]
OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]
RECENT_DELIVERIES = 10


def register(
    app: typer.Typer,
    create_app: typer.Typer,
    get_app: typer.Typer,
    describe_app: typer.Typer,
    delete_app: typer.Typer,
    client_for: ClientFactory,
) -> None:
    """Add the destination commands to the CLI (``test`` is a verb group of its own)."""
    test_app = typer.Typer(help="Try a resource out.", no_args_is_help=True)
    app.add_typer(test_app, name="test")

    @create_app.command("destination")
    def create_destination(
        ctx: typer.Context,
        name: str,
        kind: Annotated[str, typer.Option("--type", help="email, webhook or slack.")],
        bundle: Annotated[
            str, typer.Option(help="The bundle whose secrets the secret names are in.")
        ] = "default",
        description: Annotated[str | None, typer.Option(help="What it is for.")] = None,
        host: Annotated[str | None, typer.Option(help="email: the SMTP server.")] = None,
        port: Annotated[int | None, typer.Option(help="email: the SMTP port.")] = None,
        security: Annotated[
            str | None, typer.Option(help="email: starttls (default), tls or none.")
        ] = None,
        user: Annotated[str | None, typer.Option(help="email: the SMTP login.")] = None,
        password_secret: Annotated[
            str | None, typer.Option(help="email: the secret holding the SMTP password.")
        ] = None,
        sender: Annotated[
            str | None, typer.Option("--from", help="email: the sender's address.")
        ] = None,
        to: Annotated[
            list[str] | None, typer.Option("--to", help="email: a recipient (repeatable).")
        ] = None,
        url: Annotated[str | None, typer.Option(help="webhook: where to POST.")] = None,
        signing_secret: Annotated[
            str | None,
            typer.Option(help="webhook: the secret whose value signs the body (HMAC-SHA256)."),
        ] = None,
        header: Annotated[
            list[str] | None,
            typer.Option(help="webhook: a header sent as given, NAME=VALUE (repeatable)."),
        ] = None,
        header_secret: Annotated[
            list[str] | None,
            typer.Option(
                help="webhook: a header whose value is a secret, NAME=SECRET (repeatable)."
            ),
        ] = None,
        url_secret: Annotated[
            str | None,
            typer.Option(help="slack: the secret holding the incoming-webhook URL."),
        ] = None,
    ) -> None:
        """Create a notification destination from options (checked before it is sent)."""
        given: dict[str, Any] = {
            "type": kind,
            "bundle": bundle,
            "host": host,
            "port": port,
            "security": security,
            "user": user,
            "passwordSecret": password_secret,
            "from": sender,
            "to": to or None,
            "url": url,
            "signingSecret": signing_secret,
            "headers": _pairs("--header", header),
            "headerSecrets": _pairs("--header-secret", header_secret),
            "urlSecret": url_secret,
        }
        spec = {key: value for key, value in given.items() if value is not None}
        manifest = destination_manifest(name, spec, description=description)
        with reported_failures():
            parse_destination(manifest)
        with client_for(ctx) as client, reported_failures():
            created = client.create_destination(manifest)
        console().print(f"destination/{created['metadata']['name']} created")

    @get_app.command("destinations")
    def get_destinations(
        ctx: typer.Context,
        output: OutputOption = OutputFormat.table,
        kind: Annotated[
            str | None, typer.Option("--type", help="Only email, webhook or slack.")
        ] = None,
        bundle: Annotated[
            str | None, typer.Option(help="Only destinations of this bundle.")
        ] = None,
    ) -> None:
        """List notification destinations."""
        with client_for(ctx) as client, reported_failures():
            items = client.list_destinations(type=kind, bundle=bundle)["items"]
        print_list(items, output, _destinations_table)

    @get_app.command("destination")
    def get_destination(
        ctx: typer.Context, name: str, output: OutputOption = OutputFormat.yaml
    ) -> None:
        """Show one notification destination as YAML or JSON."""
        with client_for(ctx) as client, reported_failures():
            document = client.get_destination(name)
        print_one(document, output, _destinations_table)

    @describe_app.command("destination")
    def describe_destination(ctx: typer.Context, name: str) -> None:
        """Show one notification destination and its recent deliveries for a person to read."""
        with client_for(ctx) as client, reported_failures():
            document = client.get_destination(name)
            deliveries = client.destination_deliveries(name, RECENT_DELIVERIES)["items"]
        console().print(Text(describe(document, deliveries)))

    @delete_app.command("destination")
    def delete_destination(ctx: typer.Context, name: str) -> None:
        """Delete a notification destination (refused while a job's notifications name it)."""
        with client_for(ctx) as client, reported_failures():
            client.delete_destination(name)
        console().print(f"destination/{name} deleted")

    @test_app.command("destination")
    def test_destination(ctx: typer.Context, name: str) -> None:
        """Send a test notification to the destination now; exit 1 with the reason if it is
        not delivered."""
        with client_for(ctx) as client, reported_failures(f"destination/{name}"):
            answer = client.test_destination(name)
        status = answer["delivery"].get("responseStatus")
        said = f" (HTTP {status})" if status else ""
        console().print(f"destination/{name}: test notification delivered{said}")


def describe(destination: dict[str, Any], deliveries: list[dict[str, Any]]) -> str:
    """A person's view of one destination: its settings (secrets by name only), its health and
    its recent deliveries, newest first."""
    metadata, spec = destination["metadata"], destination["spec"]
    status = destination.get("status") or {}
    health = "healthy" if status.get("healthy", True) else "UNHEALTHY"
    failures = status.get("consecutiveFailures") or 0
    lines = [
        f"Name:           {metadata['name']}",
        f"Description:    {metadata.get('description') or '-'}",
        f"Type:           {spec['type']}",
        f"Bundle:         {spec.get('bundle', 'default')}",
        f"Health:         {health}" + (f" ({failures} failed in a row)" if failures else ""),
        *(f"{label + ':':<15} {value}" for label, value in _settings(spec)),
        f"Version:        {metadata['resourceVersion']}",
        f"Created:        {when(metadata['creationTimestamp'])} by {metadata['createdBy']}",
        f"Updated:        {when(metadata['updateTimestamp'])} by {metadata['updatedBy']}",
        "",
        "Recent deliveries:" + ("" if deliveries else " -"),
    ]
    for delivery in deliveries:
        what = delivery["job"] or "(test)"
        outcome = delivery["state"]
        if delivery.get("responseStatus"):
            outcome += f" HTTP {delivery['responseStatus']}"
        lines.append(
            f"  #{delivery['id']} {when(delivery['createdAt'])} {delivery['event']} {what}: "
            f"{outcome} after {delivery['attempts']} attempt(s)"
        )
        if delivery.get("lastError") and delivery["state"] != "delivered":
            lines.append(f"      {delivery['lastError']}")
    return "\n".join(lines)


def _settings(spec: dict[str, Any]) -> list[tuple[str, str]]:
    kind = spec["type"]
    if kind == "email":
        login = (
            f"{spec['user']} (password <- secret {spec['passwordSecret']})"
            if spec.get("user")
            else "-"
        )
        return [
            (
                "SMTP server",
                f"{spec['host']}:{spec.get('port', '-')} ({spec.get('security', 'starttls')})",
            ),
            ("Login", login),
            ("From", spec["from"]),
            ("To", ", ".join(spec["to"])),
        ]
    if kind == "webhook":
        headers = [f"{key}: {value}" for key, value in sorted((spec.get("headers") or {}).items())]
        headers += [
            f"{key} <- secret {name}"
            for key, name in sorted((spec.get("headerSecrets") or {}).items())
        ]
        signing = spec.get("signingSecret")
        return [
            ("URL", spec["url"]),
            ("Signed", f"yes (key <- secret {signing})" if signing else "no"),
            ("Headers", "; ".join(headers) or "-"),
        ]
    return [("URL", f"<- secret {spec['urlSecret']}")]


def _destinations_table(items: list[dict[str, Any]]) -> Table:
    table = new_table("NAME", "TYPE", "BUNDLE", "TARGET", "HEALTH")
    for item in items:
        spec = item["spec"]
        status = item.get("status") or {}
        target = _target(spec)
        table.add_row(
            item["metadata"]["name"],
            spec["type"],
            spec.get("bundle", "default"),
            Text(target),
            "healthy" if status.get("healthy", True) else "unhealthy",
        )
    return table


def _target(spec: dict[str, Any]) -> str:
    if spec["type"] == "email":
        return ", ".join(spec.get("to") or [])
    if spec["type"] == "webhook":
        return str(spec.get("url", ""))
    return f"secret {spec.get('urlSecret')}"


def _pairs(flag: str, values: list[str] | None) -> dict[str, str] | None:
    """``NAME=VALUE`` flags as a mapping; exit 2 naming the flag for one without ``=``."""
    if not values:
        return None
    pairs = {}
    for value in values:
        key, separator, rest = value.partition("=")
        if not separator or not key:
            raise fail(f"{flag} {value!r}: give it as NAME=VALUE", code=EXIT_INVALID_INPUT)
        pairs[key] = rest
    return pairs
