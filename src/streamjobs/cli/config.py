"""Where the CLI finds its server and token: flags, then environment, then the saved login."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from platformdirs import user_config_path

from streamjobs.client import DEFAULT_SERVER


def config_file() -> Path:
    """``$STREAMJOBS_CONFIG``, or ``config.yaml`` in the user's config directory."""
    override = os.environ.get("STREAMJOBS_CONFIG")
    return Path(override) if override else user_config_path("streamjobs") / "config.yaml"


@dataclass(frozen=True)
class Login:
    server: str
    token: str | None


def save_login(login: Login) -> Path:
    """Write the login where only the user can read it (mode 600)."""
    path = config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump({"server": login.server, "token": login.token})
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(text)
    path.chmod(0o600)
    return path


def resolve_login(server: str | None, token: str | None) -> Login:
    """The server and token to use: explicit values, then STREAMJOBS_SERVER/TOKEN, then saved."""
    saved = _saved_login()
    return Login(
        server=server
        or os.environ.get("STREAMJOBS_SERVER")
        or saved.get("server")
        or DEFAULT_SERVER,
        token=token or os.environ.get("STREAMJOBS_TOKEN") or saved.get("token"),
    )


def _saved_login() -> dict[str, str]:
    path = config_file()
    if not path.is_file():
        return {}
    loaded = yaml.safe_load(path.read_text()) or {}
    return (
        {key: str(value) for key, value in loaded.items() if value}
        if isinstance(loaded, dict)
        else {}
    )
