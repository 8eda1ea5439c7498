"""The job page's API operations: ready-to-copy ``curl`` commands for the REST calls about one
job (get, run, stop, suspend, resume, snapshot, upgrade check and upgrade, applications, delete),
so a person can script what the page's buttons do."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class ApiOperation:
    """A ready-to-copy ``curl`` command for one REST call about the job."""

    title: str
    command: str


def api_operations(server_url: str, name: str) -> list[ApiOperation]:
    """The REST calls about job ``name`` on the server at ``server_url``, as ``curl`` commands
    that use the ``STREAMJOBS_TOKEN`` a person sets."""
    job_url = f"{server_url.rstrip('/')}/api/v1/jobs/{quote(name, safe='')}"
    auth = '-H "Authorization: Bearer $STREAMJOBS_TOKEN"'
    return [
        ApiOperation("Get the job", f"curl {auth} '{job_url}'"),
        ApiOperation("Run the job", f"curl -X POST {auth} '{job_url}/run'"),
        ApiOperation("Stop its live application", f"curl -X POST {auth} '{job_url}/stop'"),
        ApiOperation("Suspend its live application", f"curl -X POST {auth} '{job_url}/suspend'"),
        ApiOperation("Resume its suspended application", f"curl -X POST {auth} '{job_url}/resume'"),
        ApiOperation("Take a snapshot", f"curl -X POST {auth} '{job_url}/snapshots'"),
        ApiOperation(
            "Check whether an upgrade fits (dry run)",
            f"curl -X POST {auth} '{job_url}/upgrade?mode=last-state&dryRun=true'",
        ),
        ApiOperation(
            "Upgrade its running application",
            f"curl -X POST {auth} '{job_url}/upgrade?mode=last-state'",
        ),
        ApiOperation("List its applications", f"curl {auth} '{job_url}/applications'"),
        ApiOperation("Delete the job", f"curl -X DELETE {auth} '{job_url}'"),
    ]
