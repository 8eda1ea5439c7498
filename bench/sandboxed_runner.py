"""Figure 1's streamjobs run inside the sandbox a server gives every driver."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from bench.rate_pipeline import SMALL
from bench.throughput_subjects import RunPaths
from streamjobs.launch.accounts import accounts_for_this_process
from streamjobs.launch.base import AttemptSpec
from streamjobs.launch.command import DriverCommand, Toolchain
from streamjobs.launch.sandbox_host import BubblewrapSandbox
from streamjobs.runner.main import load_job
from streamjobs.settings import Settings

RUN_AS = "bench"
BUNDLE = "default"
ATTEMPT = "attempt"


def sandboxed(
    command: Sequence[str], paths: RunPaths, *, data_root: Path
) -> tuple[list[str], dict[str, str]]:
    """``command`` (the runner of ``paths``' manifest) as it runs in its sandbox with
    ``data_root`` (where the runs and their connections file are) as its data root, and the
    variables the sandbox sets. Spark's event log, which the figure reads, is given to the
    driver's account, as a bundle that allows ``spark.eventLog.*`` would have it."""
    directory = paths.directory / ATTEMPT
    directory.mkdir(mode=0o700, exist_ok=True)
    sandbox = BubblewrapSandbox(
        hidden=[],
        identity_homes=Settings().resolved_identity_homes,
        toolchain=Toolchain.installed(),
    )
    attempt = AttemptSpec(
        application_id="bench",
        attempt=1,
        job=load_job(str(paths.manifest), checkpoint_root=None),
        directory=directory,
        driver=SMALL,
        run_as=RUN_AS,
        data_roots=(data_root.as_uri(),),
    )
    enclosed = sandbox.enclose(attempt, DriverCommand(argv=tuple(command), environment={}))
    account = accounts_for_this_process().account_for(RUN_AS, BUNDLE)
    if account is not None:
        os.chown(paths.event_log, account.uid, account.gid)
    return list(enclosed.argv), dict(enclosed.environment)
