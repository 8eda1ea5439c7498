"""How the CLI prints jobs and connections: kubectl-style tables, JSON, YAML, ``describe`` text."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from streamjobs.domain.states import TERMINAL_STATES, label
from streamjobs.formatting import rate

WIDE_ENOUGH = 240


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


def console(*, stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else WIDE_ENOUGH
    return Console(file=stream, width=width, highlight=False, soft_wrap=True, markup=False)


def print_jobs(jobs: list[dict[str, Any]], output: OutputFormat) -> None:
    print_list(jobs, output, _jobs_table)


def print_connections(connections: list[dict[str, Any]], output: OutputFormat) -> None:
    print_list(connections, output, _connections_table)


def print_list(
    items: list[dict[str, Any]],
    output: OutputFormat,
    table: Callable[[list[dict[str, Any]]], Table],
) -> None:
    if output is OutputFormat.json:
        sys.stdout.write(json.dumps({"kind": "List", "items": items}, indent=2) + "\n")
    elif output is OutputFormat.yaml:
        sys.stdout.write(yaml.safe_dump({"kind": "List", "items": items}, sort_keys=False))
    else:
        console().print(table(items))


def print_document(document: dict[str, Any], output: OutputFormat) -> None:
    if output is OutputFormat.yaml:
        sys.stdout.write(yaml.safe_dump(document, sort_keys=False))
    else:
        sys.stdout.write(json.dumps(document, indent=2) + "\n")


def print_one(
    document: dict[str, Any],
    output: OutputFormat,
    table: Callable[[list[dict[str, Any]]], Table],
) -> None:
    """One resource: a one-row table, or the document as YAML or JSON."""
    if output is OutputFormat.table:
        console().print(table([document]))
    else:
        print_document(document, output)


def new_table(*columns: str) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for column in columns:
        table.add_column(column, no_wrap=True)
    return table


def _jobs_table(jobs: list[dict[str, Any]]) -> Table:
    table = new_table(
        "NAME",
        "NAMESPACE",
        "BUNDLE",
        "TYPE",
        "STATUS",
        "IN ROWS/S",
        "OUT ROWS/S",
        "TAGS",
        "UPDATED",
    )
    for job in jobs:
        metadata, spec = job["metadata"], job["spec"]
        application = live_figures(job["status"].get("application"))
        table.add_row(
            metadata["name"],
            metadata["namespace"],
            spec["bundle"],
            spec["application"]["type"],
            label(job["status"]["phase"]),
            rate(application.get("inputRowsPerSecond")),
            rate(application.get("processedRowsPerSecond")),
            _tags(metadata.get("tags") or {}),
            when(metadata["updateTimestamp"]),
        )
    return table


def live_figures(application: dict[str, Any] | None) -> dict[str, Any]:
    """An application's figures while it is live; none once it ended (its last rows/s are old)."""
    if not application or application.get("state") in TERMINAL_STATES:
        return {}
    return application


def _connections_table(connections: list[dict[str, Any]]) -> Table:
    table = new_table("NAME", "NAMESPACE", "TYPE", "TARGET", "TAGS", "UPDATED")
    for connection in connections:
        metadata, spec = connection["metadata"], connection["spec"]
        table.add_row(
            metadata["name"],
            metadata["namespace"],
            spec["type"],
            _target(spec),
            _tags(metadata.get("tags") or {}),
            when(metadata["updateTimestamp"]),
        )
    return table


def _target(spec: dict[str, Any]) -> str:
    """Where a connection points: its servers, warehouse, root or URL."""
    for key in ("bootstrapServers", "warehouse", "root", "url"):
        if spec.get(key):
            return str(spec[key])
    return "-"


def describe_connection(connection: dict[str, Any]) -> str:
    """A person's view of one connection; secret options show the secrets' names only."""
    metadata, spec = connection["metadata"], connection["spec"]
    lines = [
        f"Name:           {metadata['name']}",
        f"Namespace:      {metadata['namespace']}",
        f"Description:    {metadata.get('description') or '-'}",
        f"Tags:           {_tags(metadata.get('tags') or {}) or '-'}",
        f"Type:           {spec['type']}",
        f"Target:         {_target(spec)}",
    ]
    if spec.get("catalogType"):
        lines.append(f"Catalog:        {spec['catalogType']} (Iceberg)")
    if spec.get("user"):
        lines.append(f"User:           {spec['user']}")
    lines += [
        f"Version:        {metadata['resourceVersion']}",
        f"Created:        {when(metadata['creationTimestamp'])} by {metadata['createdBy']}",
        f"Updated:        {when(metadata['updateTimestamp'])} by {metadata['updatedBy']}",
        "",
        "Options:" + ("" if spec.get("options") else "        -"),
        *(f"  {key} = {value}" for key, value in sorted((spec.get("options") or {}).items())),
        "Secret options:" + ("" if spec.get("secretOptions") else " -"),
        *(
            f"  {key} <- secret {name}"
            for key, name in sorted((spec.get("secretOptions") or {}).items())
        ),
    ]
    return "\n".join(lines)


def describe_job(job: dict[str, Any]) -> str:
    """A person's view of one job, in the order they look for things."""
    metadata, spec = job["metadata"], job["spec"]
    lines = [
        f"Name:           {metadata['name']}",
        f"Namespace:      {metadata['namespace']}",
        f"Description:    {metadata.get('description') or '-'}",
        f"Tags:           {_tags(metadata.get('tags') or {}) or '-'}",
        f"Bundle:         {spec['bundle']}",
        f"Run as:         {spec.get('runAs') or metadata['createdBy']}",
        f"Status:         {label(job['status']['phase'])}",
        *_latest_application_lines(job["status"].get("application")),
        *_changed_lines(job),
        f"Version:        {metadata['resourceVersion']}",
        f"Created:        {when(metadata['creationTimestamp'])} by {metadata['createdBy']}",
        f"Updated:        {when(metadata['updateTimestamp'])} by {metadata['updatedBy']}",
        "",
        *_application_lines(spec),
        "",
        "Instance:",
        *_instance_lines(spec["instance"]),
        "",
        f"Restart policy: {_restart_policy(spec['restartPolicy'])}",
        f"Guarantee:      {spec['processing']['guarantee'] or 'managed by the program'}",
    ]
    return "\n".join(lines)


def _latest_application_lines(application: dict[str, Any] | None) -> list[str]:
    if not application:
        return []
    figures = live_figures(application)
    return [
        f"Latest run:     {application['name']} ({application['id']}) "
        f"{label(application['state'])}, "
        f"started {when(application['startedAt'])} by {application['startedBy']}",
        f"Rows/s:         {rate(figures.get('inputRowsPerSecond'))} in, "
        f"{rate(figures.get('processedRowsPerSecond'))} processed",
    ]


def _changed_lines(job: dict[str, Any]) -> list[str]:
    """Whether the job was configured since its live application started, and what moves it."""
    status = job["status"]
    if not status.get("changedSinceRunning"):
        return []
    application = status.get("application") or {}
    name = job["metadata"]["name"]
    return [
        f"Changed:        since running: {application.get('name')} runs version "
        f"{application.get('jobVersion')}; 'streamjobs upgrade {name}' moves it to version "
        f"{job['metadata']['resourceVersion']}"
    ]


def _application_lines(spec: dict[str, Any]) -> list[str]:
    application = spec["application"]
    lines = [f"Application:    {application['type']}"]
    if application.get("mainApplicationFile"):
        lines.append(f"  Main file:    {application['mainApplicationFile']}")
    if application.get("mainClass"):
        lines.append(f"  Main class:   {application['mainClass']}")
    if application.get("arguments"):
        lines.append(f"  Arguments:    {' '.join(application['arguments'])}")
    pipeline = spec.get("pipeline")
    if pipeline:
        streaming = pipeline["streaming"]
        trigger = streaming["triggerMode"]
        if streaming.get("triggerDuration"):
            trigger += f" every {streaming['triggerDuration']}"
        lines.append(f"  Trigger:      {trigger}")
        lines.extend(
            f"  Input:        {item['name']} <- {_where(item)} ({item['format']})"
            for item in pipeline["inputs"]
        )
        for step in pipeline.get("steps") or []:
            lines.extend(f"  Step:         {entry['name']}" for entry in step["sequence"])
        lines.extend(
            f"  Output:       {item['name']} -> {_where(item)} ({item['format']})"
            for item in pipeline["outputs"]
        )
    return lines


def _instance_lines(instance: dict[str, Any]) -> list[str]:
    lines = [f"  Deployment:   {instance['deployment']}", f"  Driver:       {instance['driver']}"]
    if instance.get("executor"):
        lines.append(f"  Executors:    {instance.get('executors')} x {instance['executor']}")
    return lines


def _restart_policy(policy: dict[str, Any]) -> str:
    if policy["type"] != "OnFailure":
        return str(policy["type"])
    return (
        f"OnFailure (submission: {policy['onSubmissionFailureRetries']} retries every "
        f"{policy['onSubmissionFailureRetryInterval']}s; running: {policy['onFailureRetries']} "
        f"retries every {policy['onFailureRetryInterval']}s)"
    )


def _where(item: dict[str, Any]) -> str:
    return str(item.get("dataset") or item.get("path") or "-")


def _tags(tags: dict[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in sorted(tags.items()))


def when(timestamp: str) -> str:
    return datetime.fromisoformat(timestamp).strftime("%Y-%m-%d %H:%M:%S UTC")
