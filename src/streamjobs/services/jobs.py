"""The job use cases: create, apply, update, duplicate, delete, list and show streaming jobs.

The REST API and the web UI both call these, so each rule lives here once: the manifest's own rules
(``domain.spec``) plus those only the store can check (the bundle and node types exist), optimistic
concurrency, and an audit record for every change, written in the same transaction as the change.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import json_merge_patch

from streamjobs.clock import Clock
from streamjobs.domain.access import Actor
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.spec import (
    StreamingJob,
    parse_manifest,
    resolved_template,
    split_server_fields,
)
from streamjobs.store.db import Repositories, Store
from streamjobs.store.jobs import JobRecord

MAX_PAGE_SIZE = 500


class ApplyOutcome(StrEnum):
    """What an apply did, so applying the same manifest twice can say it changed nothing."""

    CREATED = "created"
    CONFIGURED = "configured"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class JobQuery:
    """Which jobs to list: every filter is optional; ``tag`` is ``key`` or ``key=value``."""

    status: str | None = None
    tag: str | None = None
    bundle: str | None = None
    search: str | None = None
    limit: int = 50
    offset: int = 0


@dataclass(frozen=True)
class JobPage:
    """One page of jobs and how many match in all."""

    items: list[JobRecord]
    total: int
    limit: int
    offset: int


class JobService:
    """Creates, changes and reads streaming jobs on behalf of an actor."""

    def __init__(self, *, store: Store, clock: Clock, checkpoint_root: str) -> None:
        self._store = store
        self._clock = clock
        self._checkpoint_root = checkpoint_root

    def validate(self, document: Any, *, source: str | None = None) -> StreamingJob:
        """Check a manifest against every rule, including the ones that need the store.

        The fields the server owns (as ``get -o yaml`` prints them) are ignored, so a job read
        from the server can be edited and applied back.
        """
        manifest, _ = split_server_fields(document)
        job = parse_manifest(manifest, checkpoint_root=self._checkpoint_root, source=source)
        with self._store.transaction() as repos:
            _check_references(job, repos, source=source)
        return job

    def create(self, document: Any, *, actor: Actor) -> JobRecord:
        job = self.validate(document)
        with self._store.transaction() as repos:
            return self._add(job, repos, actor=actor)

    def apply(self, name: str, document: Any, *, actor: Actor) -> tuple[JobRecord, ApplyOutcome]:
        """Create the job, or bring it to the manifest; the same manifest twice changes nothing."""
        job = self.validate(document)
        _require_same_name(name, job)
        _, expected_version = split_server_fields(document)
        with self._store.transaction() as repos:
            current = repos.jobs.find(name)
            if current is None:
                return self._add(job, repos, actor=actor), ApplyOutcome.CREATED
            if current.manifest == _stored_form(job):
                return current, ApplyOutcome.UNCHANGED
            version = expected_version or current.version
            record = self._replace(current, job, repos, actor=actor, version=version)
        return record, ApplyOutcome.CONFIGURED

    def update(
        self,
        name: str,
        patch: Mapping[str, Any],
        *,
        actor: Actor,
        expected_version: int | None = None,
    ) -> JobRecord:
        """Apply a JSON merge patch (RFC 7396) to the job's manifest; the name cannot change."""
        if not isinstance(patch, Mapping):
            raise InvalidInput([FieldError("", "a merge patch must be a JSON object")])
        current = self.get(name)
        merged = json_merge_patch.merge(copy.deepcopy(current.manifest), copy.deepcopy(patch))
        job = self.validate(merged)
        _require_same_name(name, job)
        with self._store.transaction() as repos:
            return self._replace(
                current, job, repos, actor=actor, version=expected_version or current.version
            )

    def duplicate(self, name: str, *, new_name: str, actor: Actor) -> JobRecord:
        """Create a job named ``new_name`` with the same spec as ``name``."""
        manifest = copy.deepcopy(self.get(name).manifest)
        manifest["metadata"]["name"] = new_name
        return self.create(manifest, actor=actor)

    def delete(self, name: str, *, actor: Actor, expected_version: int | None = None) -> None:
        with self._store.transaction() as repos:
            record = repos.jobs.get(name)
            repos.jobs.delete(name, expected_version=expected_version)
            self._audit(repos, actor, "job.deleted", name, {"version": record.version})

    def exists(self, name: str) -> bool:
        with self._store.transaction() as repos:
            return repos.jobs.find(name) is not None

    def get(self, name: str) -> JobRecord:
        with self._store.transaction() as repos:
            return repos.jobs.get(name)

    def list(self, query: JobQuery) -> JobPage:
        _check_query(query)
        tag = _parse_tag_filter(query.tag) if query.tag else None
        with self._store.transaction() as repos:
            items, total = repos.jobs.list(
                status=query.status,
                tag=tag,
                bundle=query.bundle,
                search=query.search,
                limit=query.limit,
                offset=query.offset,
            )
        return JobPage(items=items, total=total, limit=query.limit, offset=query.offset)

    def template(self, name: str) -> dict[str, Any]:
        """The job's full template: every default filled in, secrets by name only."""
        record = self.get(name)
        job = parse_manifest(record.manifest, checkpoint_root=self._checkpoint_root)
        template = resolved_template(job, checkpoint_root=self._checkpoint_root)
        with self._store.transaction() as repos:
            template["resolved"] = {"nodeTypes": _node_types_of(job, repos)}
        return template

    def _add(self, job: StreamingJob, repos: Repositories, *, actor: Actor) -> JobRecord:
        record = repos.jobs.add(
            name=job.metadata.name,
            namespace=job.metadata.namespace,
            description=job.metadata.description,
            bundle=job.spec.bundle,
            manifest=_stored_form(job),
            tags=dict(job.metadata.tags),
            actor=actor.name,
            at=self._clock.now(),
        )
        self._audit(repos, actor, "job.created", record.name, {"version": record.version})
        return record

    def _replace(
        self,
        current: JobRecord,
        job: StreamingJob,
        repos: Repositories,
        *,
        actor: Actor,
        version: int,
    ) -> JobRecord:
        record = repos.jobs.update(
            current.name,
            expected_version=version,
            manifest=_stored_form(job),
            description=job.metadata.description,
            bundle=job.spec.bundle,
            tags=dict(job.metadata.tags),
            actor=actor.name,
            at=self._clock.now(),
        )
        self._audit(repos, actor, "job.configured", record.name, {"version": record.version})
        return record

    def _audit(
        self, repos: Repositories, actor: Actor, action: str, name: str, detail: dict[str, Any]
    ) -> None:
        repos.audit.append(
            at=self._clock.now(),
            actor=actor.name,
            action=action,
            resource_kind="job",
            resource_name=name,
            detail=detail,
            source=actor.source,
        )


def job_document(record: JobRecord) -> dict[str, Any]:
    """The job as clients see it: its manifest, the metadata the server owns, and its status."""
    document = copy.deepcopy(record.manifest)
    document["metadata"].update(
        uid=record.id,
        resourceVersion=str(record.version),
        creationTimestamp=record.created_at.isoformat(),
        createdBy=record.created_by,
        updateTimestamp=record.updated_at.isoformat(),
        updatedBy=record.updated_by,
    )
    document["status"] = {"phase": record.status, "desiredState": record.desired_state}
    return document


def _stored_form(job: StreamingJob) -> dict[str, Any]:
    return job.model_dump(by_alias=True, mode="json")


def _require_same_name(name: str, job: StreamingJob) -> None:
    if job.metadata.name != name:
        raise InvalidInput(
            [
                FieldError(
                    "metadata.name",
                    f"a job's name cannot change (it is {name!r}, the manifest says "
                    f"{job.metadata.name!r}); duplicate the job to copy it under a new name",
                )
            ]
        )


def _check_references(job: StreamingJob, repos: Repositories, *, source: str | None) -> None:
    errors = []
    if not repos.bundles.exists(job.spec.bundle):
        known = ", ".join(sorted(b.name for b in repos.bundles.list())) or "none"
        errors.append(
            FieldError(
                "spec.bundle",
                f"resource bundle {job.spec.bundle!r} does not exist (known: {known})",
            )
        )
    for path, node_type in _node_type_fields(job):
        if repos.node_types.find(node_type) is None:
            known = ", ".join(sorted(n.name for n in repos.node_types.list()))
            errors.append(
                FieldError(path, f"node type {node_type!r} does not exist (known: {known})")
            )
    if errors:
        raise InvalidInput(errors, source=source)


def _node_type_fields(job: StreamingJob) -> list[tuple[str, str]]:
    instance = job.spec.instance
    fields = [("spec.instance.driver", instance.driver)]
    if instance.executor is not None:
        fields.append(("spec.instance.executor", instance.executor))
    return fields


def _node_types_of(job: StreamingJob, repos: Repositories) -> dict[str, Any]:
    resolved = {}
    for path, name in _node_type_fields(job):
        node_type = repos.node_types.get(name)
        role = path.rsplit(".", 1)[1]
        resolved[role] = {"name": name, "cores": node_type.cores, "memoryMb": node_type.memory_mb}
    return resolved


def _check_query(query: JobQuery) -> None:
    errors = []
    if not 1 <= query.limit <= MAX_PAGE_SIZE:
        errors.append(FieldError("query.limit", f"must be between 1 and {MAX_PAGE_SIZE}"))
    if query.offset < 0:
        errors.append(FieldError("query.offset", "must not be negative"))
    if errors:
        raise InvalidInput(errors)


def _parse_tag_filter(tag: str) -> tuple[str, str | None]:
    key, separator, value = tag.partition("=")
    if not key:
        raise InvalidInput([FieldError("query.tag", "give a tag as key or key=value")])
    return key, (value if separator else None)
