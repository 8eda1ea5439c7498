"""``LocalLauncher``: every driver on this machine, alone, as ``spark-submit --master local[N]``.

The default backend, with nothing to install but Java: a singleNode job's driver runs its
tasks itself on its node type's cores. Standard deployments need executors, so a cluster
(``StandaloneLauncher``); this launcher refuses them with a ``LaunchFailed`` that says so.
"""

from __future__ import annotations

from streamjobs.launch.base import AttemptSpec
from streamjobs.launch.command import master_for
from streamjobs.launch.driver_process import SparkSubmitLauncher


class LocalLauncher(SparkSubmitLauncher):
    """Runs singleNode jobs' drivers on this machine with ``local[<driver cores>]``."""

    def master_for(self, attempt: AttemptSpec) -> str:
        return master_for(attempt.job, attempt.driver, cluster_master=None)
