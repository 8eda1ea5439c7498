"""What a new attempt is given: the job snapshot, node sizes, connections, secrets, a token.

Connections and secrets are read when the attempt starts, not when the application did, so a
rotated password reaches the next restart. Secrets come from the job's own bundle only: those
``envSecrets`` names go to the driver's environment under the variables it names, those of the
connections it uses under ``STREAMJOBS_SECRET_<NAME>`` (where the runner looks), and those of
``sparkConfSecrets`` to the launcher, which hands them to spark-submit in a private file. A
secret the bundle lacks fails the launch, naming where the job asked for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from streamjobs.domain.connections import Connection, connections_used
from streamjobs.domain.datasets import secret_env_var
from streamjobs.domain.errors import InvalidInput
from streamjobs.domain.manifest import StreamingJob
from streamjobs.domain.secrets import (
    SecretUse,
    connection_secret_uses,
    env_secret_uses,
    spark_conf_secret_uses,
)
from streamjobs.domain.spec import derived_checkpoint_location, parse_manifest
from streamjobs.launch.base import AttemptSpec, LaunchFailed, NodeSize
from streamjobs.services.connections import stored_connections
from streamjobs.services.job_references import ServerPlaces, check_references
from streamjobs.services.secret_box import SecretUnreadable
from streamjobs.store import ApplicationRecord
from streamjobs.store.db import Repositories, Store


class SecretResolver(Protocol):
    """Where secret values come from (``SecretService``)."""

    def resolve(self, bundle: str, names: Iterable[str]) -> dict[str, str]: ...


@dataclass(frozen=True)
class AttemptSecrets:
    """The secret values one attempt's driver gets."""

    environment: dict[str, str] = field(default_factory=dict)
    spark_conf: dict[str, str] = field(default_factory=dict)


class AttemptFactory:
    """Builds the ``AttemptSpec`` of an application's next attempt."""

    def __init__(
        self,
        *,
        store: Store,
        apps_directory: Path,
        public_url: str,
        secrets: SecretResolver,
        places: ServerPlaces | None = None,
    ) -> None:
        """With ``places``, each attempt's job is checked again against its bundle as it is now
        (its data roots and Spark policy may have narrowed since the Run)."""
        self._places = places
        self._store = store
        self._apps_directory = apps_directory
        self._public_url = public_url.rstrip("/")
        self._secrets = secrets

    @property
    def apps_directory(self) -> Path:
        """Where every attempt's directory is (``directory_for``)."""
        return self._apps_directory

    def directory_for(self, application: ApplicationRecord, number: int) -> Path:
        """``<apps>/<application>/<attempt>/``: the attempt's logs and files."""
        return self._apps_directory / application.id / str(number)

    def spec_for(
        self,
        application: ApplicationRecord,
        number: int,
        token: str,
        *,
        hold_until: datetime | None = None,
        fence: str = "",
        standby: bool = False,
    ) -> AttemptSpec:
        """The attempt ``number`` of ``application``, recorded with ``fence``; its driver
        reports with ``token`` and, when ``hold_until`` is given, starts its queries no sooner.

        ``LaunchFailed`` when a secret the job names is missing from its bundle, or when the
        manifest the application was run with breaks a rule added since.
        """
        with self._store.transaction() as repos:
            job = _parsed_snapshot(repos.applications.spec(application.id))
            driver = repos.node_types.get(job.spec.instance.driver)
            executor_name = job.spec.instance.executor
            executor = repos.node_types.get(executor_name) if executor_name else None
            known = stored_connections(repos)
            bundle = repos.bundles.get(job.spec.bundle)
            if self._places is not None:
                _check_still_allowed(job, repos, self._places)
        used = [known[name] for name in sorted(connections_used(job)) if name in known]
        secrets = self.secrets_for(job, used)
        return AttemptSpec(
            application_id=application.id,
            attempt=number,
            job=job,
            directory=self.directory_for(application, number),
            driver=NodeSize(driver.cores, driver.memory_mb),
            executor=NodeSize(executor.cores, executor.memory_mb) if executor else None,
            connections=used,
            secrets=secrets.environment,
            spark_conf_secrets=secrets.spark_conf,
            report_url=f"{self._public_url}/api/v1/applications/{application.id}/reports",
            report_token=token,
            hold_until=hold_until,
            standby=standby,
            run_as=application.run_as,
            data_roots=tuple(bundle.data_roots or ()),
            fence=fence,
        )

    def secrets_for(self, job: StreamingJob, connections: list[Connection]) -> AttemptSecrets:
        """The values of every secret the job and its connections name, from the job's bundle."""
        environment, spark_conf = env_secret_uses(job), spark_conf_secret_uses(job)
        from_connections = connection_secret_uses(connections)
        uses = environment + spark_conf + from_connections
        bundle = job.spec.bundle
        try:
            values = self._secrets.resolve(bundle, {use.secret for use in uses})
        except SecretUnreadable as error:
            raise LaunchFailed(error.detail) from None
        _require_all(uses, values, bundle)
        return AttemptSecrets(
            environment={
                **{secret_env_var(use.secret): values[use.secret] for use in from_connections},
                **_by_target(environment, values),
            },
            spark_conf=_by_target(spark_conf, values),
        )


def _by_target(uses: list[SecretUse], values: Mapping[str, str]) -> dict[str, str]:
    return {use.target: values[use.secret] for use in uses}


def _require_all(uses: list[SecretUse], values: Mapping[str, str], bundle: str) -> None:
    missing = [use for use in uses if use.secret not in values]
    if missing:
        where = "; ".join(f"{use.path}: secret {use.secret!r}" for use in missing)
        raise LaunchFailed(
            f"{where} {'does' if len(missing) == 1 else 'do'} not exist in resource bundle "
            f"{bundle!r}; create {'it' if len(missing) == 1 else 'them'} with `streamjobs "
            f"create secret NAME --bundle {bundle} --from-file PATH`"
        )


def _parsed_snapshot(manifest: Mapping[str, Any]) -> StreamingJob:
    """The job an application was run with, as stored then; validated again as it is read."""
    try:
        return parse_manifest(manifest)
    except InvalidInput as error:
        raise LaunchFailed(
            f"the manifest this application was run with no longer passes validation: "
            f"{error.detail}"
        ) from None


def _check_still_allowed(job: StreamingJob, repos: Repositories, places: ServerPlaces) -> None:
    """``LaunchFailed`` when the job names what its bundle no longer allows; its derived
    checkpoint, resolved in the snapshot, is checked as the server's own again."""
    pipeline = job.spec.pipeline
    if pipeline is not None and pipeline.streaming.checkpoint_location == (
        derived_checkpoint_location(job, places.checkpoint_root)
    ):
        streaming = pipeline.streaming.model_copy(update={"checkpoint_location": None})
        spec = job.spec.model_copy(
            update={"pipeline": pipeline.model_copy(update={"streaming": streaming})}
        )
        job = job.model_copy(update={"spec": spec})
    try:
        check_references(job, repos, places=places, source=None, lock_connections=False)
    except InvalidInput as error:
        raise LaunchFailed(f"the job no longer fits its bundle: {error.detail}") from None
