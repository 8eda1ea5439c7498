"""The commands that run on the server's machine and open the store directly: ``server``, ``admin``.

Every other command reaches the server through ``client``; these two start it or prepare it.
"""

from __future__ import annotations

import logging
import sys
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from streamjobs.cli.failures import EXIT_INVALID_INPUT, fail, reported_failures
from streamjobs.cli.jar_commands import resolve_jars
from streamjobs.cli.manifests import read_manifests
from streamjobs.cli.output import console
from streamjobs.domain.kinds import Kind, in_apply_order, kind_of
from streamjobs.settings import Settings

if TYPE_CHECKING:
    from streamjobs.services.connections import ConnectionService
    from streamjobs.services.container import Services
    from streamjobs.services.destinations import DestinationService
    from streamjobs.services.jobs import JobService

admin_app = typer.Typer(help="Prepare the server's store (runs on the server's machine).")


def register(app: typer.Typer) -> None:
    app.command("server")(server)
    app.add_typer(admin_app, name="admin")
    admin_app.command("resolve-jars")(resolve_jars)
    _show_migrations()


def _show_migrations() -> None:
    """Print a line on stderr when a command migrates the store, which may take a while."""
    log = logging.getLogger("streamjobs.store.migrations")
    if not any(isinstance(handler, _MigrationLine) for handler in log.handlers):
        log.addHandler(_MigrationLine())
        log.setLevel(logging.INFO)


class _MigrationLine(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        print(record.getMessage(), file=sys.stderr, flush=True)


def server(
    host: Annotated[str | None, typer.Option(help="Bind address (STREAMJOBS_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (STREAMJOBS_PORT).")] = None,
    load_examples: Annotated[
        list[Path],
        typer.Option(
            help="Create the connections and jobs in these manifests if they do not exist yet."
        ),
    ] = [],  # noqa: B006 - Typer reads the default, it is never mutated
) -> None:
    """Run the server: the REST API and the supervisor that runs the jobs' drivers."""
    from streamjobs.composition import build_server

    settings = Settings()
    settings = settings.model_copy(
        update={"host": host or settings.host, "port": port or settings.port}
    )
    with reported_failures():
        built = build_server(settings)
        _load(built.services, load_examples)
    console().print(
        f"streamjobs server on {settings.resolved_public_url} (home {settings.resolved_home})"
    )
    if settings.parsed_password_cost.weak:
        console().print(
            f"warning: STREAMJOBS_PASSWORD_COST {settings.password_cost} is below OWASP's "
            "recommended Argon2id costs (e.g. m=19456,t=2,p=1): stolen hashes are cheap to guess"
        )
    built.serve()


def _load(services: Services, paths: list[Path]) -> None:
    """Create what the manifests under ``paths`` declare and the store lacks: connections
    first, then the jobs that use them."""
    from streamjobs.services.identity import BOOTSTRAP_ACTOR

    manifests = [
        (kind_of(item.document, source=item.source), item)
        for item in read_manifests([str(path) for path in paths])
    ]
    creators: dict[Kind, JobService | ConnectionService | DestinationService] = {
        Kind.CONNECTION: services.connections,
        Kind.NOTIFICATION_DESTINATION: services.destinations,
        Kind.STREAMING_JOB: services.jobs,
    }
    for kind, item in in_apply_order(manifests, lambda manifest: manifest[0]):
        service = creators[kind]
        name = item.document.get("metadata", {}).get("name")
        if isinstance(name, str) and service.exists(name):
            console().print(f"{kind.label}/{name} exists (kept as it is)")
            continue
        with reported_failures(item.source):
            record = service.create(item.document, actor=BOOTSTRAP_ACTOR)
        console().print(f"{kind.label}/{record.name} created from {item.source}")


@admin_app.command("bootstrap")
def bootstrap() -> None:
    """Create the store and the `admin` user, and print its access token once."""
    from streamjobs.services.container import open_services

    settings = Settings()
    with reported_failures():
        services = open_services(settings)
        outcome = services.identity.bootstrap_admin()
    token_file = settings.admin_token_file
    if outcome.token is None:
        where = f"saved in {token_file}" if token_file.exists() else "not saved here"
        console().print(f"admin exists in {settings.resolved_home}; its first token was {where}")
        return
    _write_secret(token_file, outcome.token)
    password_file = settings.admin_password_file
    if outcome.password is not None:
        _write_secret(password_file, outcome.password)
    console().print(
        "Created user 'admin'. Its access token (shown once, saved in "
        f"{token_file}, mode 600):\n\n  {outcome.token}\n\n"
        f"Sign in to the web UI as 'admin' with the password saved in {password_file}."
    )


@admin_app.command("password")
def set_password(
    user: Annotated[str, typer.Option(help="The user whose password is set.")] = "admin",
) -> None:
    """Set a user's web UI password (read from the terminal, or from stdin when piped)."""
    from streamjobs.services.container import open_services
    from streamjobs.services.identity import BOOTSTRAP_ACTOR

    if sys.stdin.isatty():
        password = typer.prompt("New password", hide_input=True, confirmation_prompt=True)
    else:
        password = sys.stdin.readline().rstrip("\n")
    with reported_failures():
        services = open_services(Settings())
        services.identity.set_password(user, password, actor=BOOTSTRAP_ACTOR)
    console().print(f"password of {user} set")


@admin_app.command("token")
def issue_token(
    user: Annotated[str, typer.Option(help="The user the token is for.")] = "admin",
    name: Annotated[str, typer.Option(help="A name for the token, unique per user.")] = "cli",
    expires_in_days: Annotated[int | None, typer.Option(min=1)] = None,
) -> None:
    """Issue an access token for a user and print it once."""
    from streamjobs.services.container import open_services
    from streamjobs.services.identity import BOOTSTRAP_ACTOR

    with reported_failures():
        services = open_services(Settings())
        expires_at = (
            services.clock.now() + timedelta(days=expires_in_days) if expires_in_days else None
        )
        token = services.identity.issue_token(
            user, name, actor=BOOTSTRAP_ACTOR, expires_at=expires_at
        )
    typer.echo(token)


@admin_app.command("rotate-secret-key")
def rotate_secret_key(
    retire: Annotated[
        bool,
        typer.Option(
            "--retire",
            help="Instead, drop every key but the sealing one, once every server has restarted.",
        ),
    ] = False,
) -> None:
    """Put a new key first in the key file, keeping the old ones after it for opening, and reseal
    every stored secret under it. A running server reads the key file again when it meets a
    resealed secret, and seals with the new key from then on; restart the servers anyway, then
    --retire reseals whatever was still sealed under an old key and drops the old keys."""
    from streamjobs.services.container import open_services
    from streamjobs.services.secret_box import load_keys, new_key, write_key_file

    settings = Settings()
    if settings.secret_key is not None:
        raise fail(
            "the keys come from STREAMJOBS_SECRET_KEY, not a key file: set it to NEW,OLD (a new "
            "key first), restart the servers, then run `streamjobs admin reseal-secrets`",
            code=EXIT_INVALID_INPUT,
        )
    key_file = settings.secret_key_file
    with reported_failures():
        keys = load_keys(configured=None, key_file=key_file)
        if not retire:
            write_key_file(key_file, [new_key(), *keys])
        try:
            resealed = open_services(settings).secrets.reseal_all()
        except BaseException:
            write_key_file(key_file, keys)  # nothing was resealed: as it was
            raise
        if retire:
            write_key_file(key_file, keys[:1])
    done = f"resealed {resealed.resealed} of {resealed.secrets} secret(s)"
    if retire:
        console().print(f"{key_file} holds the sealing key only (dropped {len(keys) - 1}); {done}")
    else:
        console().print(
            f"new sealing key first in {key_file}, {len(keys)} older kept for opening; {done}. "
            "Restart the servers, then run `streamjobs admin rotate-secret-key --retire`."
        )


@admin_app.command("reseal-secrets")
def reseal_secrets() -> None:
    """Seal every stored secret anew under the first key (after a new key was put first in
    STREAMJOBS_SECRET_KEY and the servers restarted); the older keys may go afterwards."""
    from streamjobs.services.container import open_services

    with reported_failures():
        resealed = open_services(Settings()).secrets.reseal_all()
    console().print(f"resealed {resealed.resealed} of {resealed.secrets} secret(s)")


def _write_secret(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_text(text + "\n")
