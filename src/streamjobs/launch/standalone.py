"""``StandaloneLauncher``: standard jobs on a Spark standalone cluster (``spark://host:port``).

A standard job's driver runs on this machine in client mode, so it is watched and ended like a
local one (``driver_process``); its executors run on the cluster's workers. singleNode jobs
still run alone as ``local[N]``.

Executors write their logs under each worker's work directory, in
``<work dir>/<Spark application id>/<executor id>/{stderr,stdout}``. The Spark application id
(``app-…``) is assigned by the master when the driver registers, after ``submit`` has returned
its handle, so it is found later, first found way first:

1. ``spark-application-id`` in the attempt directory, where an earlier lookup saved it;
2. the driver's REST API, while it runs;
3. the driver's log (``stderr.log``), where Spark writes "Connected to Spark cluster with app ID
   app-…" as it registers, even when the driver ended before anyone asked.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from streamjobs.launch.attempt_directory import STDERR_FILE
from streamjobs.launch.base import AttemptSpec, DriverHandle
from streamjobs.launch.command import Toolchain, master_for
from streamjobs.launch.driver_process import SparkSubmitLauncher
from streamjobs.launch.sandbox_host import Sandbox
from streamjobs.launch.spark_ui import spark_application_id

APPLICATION_ID_FILE = "spark-application-id"
_REGISTERED = re.compile(rb"Connected to Spark cluster with app ID (app-[0-9]+-[0-9]+)")
_APPLICATION_ID = re.compile(r"app-[0-9]+-[0-9]+")
LOG_SCAN_LIMIT = 8 * 1024 * 1024
"""Bytes of the driver's log searched for its application id: it is written as Spark starts."""
_SCAN_CHUNK = 1024 * 1024


class StandaloneLauncher(SparkSubmitLauncher):
    """Runs standard jobs against ``master_url``, whose workers keep their executors' files in
    ``worker_dirs``; singleNode jobs as ``local[N]``."""

    def __init__(
        self,
        *,
        master_url: str,
        worker_dirs: Sequence[Path | str] = (),
        toolchain: Toolchain | None = None,
        environment: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        super().__init__(toolchain=toolchain, environment=environment, sandbox=sandbox)
        self.master_url = master_url
        self.worker_dirs = tuple(Path(directory) for directory in worker_dirs)

    def master_for(self, attempt: AttemptSpec) -> str:
        return master_for(attempt.job, attempt.driver, cluster_master=self.master_url)

    def log_files(self, handle: DriverHandle) -> dict[str, Path]:
        files = super().log_files(handle)
        if handle.master.startswith("local"):
            return files
        application_id = self.spark_application_id(handle)
        if application_id is None:
            return files
        for worker_dir in self.worker_dirs:
            files.update(executor_logs(worker_dir / application_id))
        return files

    def spark_application_id(self, handle: DriverHandle) -> str | None:
        """The Spark application id of the handle's driver, once the master gave it one."""
        saved = Path(handle.directory) / APPLICATION_ID_FILE
        with contextlib.suppress(OSError):
            text = saved.read_text(encoding="ascii").strip()
            if _APPLICATION_ID.fullmatch(text):
                return text
        found = spark_application_id(handle, timeout=1.0)
        if found is None or not _APPLICATION_ID.fullmatch(found):
            found = application_id_in_log(Path(handle.directory) / STDERR_FILE)
        if found is not None:
            with contextlib.suppress(OSError):
                saved.write_text(found + "\n", encoding="ascii")
        return found


def executor_logs(application_dir: Path) -> dict[str, Path]:
    """``executor-<id>`` (stderr) and ``executor-<id>-stdout`` of each executor directory of one
    application on one worker."""
    files: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for executor_dir in sorted(application_dir.iterdir()):
            if not executor_dir.is_dir():
                continue
            stderr, stdout = executor_dir / "stderr", executor_dir / "stdout"
            if stderr.is_file():
                files[f"executor-{executor_dir.name}"] = stderr
            if stdout.is_file():
                files[f"executor-{executor_dir.name}-stdout"] = stdout
    return files


def application_id_in_log(path: Path) -> str | None:
    """The application id a standalone driver logged as it registered with the master."""
    try:
        with path.open("rb") as log:
            tail = b""
            for _ in range(LOG_SCAN_LIMIT // _SCAN_CHUNK):
                chunk = log.read(_SCAN_CHUNK)
                if not chunk:
                    return None
                match = _REGISTERED.search(tail + chunk)
                if match:
                    return match.group(1).decode("ascii")
                tail = chunk[-200:]
    except OSError:
        return None
    return None
