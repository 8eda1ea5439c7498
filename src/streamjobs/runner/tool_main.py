"""``spark-submit tool_main.py <tool> --result-file F ...``: the short Spark jobs the server runs
beside a pipeline's driver (``launch.tool_runs``).

Each tool is a batch of work against a job's checkpoint, in a sandbox like the driver's, that
writes its answer as JSON to ``--result-file`` and exits: ``dry-run`` (``runner.dry_run``: does
a new spec fit the checkpoint) and ``state`` (``runner.state_inspection``: what the state
holds). A tool is imported only when asked for, so one tool's imports never slow the other.
Exit codes are the tool's; 2 also for a tool this file does not know.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from streamjobs.domain import dry_runs, state_inspection

TOOLS = (dry_runs.TOOL, state_inspection.TOOL)
EXIT_UNKNOWN_TOOL = 2


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] not in TOOLS:
        given = repr(arguments[0]) if arguments else "none"
        print(
            f"usage: tool_main.py {{{','.join(TOOLS)}}} --result-file FILE ... (tool: {given})",
            file=sys.stderr,
        )
        return EXIT_UNKNOWN_TOOL
    return _tool(arguments[0])(arguments[1:])


def _tool(name: str) -> Callable[[Sequence[str]], int]:
    if name == dry_runs.TOOL:
        from streamjobs.runner.dry_run import main as dry_run

        return dry_run
    from streamjobs.runner.state_inspection import main as inspect_state

    return inspect_state


if __name__ == "__main__":
    sys.exit(main())
