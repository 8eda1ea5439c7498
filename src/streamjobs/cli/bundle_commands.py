"""The commands about resource bundles and node types: ``create``, ``get``, ``describe`` and
``delete bundle``, ``set quota``, ``set data-roots`` and ``set spark-conf``, and ``create``,
``get`` and ``delete node-type``.

A bundle's quotas cap its running applications, their cores and their memory (drivers and
executors together); a quota left unset means no limit. Its data roots are where its jobs'
paths, datasets and checkpoints may live; its Spark setting policy allows or refuses settings
(or ``prefix.*`` patterns) for its jobs. The server replaces a bundle's whole configuration at
once, so each ``set`` reads the bundle first, sends back what it does not change, and does it
again if someone else changed the bundle in between.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.table import Table

from streamjobs.cli.failures import EXIT_INVALID_INPUT, fail, reported_failures
from streamjobs.cli.output import (
    OutputFormat,
    console,
    new_table,
    print_list,
    print_one,
    when,
)
from streamjobs.client import StreamjobsClient, retry_on_conflict

ClientFactory = Callable[[typer.Context], StreamjobsClient]

OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]
AllowOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow",
        "--allow-spark-conf",
        metavar="KEY",
        help="A Spark setting (or prefix.* pattern) its jobs may set although restricted; "
        "repeatable.",
    ),
]
RefuseOption = Annotated[
    list[str] | None,
    typer.Option(
        "--refuse",
        "--refuse-spark-conf",
        metavar="KEY",
        help="A Spark setting (or prefix.* pattern) its jobs may not set; repeatable.",
    ),
]
NO_LIMIT = ("none", "null", "unlimited")

QUOTAS = (
    # (quota field, what is in use, a person's name of it, unit)
    ("maxRunningApplications", "runningApplications", "Running applications", ""),
    ("maxCores", "cores", "Cores", ""),
    ("maxMemoryMb", "memoryMb", "Memory", " MB"),
)


def register(
    app: typer.Typer,
    create_app: typer.Typer,
    get_app: typer.Typer,
    describe_app: typer.Typer,
    delete_app: typer.Typer,
    client_for: ClientFactory,
) -> None:
    """Add ``set quota`` and the bundle and node-type kinds to create, get, describe, delete."""
    set_app = typer.Typer(help="Change one part of a resource.", no_args_is_help=True)
    app.add_typer(set_app, name="set")

    @create_app.command("bundle")
    def create_bundle(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(help="The bundle's name, e.g. payments.")],
        description: Annotated[str | None, typer.Option(help="What the bundle is for.")] = None,
        max_running_applications: Annotated[
            int | None, typer.Option(help="At most this many applications running at once.")
        ] = None,
        max_cores: Annotated[
            int | None, typer.Option(help="At most this many cores, drivers and executors.")
        ] = None,
        max_memory_mb: Annotated[
            int | None, typer.Option(help="At most this much memory in MB, all in all.")
        ] = None,
        data_root: Annotated[
            list[str] | None,
            typer.Option(
                "--data-root",
                metavar="URI",
                help="Where its jobs' paths and checkpoints may live (an absolute path or a "
                "URI); repeatable.",
            ),
        ] = None,
        allow_spark_conf: Annotated[
            list[str] | None,
            typer.Option(
                metavar="KEY",
                help="A Spark setting (or prefix.* pattern) its jobs may set although "
                "restricted; repeatable.",
            ),
        ] = None,
        refuse_spark_conf: Annotated[
            list[str] | None,
            typer.Option(
                metavar="KEY",
                help="A Spark setting (or prefix.* pattern) its jobs may not set; repeatable.",
            ),
        ] = None,
    ) -> None:
        """Create a resource bundle (needs Manage bundles); a quota not given means no limit,
        no --data-root means its jobs may name no path until it gets one."""
        quota = {
            "maxRunningApplications": max_running_applications,
            "maxCores": max_cores,
            "maxMemoryMb": max_memory_mb,
        }
        with client_for(ctx) as client, reported_failures():
            client.create_bundle(
                name,
                description=description,
                quota=quota,
                data_roots=data_root or [],
                spark_conf=_spark_conf(allow_spark_conf, refuse_spark_conf),
            )
        console().print(f"bundle/{name} created")

    @get_app.command("bundles")
    def get_bundles(ctx: typer.Context, output: OutputOption = OutputFormat.table) -> None:
        """List the bundles you manage or hold a grant on: quotas in use and your permissions."""
        with client_for(ctx) as client, reported_failures():
            bundles = client.list_bundles()["items"]
        print_list(bundles, output, _bundles_table)

    @get_app.command("bundle")
    def get_bundle(ctx: typer.Context, name: str, output: OutputOption = OutputFormat.yaml) -> None:
        """Show one bundle as YAML or JSON."""
        with client_for(ctx) as client, reported_failures():
            bundle = client.get_bundle(name)
        print_one(bundle, output, _bundles_table)

    @describe_app.command("bundle")
    def describe_bundle_command(ctx: typer.Context, name: str) -> None:
        """Show a bundle for a person to read: quotas against what is in use, and grants."""
        with client_for(ctx) as client, reported_failures():
            bundle = client.get_bundle(name)
        console().print(describe_bundle(bundle))

    @delete_app.command("bundle")
    def delete_bundle(ctx: typer.Context, name: str) -> None:
        """Delete an empty bundle, with its grants and secrets (refused while it holds jobs)."""
        with client_for(ctx) as client, reported_failures():
            client.delete_bundle(name)
        console().print(f"bundle/{name} deleted")

    @set_app.command("quota")
    def set_quota(
        ctx: typer.Context,
        bundle: Annotated[str, typer.Argument(help="The bundle whose quotas change.")],
        max_running_applications: Annotated[
            str | None, typer.Option(metavar="N|none", help="Applications running at once.")
        ] = None,
        max_cores: Annotated[
            str | None, typer.Option(metavar="N|none", help="Cores, drivers and executors.")
        ] = None,
        max_memory_mb: Annotated[
            str | None, typer.Option(metavar="N|none", help="Memory in MB, all in all.")
        ] = None,
    ) -> None:
        """Change a bundle's quotas; those not given stay as they are, none removes a limit.

        Lowering a quota stops nothing that runs: it refuses the next run that would not fit.
        """
        given = {
            "maxRunningApplications": ("--max-running-applications", max_running_applications),
            "maxCores": ("--max-cores", max_cores),
            "maxMemoryMb": ("--max-memory-mb", max_memory_mb),
        }
        changes = {
            key: _limit(option, text) for key, (option, text) in given.items() if text is not None
        }
        if not changes:
            raise fail(
                "give at least one of --max-running-applications, --max-cores, --max-memory-mb",
                code=EXIT_INVALID_INPUT,
            )

        with client_for(ctx) as client, reported_failures():
            updated = _change_bundle(client, bundle, {"quota": changes})
        console().print(f"bundle/{bundle} quota set: {_quota_summary(updated['quota'])}")

    @set_app.command("data-roots")
    def set_data_roots(
        ctx: typer.Context,
        bundle: Annotated[str, typer.Argument(help="The bundle whose data roots change.")],
        roots: Annotated[
            list[str] | None,
            typer.Argument(
                metavar="URI...", help="Absolute paths or URIs, e.g. file:///data/payments."
            ),
        ] = None,
        none: Annotated[
            bool, typer.Option("--none", help="Take every data root away from the bundle.")
        ] = False,
    ) -> None:
        """Replace a bundle's data roots: where its jobs' paths, datasets and checkpoints may
        live. Taking a root away stops nothing running; it refuses the next change or run."""
        if bool(roots) == none:
            raise fail(
                "give the data roots (URI...) or --none to take every one away, not both",
                code=EXIT_INVALID_INPUT,
            )
        with client_for(ctx) as client, reported_failures():
            updated = _change_bundle(client, bundle, {"dataRoots": roots or []})
        shown = ", ".join(updated["dataRoots"] or []) or "none"
        console().print(f"bundle/{bundle} data roots set: {shown}")

    @set_app.command("spark-conf")
    def set_spark_conf(
        ctx: typer.Context,
        bundle: Annotated[str, typer.Argument(help="The bundle whose Spark policy changes.")],
        allow: AllowOption = None,
        refuse: RefuseOption = None,
    ) -> None:
        """Replace a bundle's Spark setting policy (both lists; none given empties them)."""
        policy = _spark_conf(allow, refuse)
        with client_for(ctx) as client, reported_failures():
            updated = _change_bundle(client, bundle, {"sparkConf": policy})
        console().print(f"bundle/{bundle} spark conf set: {_policy_summary(updated['sparkConf'])}")

    @create_app.command("node-type")
    def create_node_type(
        ctx: typer.Context,
        name: Annotated[str, typer.Argument(help="The node type's name, e.g. xlarge.")],
        cores: Annotated[int, typer.Option(help="Cores of one node.")],
        memory_mb: Annotated[int, typer.Option(help="Memory of one node, in MB.")],
    ) -> None:
        """Define a node type jobs size their drivers and executors with (admins); an existing
        one is resized, for the applications started after."""
        with client_for(ctx) as client, reported_failures():
            result, _ = client.put_node_type(name, cores=cores, memory_mb=memory_mb)
        console().print(f"node-type/{name} {result}")

    @get_app.command("node-types")
    def get_node_types(ctx: typer.Context, output: OutputOption = OutputFormat.table) -> None:
        """List node types, smallest first."""
        with client_for(ctx) as client, reported_failures():
            node_types = client.list_node_types()["items"]
        print_list(node_types, output, _node_types_table)

    @delete_app.command("node-type")
    def delete_node_type(ctx: typer.Context, name: str) -> None:
        """Delete a node type no job uses (admins)."""
        with client_for(ctx) as client, reported_failures():
            client.delete_node_type(name)
        console().print(f"node-type/{name} deleted")


def _change_bundle(
    client: StreamjobsClient, bundle: str, changes: dict[str, Any]
) -> dict[str, Any]:
    """Read the bundle, apply ``changes`` (``quota`` keys merge into the quotas, ``dataRoots``
    and ``sparkConf`` replace), write it from the version read, and do it all again while
    someone else's change gets in between."""

    def change() -> dict[str, Any]:
        current = client.get_bundle(bundle)
        return client.update_bundle(
            bundle,
            description=current["description"],
            quota={**current["quota"], **changes.get("quota", {})},
            data_roots=changes.get("dataRoots", current.get("dataRoots") or []),
            spark_conf=changes.get("sparkConf", current.get("sparkConf") or {}),
            resource_version=current["resourceVersion"],
        )

    return retry_on_conflict(change)


def _spark_conf(allowed: list[str] | None, refused: list[str] | None) -> dict[str, list[str]]:
    return {"allowed": allowed or [], "refused": refused or []}


def _policy_summary(spark_conf: dict[str, list[str]]) -> str:
    return "; ".join(
        f"{kind} {', '.join(spark_conf.get(kind) or []) or 'none'}"
        for kind in ("allowed", "refused")
    )


def _limit(option: str, text: str) -> int | None:
    """A quota option's value: a whole number, or None (no limit) for ``none``. A negative number
    goes to the server as it is: the server says what the range is."""
    if text.strip().lower() in NO_LIMIT:
        return None
    try:
        return int(text)
    except ValueError:
        raise fail(
            f"{option}: {text!r} is neither a whole number nor none", code=EXIT_INVALID_INPUT
        ) from None


def _used_of(used: int, limit: int | None) -> str:
    return f"{used}/{'-' if limit is None else limit}"


def _quota_summary(quota: dict[str, Any]) -> str:
    return ", ".join(
        f"{label.lower()} {'no limit' if quota[key] is None else f'{quota[key]}{unit}'}"
        for key, _, label, unit in QUOTAS
    )


def _bundles_table(bundles: list[dict[str, Any]]) -> Table:
    table = new_table(
        "NAME", "JOBS", "RUNNING", "CORES", "MEMORY MB", "YOUR PERMISSIONS", "DESCRIPTION"
    )
    for bundle in bundles:
        quota, in_use = bundle["quota"], bundle["inUse"]
        table.add_row(
            bundle["name"],
            str(bundle["jobs"]),
            *(_used_of(in_use[used], quota[key]) for key, used, _, _ in QUOTAS),
            ",".join(bundle["yourPermissions"]) or "-",
            bundle.get("description") or "-",
        )
    return table


def describe_bundle(bundle: dict[str, Any]) -> str:
    """A bundle for a person to read: quotas against what its running applications take now,
    its data roots and Spark setting policy, and who is granted what on its jobs."""
    quota, in_use = bundle["quota"], bundle["inUse"]
    lines = [
        f"Name:              {bundle['name']}",
        f"Description:       {bundle.get('description') or '-'}",
        f"Created:           {when(bundle['createdAt'])}",
        f"Jobs:              {bundle['jobs']}",
        f"Your permissions:  {', '.join(bundle['yourPermissions']) or '-'}",
        "",
        f"{'Quota':<24}{'In use':<12}Limit",
    ]
    for key, used, label, unit in QUOTAS:
        limit = "no limit" if quota[key] is None else f"{quota[key]}{unit}"
        lines.append(f"  {label:<22}{f'{in_use[used]}{unit}':<12}{limit}")
    roots = bundle.get("dataRoots")
    lines += ["", "Data roots:" + (" not set" if roots is None else "" if roots else " none")]
    lines += [f"  {root}" for root in roots or []]
    spark_conf = bundle.get("sparkConf") or {}
    lines += ["", "Spark settings:"]
    lines += [
        f"  {kind:<9}{', '.join(spark_conf.get(kind) or []) or '-'}"
        for kind in ("allowed", "refused")
    ]
    lines += ["", "Grants:" + ("" if bundle["grants"] else " -")]
    width = max((len(grant["subject"]) for grant in bundle["grants"]), default=0) + 2
    lines += [
        f"  {grant['subject']:<{width}}{', '.join(grant['permissions'])}"
        for grant in bundle["grants"]
    ]
    return "\n".join(lines)


def _node_types_table(node_types: list[dict[str, Any]]) -> Table:
    table = new_table("NAME", "CORES", "MEMORY MB")
    for node_type in node_types:
        table.add_row(node_type["name"], str(node_type["cores"]), str(node_type["memoryMb"]))
    return table
