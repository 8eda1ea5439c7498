"""Run the benchmark figures and write their report."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/run.py`: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import figure_control_plane, figure_latency, figure_startup_recovery, figure_throughput
from bench.report import describe_machine, write_report
from bench.results import FigureResult

BENCH = Path(__file__).resolve().parent

FIGURES: dict[int, Callable[[bool, Path], FigureResult]] = {
    1: figure_throughput.throughput_figure,
    2: figure_startup_recovery.startup_figure,
    3: figure_startup_recovery.recovery_figure,
    4: figure_control_plane.figure,
    5: figure_throughput.memory_figure,
    6: figure_latency.figure,
}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, one repetition")
    parser.add_argument(
        "--figures",
        default=",".join(str(number) for number in FIGURES),
        help="comma-separated figure numbers (default: all there are)",
    )
    parser.add_argument("--output", type=Path, help="where REPORT.md and the charts go")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args(argv)
    numbers = [part.strip() for part in args.figures.split(",") if part.strip()]
    if not numbers or not set(numbers) <= {str(number) for number in FIGURES}:
        parser.error(f"--figures: known figures are {sorted(FIGURES)}, got {args.figures!r}")
    args.figures = [int(number) for number in numbers]
    if args.output is None:
        args.output = BENCH / ".quick" if args.quick else BENCH
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    machine = describe_machine(BENCH.parent)
    work = Path(tempfile.mkdtemp(prefix="streamjobs-bench-"))
    print(f"bench: scratch directory {work}", flush=True)
    try:
        results = [
            FIGURES[number](args.quick, work / f"figure-{number}") for number in args.figures
        ]
    finally:
        if args.keep:
            print(f"bench: kept {work}", flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)
    command = "python -m bench.run " + " ".join(argv if argv is not None else sys.argv[1:])
    minutes = (time.monotonic() - started) / 60
    report = write_report(results, machine, args.output, command=command.strip(), minutes=minutes)
    print(f"bench: wrote {report} in {minutes:.1f} minutes", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
