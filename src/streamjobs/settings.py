"""The server's configuration: one Settings object read from ``STREAMJOBS_*`` variables."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from pydantic import Field, SecretStr, ValidationInfo, field_validator

from streamjobs.domain.locations import LocationError, normalized_uri
from streamjobs.settings_sign_in import ENV_PREFIX, SignInSettings

__all__ = ["ENV_PREFIX", "Settings"]


class Settings(SignInSettings):
    """Everything the server can be told, each from an environment variable STREAMJOBS_<NAME>
    (who may sign in, and how, in ``SignInSettings``)."""

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
    snapshot_root: Path | None = Field(
        default=None,
        description="Where the server keeps jobs' snapshots (copies of their checkpoints); no "
        "job can reach it. Default <home>/snapshots.",
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
    standby_retry_seconds: float = Field(
        default=10.0,
        ge=0,
        description="How long after a job's standby driver ended (it died, or could not start) "
        "before another is started (jobs with spec.instance.standby).",
    )
    driver_java_options: str = Field(
        default="",
        description="JVM options of every driver (and Spark tool) the server starts on its own "
        "host, as Spark's spark.driver.defaultJavaOptions, which no job may set; the job's own "
        "spec.configuration.javaOptions come after them. For example a class-data archive of "
        "Spark's classes (-XX:SharedArchiveFile=...) for faster starts.",
    )
    spark_master: str | None = Field(
        default=None,
        description="spark://host:port of the Spark standalone cluster that runs "
        "`deployment: standard` jobs.",
    )
    spark_worker_dirs: list[Path] = Field(
        default_factory=list,
        description="The standalone workers' work directories, where executor logs are read "
        "when the workers are on this machine; else they are read from each worker's web UI.",
    )
    spark_master_rest_url: str | None = Field(
        default=None,
        description="The standalone master's REST submission server, through which "
        "`deployMode: cluster` drivers are submitted, followed and killed; default "
        "http://<master host>:6066 (the master needs spark.master.rest.enabled=true).",
    )
    spark_master_web_url: str | None = Field(
        default=None,
        description="The standalone master's web UI, whose /json/ says where the workers' web "
        "UIs are (executors' and cluster-mode drivers' logs are read there); default "
        "http://<master host>:8080.",
    )
    driver_host: str | None = Field(
        default=None,
        description="The address client-mode drivers advertise to executors (spark.driver.host);"
        " default: for a master on another host, this machine's address on the route to it, "
        "else 127.0.0.1.",
    )
    driver_bind_address: str | None = Field(
        default=None,
        description="The address client-mode drivers listen on (spark.driver.bindAddress); "
        "default the driver host.",
    )
    server_name: str | None = Field(
        default=None,
        description="This server's name in the supervisor's lease and the UI's footer; default "
        "<hostname>:<port>.",
    )
    lease_seconds: float = Field(
        default=15.0,
        ge=2,
        description="How long the supervisor's lease holds without renewal (PostgreSQL stores "
        "with several servers): a standby server takes over this long after the leader is lost. "
        "The leader renews it every third of that.",
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

    # Run and Delete (issue 20, item 5): how long a Delete that aborts the job's live
    # application first waits for it to end.
    delete_abort_wait_seconds: float = Field(
        default=30.0,
        gt=0,
        description="How long `DELETE /jobs/NAME?abort=true` waits for the aborted application "
        "to end before it answers 409; keep it above abort_grace_seconds.",
    )

    # Bounded inputs (issue 20, items 2, 3 and 7): the largest request body of each family of
    # routes, refused with 413 while it streams in.
    max_body_bytes: int = Field(
        default=1024 * 1024, ge=1024, description="The largest request body of an /api route."
    )
    max_report_body_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="The largest report a driver may post (a batch of up to 100 query events).",
    )
    max_pipeline_check_body_bytes: int = Field(
        default=256 * 1024,
        ge=1024,
        description="The largest pipeline block the web form's live check reads.",
    )
    max_form_body_bytes: int = Field(
        default=2 * 1024 * 1024,
        ge=1024,
        description="The largest web form post (a manifest's YAML, URL-encoded).",
    )

    # Storage errors (issue 20, item 7): how long a SQLite write waits for another's lock
    # before it is refused with 503.
    sqlite_busy_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        description="How long a write to a SQLite store waits while another process holds "
        "the database's lock before it is refused (503, the database is locked).",
    )

    # Connector jars (issue 21, jars): where the server resolves the jars jobs need before their
    # drivers start (launch.jars), so a test can point both at empty directories.
    maven_repository: Path = Field(
        default=Path.home() / ".m2" / "repository",
        description="The local Maven repository the server reads and writes connector jars in "
        "(the one `mvn` uses); Spark's resolver looks there first.",
    )
    ivy_directory: Path = Field(
        default=Path.home() / ".ivy2.5.2",
        description="Spark's resolver (Ivy) directory where the server resolves jobs' packages; "
        "drivers are given the jar files from it. Its streamjobs-resolved/ keeps what was "
        "resolved (delete it to resolve again).",
    )

    # Notification delivery (issue 22, delivery): the worker that sends the outbox (notify.worker).
    delivery: bool = Field(
        default=True,
        description="Run the notification delivery worker in the server (it sends the outbox).",
    )
    delivery_interval_seconds: float = Field(
        default=2.0, gt=0, description="How often the delivery worker looks for due notifications."
    )
    delivery_retry_base_seconds: float = Field(
        default=10.0,
        gt=0,
        description="Wait before the first retry of a failed notification; each further retry "
        "waits twice as long (with up to 20% random jitter), up to delivery_retry_max_seconds.",
    )
    delivery_retry_max_seconds: float = Field(
        default=3600.0, gt=0, description="The longest wait between two tries of a notification."
    )
    delivery_max_attempts: int = Field(
        default=8,
        ge=1,
        description="Tries of one notification before it is failed for good.",
    )
    delivery_unhealthy_after: int = Field(
        default=3,
        ge=1,
        description="Failed sends in a row after which a destination is marked unhealthy (its "
        "next successful send marks it healthy again).",
    )
    delivery_send_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        description="How long one send (an SMTP conversation step, an HTTP request) may take "
        "before it counts as failed.",
    )

    # Prometheus metrics (issue 22, metrics): GET /metrics behind a token of its own, or open on
    # a port of its own (api.metrics); with neither, /metrics answers 404 saying which to set.
    metrics_token: SecretStr | None = Field(
        default=None,
        description="The bearer token Prometheus sends to read GET /metrics on the server's "
        "port (at least 16 characters; only its digest is compared).",
    )
    metrics_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="A port of its own, on the server's host, where the metrics are served "
        "open to whoever reaches it (bind the host to a network only Prometheus reaches).",
    )

    @field_validator("metrics_token")
    @classmethod
    def _long_metrics_token(cls, token: SecretStr | None) -> SecretStr | None:
        if token is not None and len(token.get_secret_value()) < 16:
            raise ValueError("the metrics token must be at least 16 characters long")
        return token

    @field_validator("metrics_port")
    @classmethod
    def _metrics_port_apart(cls, metrics_port: int | None, info: ValidationInfo) -> int | None:
        if metrics_port is not None and metrics_port == info.data.get("port"):
            raise ValueError(f"metrics port {metrics_port} is the server's own port")
        return metrics_port

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
    def resolved_snapshot_root(self) -> Path:
        if self.snapshot_root is not None:
            return self.snapshot_root.expanduser().resolve()
        return self.resolved_home / "snapshots"

    @property
    def resolved_public_url(self) -> str:
        return self.public_url or f"http://{self.host}:{self.port}"

    @property
    def resolved_server_name(self) -> str:
        return self.server_name or f"{socket.gethostname()}:{self.port}"

    @property
    def apps_directory(self) -> Path:
        """Where each attempt's logs and files are: ``<apps>/<application>/<attempt>/``."""
        return self.resolved_home / "apps"

    @property
    def admin_password_file(self) -> Path:
        return self.resolved_home / "admin-password"

    @property
    def secret_key_file(self) -> Path:
        """The key that encrypts stored secrets when ``secret_key`` is not given."""
        return self.resolved_home / "secret.key"

    @property
    def admin_token_file(self) -> Path:
        return self.resolved_home / "admin-token"
