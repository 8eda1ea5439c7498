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

from bench import control_plane_report, figure_latency, figure_startup_recovery, throughput_report
from bench.machine import describe_machine
from bench.output_reader import close_shared_reader
from bench.report import write_report
from bench.results import FigureResult

BENCH = Path(__file__).resolve().parent
REPOSITORY = BENCH.parent

Figure = Callable[[bool, Path], FigureResult]


FIGURES: dict[int, Figure] = {
    1: throughput_report.throughput_figure,
    2: figure_startup_recovery.startup_figure,
    3: figure_startup_recovery.recovery_figure,
    4: control_plane_report.figure,
    5: throughput_report.memory_figure,
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
    args.figures = _figure_numbers(parser, args.figures)
    if args.output is None:
        args.output = BENCH / ".quick" if args.quick else BENCH
    return args


def _figure_numbers(parser: argparse.ArgumentParser, text: str) -> list[int]:
    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        parser.error(f"--figures takes numbers such as 1 or 1,2, not {text!r}")
    unknown = sorted(set(numbers) - FIGURES.keys())
    if unknown or not numbers:
        parser.error(f"--figures: known figures are {sorted(FIGURES)}, got {text!r}")
    return numbers


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    machine = describe_machine(REPOSITORY)
    work = Path(tempfile.mkdtemp(prefix="streamjobs-bench-"))
    _log(f"bench: scratch directory {work}")
    try:
        results = [
            FIGURES[number](args.quick, work / f"figure-{number}") for number in args.figures
        ]
    finally:
        close_shared_reader()
        if args.keep:
            _log(f"bench: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    command = "python -m bench.run " + " ".join(argv if argv is not None else sys.argv[1:])
    minutes = (time.monotonic() - started) / 60
    report = write_report(results, machine, args.output, command=command.strip(), minutes=minutes)
    _log(f"bench: wrote {report} in {minutes:.1f} minutes")
    return 0


def _log(message: str) -> None:
    print(message, flush=True)


if __name__ == "__main__":
    sys.exit(main())
