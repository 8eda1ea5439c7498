"""``python -m streamjobs.runner --manifest PATH …``: what ``spark-submit`` runs for a pipeline job.

Exit codes: 0 when every query finished (Once, AvailableNow) or the run was stopped gracefully
(SIGTERM/SIGINT or the ``--stop-file`` appearing: after the micro-batch in flight, then the
snapshot the stop file asks for, if any), or stopped as a standby before its promotion (having
started no query), 1 when a query failed, 2 when the manifest,
connections or secrets are unusable — found before Spark starts. Snapshots asked for in
``--snapshot-request-file`` (and periodic ones) are staged in ``--snapshot-directory``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import datetime

from streamjobs.runner.main import RunRequest, run


def parse_args(argv: Sequence[str] | None = None) -> RunRequest:
    parser = argparse.ArgumentParser(prog="python -m streamjobs.runner", description=__doc__)
    parser.add_argument("--manifest", required=True, help="the job's manifest (YAML or JSON)")
    parser.add_argument("--connections", help="Connection manifests the datasets refer to")
    parser.add_argument("--application-id", help="the application this run belongs to")
    parser.add_argument("--report-url", help="where to POST query events (default: stdout)")
    parser.add_argument("--report-token-file", help="file holding the report token")
    parser.add_argument("--master", help="Spark master, when not run by spark-submit")
    parser.add_argument("--checkpoint-root", help="root of derived checkpoint locations")
    parser.add_argument("--until-idle", action="store_true", help="stop once all are idle")
    parser.add_argument("--stop-file", help="stop gracefully once this file exists")
    parser.add_argument(
        "--snapshot-request-file", help="take a snapshot when a request is written here"
    )
    parser.add_argument("--snapshot-directory", help="where snapshots are staged")
    parser.add_argument(
        "--hold-until",
        type=_moment,
        help="start the queries no sooner than this ISO 8601 time with its UTC offset",
    )
    parser.add_argument(
        "--standby-promote-file",
        help="a warm standby: start no query until the server writes its promotion here",
    )
    parser.add_argument(
        "--standby-ready-file", help="where a standby says it is warmed up and held ready"
    )
    args = parser.parse_args(argv)
    if args.report_url and not args.report_token_file:
        parser.error("--report-url needs --report-token-file")
    if bool(args.standby_promote_file) != bool(args.standby_ready_file):
        parser.error("--standby-promote-file and --standby-ready-file go together")
    return RunRequest(
        manifest=args.manifest,
        connections=args.connections,
        application_id=args.application_id,
        report_url=args.report_url,
        report_token_file=args.report_token_file,
        master=args.master,
        checkpoint_root=args.checkpoint_root,
        until_idle=args.until_idle,
        environment=dict(os.environ),
        stop_file=args.stop_file,
        hold_until=args.hold_until,
        snapshot_request_file=args.snapshot_request_file,
        snapshot_directory=args.snapshot_directory,
        standby_promote_file=args.standby_promote_file,
        standby_ready_file=args.standby_ready_file,
    )


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no UTC offset (e.g. +00:00)")
    return moment


if __name__ == "__main__":
    sys.exit(run(parse_args()))
