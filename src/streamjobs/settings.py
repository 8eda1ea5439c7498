"""The server's configuration: one Settings object read from ``STREAMJOBS_*`` variables."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from streamjobs.domain.locations import LocationError, normalized_uri


class Settings(BaseSettings):
    """Everything the server can be told, each from an environment variable STREAMJOBS_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="STREAMJOBS_", extra="ignore")

    home: Path = Field(
        default=Path(".streamjobs"),
        description="Where the server keeps its state: the SQLite store, application logs, tokens.",
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the store; default a SQLite file under home. "
        "postgresql://user:password@host:port/db selects PostgreSQL.",
    )
    host: str = Field(default="127.0.0.1", description="Address the server binds to.")
    port: int = Field(default=8040, ge=1, le=65535, description="Port the server listens on.")
    checkpoint_root: str | None = Field(
        default=None,
        description="Root under which checkpoint locations are derived for jobs that declare none; "
        "default file://<home>/checkpoints.",
    )
    default_data_roots: list[str] = Field(
        default_factory=lambda: ["file:///tmp/streamjobs"],
        description="The data roots (a JSON list of absolute paths or URIs) the `default` bundle "
        "gets on the server's first start, with checkpoint_root when that is set; the examples' "
        "connections live under /tmp/streamjobs. Later changes go through the bundle itself.",
    )
    public_url: str | None = Field(
        default=None,
        description="The URL users reach the server at, used in ready-to-copy commands; "
        "default http://<host>:<port>.",
    )

    supervisor: bool = Field(
        default=True,
        description="Run the supervisor in the server: it starts, watches and restarts drivers.",
    )
    supervisor_interval_seconds: float = Field(
        default=1.0, gt=0, description="How often the supervisor looks at every application."
    )
    heartbeat_timeout_seconds: float = Field(
        default=120.0,
        gt=0,
        description="A pipeline driver that reported once and is then silent this long is "
        "taken as hung: it is killed and the restart policy decides.",
    )
    stop_timeout_seconds: float = Field(
        default=300.0, gt=0, description="How long a graceful stop may take before an abort."
    )
    abort_grace_seconds: float = Field(
        default=15.0, gt=0, description="How long after SIGTERM an aborted driver gets SIGKILL."
    )
    restart_lead_seconds: float = Field(
        default=20.0,
        ge=0,
        description="How long before a pipeline's restart is due its new driver may start: the "
        "JVM and Spark session come up during the retry interval and the queries wait for its "
        "end. Only after an attempt that ran (not after a failure to start); 0 turns it off.",
    )
    spark_master: str | None = Field(
        default=None,
        description="spark://host:port of the Spark standalone cluster that runs "
        "`deployment: standard` jobs.",
    )
    spark_worker_dirs: list[Path] = Field(
        default_factory=list,
        description="The standalone workers' work directories, where executor logs are read.",
    )
    progress_kept: int = Field(
        default=200, ge=1, description="How many progress reports are kept per application."
    )
    isolation: bool = Field(
        default=True,
        description="Run every driver in its sandbox (bubblewrap), as its runAs account when the "
        "server is root. Turning it off lets every job do what the server's user can do: only "
        "for a machine with one trusted user.",
    )
    identity_homes: Path | None = Field(
        default=None,
        description="Where each runAs identity's home is kept (its Maven/Ivy resolver cache), "
        "outside STREAMJOBS_HOME; default /var/lib/streamjobs/run-as as root, else "
        "~/.cache/streamjobs/run-as.",
    )
    secret_key: SecretStr | None = Field(
        default=None,
        description="The key that encrypts stored secrets: the urlsafe base64 of 32 random "
        "bytes. Default: the key file secret.key under home, created on first start (mode 600).",
    )

    @field_validator("default_data_roots")
    @classmethod
    def _absolute_locations(cls, roots: list[str]) -> list[str]:
        for root in roots:
            try:
                normalized_uri(root)
            except LocationError as error:
                raise ValueError(f"data root {root!r}: {error}") from None
        return roots

    @property
    def resolved_home(self) -> Path:
        return self.home.expanduser().resolve()

    @property
    def resolved_identity_homes(self) -> Path:
        if self.identity_homes is not None:
            return self.identity_homes.expanduser().resolve()
        if os.geteuid() == 0:
            return Path("/var/lib/streamjobs/run-as")
        return Path.home() / ".cache" / "streamjobs" / "run-as"

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{self.resolved_home / 'streamjobs.db'}"

    @property
    def resolved_checkpoint_root(self) -> str:
        return self.checkpoint_root or (self.resolved_home / "checkpoints").as_uri()

    @property
    def resolved_public_url(self) -> str:
        return self.public_url or f"http://{self.host}:{self.port}"

    @property
    def apps_directory(self) -> Path:
        """Where each attempt's logs and files are: ``<apps>/<application>/<attempt>/``."""
        return self.resolved_home / "apps"

    @property
    def admin_password_file(self) -> Path:
        return self.resolved_home / "admin-password"

    @property
    def session_key_file(self) -> Path:
        """The key that signs web UI session cookies, created on first start (mode 600)."""
        return self.resolved_home / "session-key"

    @property
    def secret_key_file(self) -> Path:
        """The key that encrypts stored secrets when ``secret_key`` is not given."""
        return self.resolved_home / "secret.key"

    @property
    def admin_token_file(self) -> Path:
        return self.resolved_home / "admin-token"
