"""The compatibility check of an upgrade: can a job's new spec continue from its checkpoint?

Asked before anything is stopped (``upgrade`` in last-state or snapshot mode, ``upgrade
--dry-run``, the form before saving), it never touches the running application: it reads the
application's spec and copies its checkpoint. First the static rules (``domain.compatibility``)
compare the running spec with the new one; a refusal there ends the check. Then the dry run:
the checkpoint is copied (by the server, refusing links and special files) into a fresh work
directory, the ``dry-run`` tool replays each query's last batch of the copy with the new spec in
a short sandboxed Spark session (``launch.tool_runs``), its failures are explained
(``domain.dry_runs.explain``) and the copy is deleted.
"""

from __future__ import annotations

import logging
import shutil
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from streamjobs.domain.access import Actor, JobAction
from streamjobs.domain.clock import Clock
from streamjobs.domain.compatibility import Incompatibility, StaticReview, review
from streamjobs.domain.connections import Connection, connections_used
from streamjobs.domain.datasets import secret_env_var
from streamjobs.domain.dry_runs import (
    TOOL,
    QueryCheck,
    UnreadableResult,
    explain,
    parse_result,
    tool_arguments,
)
from streamjobs.domain.errors import Conflict, FieldConflict, FieldError, InvalidInput
from streamjobs.domain.manifest import Guarantee, StreamingJob
from streamjobs.domain.pipeline_queries import FOR_EACH_BATCH_QUERY, output_keys
from streamjobs.domain.secrets import (
    SecretUse,
    connection_secret_uses,
    env_secret_uses,
    spark_conf_secret_uses,
)
from streamjobs.domain.spec import parse_manifest, resolved_template
from streamjobs.launch.base import LaunchFailed
from streamjobs.launch.tool_runs import (
    ToolResult,
    ToolRun,
    ToolRunner,
    connections_file,
    manifest_file,
)
from streamjobs.services.access import require_job
from streamjobs.services.checkpoint_state import holds_state
from streamjobs.services.connections import stored_connections
from streamjobs.services.snapshot_files import Refused, check_tree, copy_tree, remove_tree
from streamjobs.services.snapshot_restore import local_checkpoint
from streamjobs.store.db import Store

DRY_RUN_SECONDS = 180.0
"""How long the replays may take once the tool's Spark session has started."""
STARTUP_SECONDS = 120.0
"""How long the tool's spark-submit may take to start its session (and resolve packages)."""
COPY_TRIES = 3
"""A running query writes its checkpoint while it is copied: a copy that met a file going away
is made again."""
REFUSED = "the new spec cannot continue from the running application's checkpoint: "
_log = logging.getLogger(__name__)


class SecretValues(Protocol):
    """Where secret values come from (``SecretService``): those of ``names`` the bundle has."""

    def resolve(self, bundle: str, names: Iterable[str]) -> dict[str, str]: ...


@dataclass(frozen=True)
class DryRunOutcome:
    """What the dry run found: each query it replayed, and why the new spec does not fit."""

    compatible: bool
    queries: list[QueryCheck] = field(default_factory=list)
    failures: list[Incompatibility] = field(default_factory=list)


@dataclass(frozen=True)
class CompatibilityReport:
    """The check's answer: ``compatible`` when no static rule refused the new spec and the dry
    run (when one ran) found nothing; ``warnings`` are changes allowed but worth knowing."""

    compatible: bool
    refusals: list[Incompatibility]
    warnings: list[str]
    dry_run: DryRunOutcome | None

    @property
    def reasons(self) -> list[Incompatibility]:
        """Every reason the new spec does not fit: the static refusals, then the dry run's."""
        return [*self.refusals, *(self.dry_run.failures if self.dry_run else [])]

    def raise_if_incompatible(self) -> None:
        """``FieldConflict`` (409) listing each reason as ``path: message``."""
        if not self.compatible:
            reasons = self.reasons or [Incompatibility("spec", "dry-run", "the dry run failed")]
            errors = [FieldError(reason.path, reason.message) for reason in reasons]
            raise FieldConflict(errors, prefix=REFUSED)

    def to_wire(self) -> dict[str, Any]:
        """The report as the API gives it."""
        dry_run = self.dry_run
        return {
            "compatible": self.compatible,
            "refusals": [_reason_wire(reason) for reason in self.refusals],
            "warnings": list(self.warnings),
            "dryRun": None
            if dry_run is None
            else {
                "compatible": dry_run.compatible,
                "queries": [
                    {"query": query.query, "batch": query.batch, "compatible": query.error is None}
                    for query in dry_run.queries
                ],
                "failures": [_reason_wire(reason) for reason in dry_run.failures],
            },
        }


@dataclass(frozen=True)
class _Basis:
    """What one check compares and needs: the running spec (None when no application is
    live), the new one, and what a tool run of the job gets."""

    job_name: str
    old: StreamingJob | None
    new: StreamingJob
    bundle: str
    run_as: str
    data_roots: tuple[str, ...]
    connections: list[Connection]


class CompatibilityCheck:
    """Checks whether a job's new spec can continue from its checkpoint (see the module)."""

    def __init__(
        self,
        *,
        store: Store,
        clock: Clock,
        tools: ToolRunner,
        checkpoint_root: str,
        work_directory: Path,
        secrets: SecretValues | None = None,
        dry_run_seconds: float = DRY_RUN_SECONDS,
    ) -> None:
        """``work_directory``: the server's own, where each dry run gets a fresh directory
        (removed after it); ``secrets``: the values the job's connections and settings name
        (None: the tool gets none)."""
        self._store = store
        self._clock = clock
        self._tools = tools
        self._checkpoint_root = checkpoint_root
        self._work_directory = work_directory
        self._secrets = secrets
        self._dry_run_seconds = dry_run_seconds

    def check(
        self, job_name: str, new_manifest: dict[str, Any] | None = None, *, actor: Actor
    ) -> CompatibilityReport:
        """Whether ``new_manifest`` (None: the job's current manifest) can continue from the
        checkpoint of the job's live application (UPGRADE permission). ``Conflict`` when there
        is nothing to check: no live application and a checkpoint without state."""
        basis = self._basis(job_name, new_manifest, actor)
        found = review(basis.old, basis.new) if basis.old is not None else _without_running()
        if found.refusals:
            return CompatibilityReport(False, found.refusals, found.warnings, None)
        pipeline = basis.new.spec.pipeline
        if pipeline is None or pipeline.batch_mode:
            return CompatibilityReport(True, [], found.warnings, None)
        if basis.new.spec.processing.guarantee is Guarantee.NONE:
            return CompatibilityReport(True, [], found.warnings, None)
        checkpoint = local_checkpoint(basis.new, self._checkpoint_root)
        if checkpoint is None:
            where = "spec.pipeline.streaming.checkpointLocation"
            note = f"{where}: the checkpoint is not on this machine, so no dry run checks it"
            return CompatibilityReport(True, [], [*found.warnings, note], None)
        if not holds_state(checkpoint.as_uri()):
            if basis.old is None:
                raise Conflict(
                    f"job {job_name!r} has no live application and its checkpoint holds no "
                    "state: there is nothing to check the new spec against; run it instead"
                )
            note = "the checkpoint holds no state yet: the dry run has nothing to replay"
            return CompatibilityReport(True, [], [*found.warnings, note], None)
        outcome = self._dry_run(basis, checkpoint)
        return CompatibilityReport(outcome.compatible, [], found.warnings, outcome)

    def _basis(self, job_name: str, new_manifest: dict[str, Any] | None, actor: Actor) -> _Basis:
        with self._store.reading() as repos:
            record = repos.jobs.get(job_name)
            require_job(repos, actor, record.name, record.bundle, JobAction.UPGRADE)
            live = repos.applications.live_for_job(job_name)
            old = _parsed(repos.applications.spec(live.id)) if live is not None else None
            new = self._resolved(new_manifest if new_manifest is not None else record.manifest)
            known = stored_connections(repos)
            data_roots = tuple(repos.bundles.get(record.bundle).data_roots or ())
        if new.name != job_name:
            raise InvalidInput(
                [FieldError("metadata.name", f"is {new.name!r}: give a manifest of {job_name!r}")]
            )
        if new.spec.bundle != record.bundle:
            raise InvalidInput(
                [
                    FieldError(
                        "spec.bundle",
                        f"is {new.spec.bundle!r}: an upgrade runs the job in its own bundle, "
                        f"{record.bundle!r}",
                    )
                ]
            )
        return _Basis(
            job_name=job_name,
            old=old,
            new=new,
            bundle=record.bundle,
            run_as=live.run_as if live is not None else new.spec.run_as or record.created_by,
            data_roots=data_roots,
            connections=[known[name] for name in sorted(connections_used(new)) if name in known],
        )

    def _resolved(self, manifest: Mapping[str, Any]) -> StreamingJob:
        """The job as it would run: validated, its derived checkpoint location filled in."""
        job = parse_manifest(dict(manifest), checkpoint_root=self._checkpoint_root)
        return parse_manifest(resolved_template(job, checkpoint_root=self._checkpoint_root))

    def _dry_run(self, basis: _Basis, checkpoint: Path) -> DryRunOutcome:
        secrets, spark_conf_secrets = self._secret_values(basis)
        self._work_directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        work = self._work_directory / f"dry-run-{uuid.uuid4().hex}"
        work.mkdir(mode=0o700)
        try:
            copy = work / "checkpoint"
            _copy_checkpoint(checkpoint, copy, basis.job_name)
            run = ToolRun(
                tool=TOOL,
                job=basis.new,
                arguments=tool_arguments(
                    manifest=str(manifest_file(work)),
                    connections=str(connections_file(work)) if basis.connections else None,
                    checkpoint=str(copy),
                    timeout_seconds=self._dry_run_seconds,
                ),
                directory=work,
                readable=[],
                writable=[],
                timeout_seconds=self._dry_run_seconds + STARTUP_SECONDS,
                connections=basis.connections,
                secrets=secrets,
                spark_conf_secrets=spark_conf_secrets,
                run_as=basis.run_as,
                data_roots=basis.data_roots,
            )
            try:
                result = self._tools.run(run)
            except LaunchFailed as failed:
                return _failed(f"the dry run could not start: {failed.detail}")
        finally:
            remove_tree(work)
        return _outcome(result, basis)

    def _secret_values(self, basis: _Basis) -> tuple[dict[str, str], dict[str, str]]:
        """The environment's and Spark settings' secret values, as a driver of the job gets
        them; ``FieldConflict`` naming each secret the bundle lacks."""
        environment, settings = env_secret_uses(basis.new), spark_conf_secret_uses(basis.new)
        from_connections = connection_secret_uses(basis.connections)
        uses = environment + settings + from_connections
        if not uses or self._secrets is None:
            return {}, {}
        values = self._secrets.resolve(basis.bundle, {use.secret for use in uses})
        missing = [use for use in uses if use.secret not in values]
        if missing:
            raise FieldConflict(
                [
                    FieldError(
                        use.path, f"secret {use.secret!r} does not exist in {basis.bundle!r}"
                    )
                    for use in missing
                ],
                prefix="the dry run needs secrets the job's bundle lacks: ",
            )
        return (
            {
                **{secret_env_var(use.secret): values[use.secret] for use in from_connections},
                **_by_target(environment, values),
            },
            _by_target(settings, values),
        )


def _outcome(result: ToolResult, basis: _Basis) -> DryRunOutcome:
    """The tool's answer explained, query by query."""
    if result.timed_out:
        return _failed(
            "the dry run did not end in time, so the check cannot tell whether the new spec "
            "fits the checkpoint; try again"
        )
    try:
        answer = parse_result(result.result)
    except UnreadableResult as unreadable:
        _log.warning(
            "the dry run of %s ended with exit code %s and no answer: %s; its log ends:\n%s",
            basis.job_name,
            result.exit_code,
            unreadable,
            result.stderr_tail,
        )
        return _failed(f"the dry run failed (exit code {result.exit_code}): {unreadable}")
    if answer.error is not None:
        return _failed(f"the dry run could not run the new spec: {answer.error}")
    failures = [
        explain(query, where=_where(basis.new, query.query))
        for query in answer.queries
        if query.error is not None
    ]
    return DryRunOutcome(
        compatible=answer.compatible and not failures,
        queries=list(answer.queries),
        failures=failures,
    )


def _failed(message: str) -> DryRunOutcome:
    return DryRunOutcome(
        compatible=False, failures=[Incompatibility("spec.pipeline", "dry-run-failed", message)]
    )


def _where(job: StreamingJob, query: str) -> str:
    """The manifest path of the output whose query is ``query``."""
    pipeline = job.spec.pipeline
    if pipeline is None or query == FOR_EACH_BATCH_QUERY:
        return "spec.pipeline"
    keys = output_keys(pipeline)
    return f"spec.pipeline.outputs[{keys.index(query)}]" if query in keys else "spec.pipeline"


def _copy_checkpoint(source: Path, target: Path, job_name: str) -> None:
    """A copy of the checkpoint at ``target`` holding only directories and regular files;
    ``Conflict`` saying why there is none."""
    refused = f"the checkpoint of job {job_name!r} cannot be checked"
    if source.is_symlink() or not source.is_dir():
        raise Conflict(f"{refused}: {source} is not a directory")
    for attempt in range(COPY_TRIES):
        try:
            copy_tree(source, target)
            check_tree(target)
            return
        except Refused as refusal:
            raise Conflict(f"{refused}: {refusal}") from None
        except (shutil.Error, OSError) as error:
            remove_tree(target)
            if attempt == COPY_TRIES - 1:
                raise Conflict(f"{refused}: copying it failed: {error}") from None


def _parsed(manifest: Mapping[str, Any]) -> StreamingJob | None:
    """The running application's spec; None when it no longer passes validation (then only
    the dry run speaks)."""
    try:
        return parse_manifest(dict(manifest))
    except InvalidInput:
        return None


def _without_running() -> StaticReview:
    found = StaticReview()
    found.warn(
        "spec",
        "no application of the job is live, so the static rules have no spec to compare with; "
        "the dry run checks the new spec against the checkpoint",
    )
    return found


def _by_target(uses: list[SecretUse], values: Mapping[str, str]) -> dict[str, str]:
    return {use.target: values[use.secret] for use in uses}


def _reason_wire(reason: Incompatibility) -> dict[str, str]:
    return {"path": reason.path, "rule": reason.rule, "message": reason.message}
