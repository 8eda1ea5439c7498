"""What a new attempt is given: the job snapshot, node sizes, connections, secrets, a token.

Connections and secrets are read when the attempt starts, not when the application did, so a
rotated password reaches the next restart. Until the server keeps secrets itself, a secret
named ``x`` is read from the server's environment variable ``STREAMJOBS_SECRET_X``; the driver
gets it in its environment only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from streamjobs.domain.connections import Connection, connections_used
from streamjobs.domain.datasets import secret_env_var, secrets_from_environment
from streamjobs.domain.spec import parse_manifest
from streamjobs.launch.base import AttemptSpec, LaunchFailed, NodeSize
from streamjobs.services.connections import stored_connections
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Store


class AttemptFactory:
    """Builds the ``AttemptSpec`` of an application's next attempt."""

    def __init__(
        self,
        *,
        store: Store,
        apps_directory: Path,
        public_url: str,
        environment: Mapping[str, str],
    ) -> None:
        self._store = store
        self._apps_directory = apps_directory
        self._public_url = public_url.rstrip("/")
        self._environment = environment

    def spec_for(self, application: ApplicationRecord, number: int, token: str) -> AttemptSpec:
        """The attempt ``number`` of ``application``; its driver reports with ``token``."""
        job = parse_manifest(application.spec)
        with self._store.transaction() as repos:
            driver = repos.node_types.get(job.spec.instance.driver)
            executor_name = job.spec.instance.executor
            executor = repos.node_types.get(executor_name) if executor_name else None
            known = stored_connections(repos)
        used = [known[name] for name in sorted(connections_used(job)) if name in known]
        return AttemptSpec(
            application_id=application.id,
            attempt=number,
            job=job,
            directory=self._apps_directory / application.id / str(number),
            driver=NodeSize(driver.cores, driver.memory_mb),
            executor=NodeSize(executor.cores, executor.memory_mb) if executor else None,
            connections=used,
            secrets=self._secrets(job.spec.configuration.env_secrets, used),
            report_url=f"{self._public_url}/api/v1/applications/{application.id}/reports",
            report_token=token,
        )

    def _secrets(
        self, env_secrets: Mapping[str, str], connections: list[Connection]
    ) -> dict[str, str]:
        values = {
            secret_env_var(name): value
            for name, value in secrets_from_environment(self._environment, connections).items()
        }
        for variable, secret in env_secrets.items():
            source = secret_env_var(secret)
            if source not in self._environment:
                raise LaunchFailed(
                    f"spec.configuration.envSecrets.{variable}: secret {secret!r} is not set "
                    f"on the server (environment variable {source})"
                )
            values[variable] = self._environment[source]
        return values
