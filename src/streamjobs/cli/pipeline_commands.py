"""``streamjobs pipeline run|explain``: a pipeline in the foreground on local Spark, no server."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from streamjobs.cli.failures import EXIT_INVALID_INPUT, fail
from streamjobs.settings import Settings

if TYPE_CHECKING:
    from streamjobs.runner.main import RunRequest

pipeline_app = typer.Typer(help="Run or explain a pipeline locally, without a server.")

FileOption = Annotated[str, typer.Option("-f", "--filename", help="The job's manifest.")]
ConnectionsOption = Annotated[
    str | None,
    typer.Option("--connections", help="A YAML file of Connection manifests the datasets use."),
]
MasterOption = Annotated[str, typer.Option("--master", help="Spark master.")]


def _request(
    filename: str, connections: str | None, master: str, *, until_idle: bool = False
) -> RunRequest:
    from streamjobs.runner.main import RunRequest

    return RunRequest(
        manifest=filename,
        connections=connections,
        master=master,
        checkpoint_root=Settings().resolved_checkpoint_root,
        until_idle=until_idle,
        environment=dict(os.environ),
    )


@pipeline_app.command("run")
def run_pipeline(
    filename: FileOption,
    connections: ConnectionsOption = None,
    master: MasterOption = "local[2]",
    until_idle: Annotated[
        bool, typer.Option("--until-idle", help="Stop once every query has caught up.")
    ] = False,
) -> None:
    """Run the pipeline here; Ctrl-C stops it after the micro-batch in flight."""
    from streamjobs.runner.main import run
    from streamjobs.runner.reporting import ProgressPrinter

    request = _request(filename, connections, master, until_idle=until_idle)
    code = run(request, reporter=ProgressPrinter())
    raise typer.Exit(code)


@pipeline_app.command("explain")
def explain_pipeline(
    filename: FileOption, connections: ConnectionsOption = None, master: MasterOption = "local[1]"
) -> None:
    """Print the plan of every query of the pipeline, without starting any."""
    from streamjobs.domain.clock import SystemClock
    from streamjobs.domain.errors import InvalidInput
    from streamjobs.runner.main import prepare
    from streamjobs.runner.pipeline import PipelineRun
    from streamjobs.runner.reporting import JsonLinesReporter
    from streamjobs.runner.session import build_session

    request = _request(filename, connections, master)
    try:
        prepared = prepare(request)
    except InvalidInput as error:
        raise fail(error.detail, code=EXIT_INVALID_INPUT) from None
    spark = build_session(
        prepared.job, connections=prepared.connections.values(), master=request.master
    )
    pipeline_run = PipelineRun(
        spark,
        prepared.job,
        resolver=prepared.resolver,
        reporter=JsonLinesReporter(sys.stderr),
        clock=SystemClock(),
    )
    sys.stdout.write(pipeline_run.explain())
