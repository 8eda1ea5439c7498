"""The README's tour and REST examples, run as written against a live server, so they cannot drift.

The blocks are the fenced ``sh`` blocks after a ``<!-- readme-test: NAME -->`` marker. Each runs in
one bash session, from a directory laid out as a clone after ``make run``: ``.venv`` (this
checkout's), ``examples/`` and ``.streamjobs/`` (the server's home, its default place), with a
server started the way ``make run`` starts it (``admin bootstrap``, then ``server
--load-examples examples``) and running real drivers. Only this differs from a user's machine:
the server listens on a free port instead of 8040 (the URL is swapped in the commands), the
examples' ``/tmp/streamjobs`` data folder is a directory of the test (swapped in the example files,
which are data, not commands), and ``login`` saves to a file of the test (``STREAMJOBS_CONFIG``).
Every command must succeed and say what the README says it does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from streamjobs.launch.ports import free_loopback_port
from tests.e2e.test_server_process import STREAMJOBS, wait_until_healthy

pytestmark = pytest.mark.spark

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
README_URL = "http://127.0.0.1:8040"
EXAMPLE_DATA = "/tmp/streamjobs"
BLOCK = re.compile(r"<!-- readme-test: (?P<name>[\w-]+) -->\s*```sh\n(?P<body>.*?)```", re.DOTALL)
COMMAND_SECONDS = 600


def readme_blocks() -> dict[str, list[str]]:
    """The marked shell blocks of the README, each as its commands (continued lines joined;
    comment lines and blank lines left out)."""
    blocks = {}
    for found in BLOCK.finditer(README.read_text(encoding="utf-8")):
        joined = found.group("body").replace("\\\n", " ")
        commands = [line.strip() for line in joined.splitlines()]
        blocks[found.group("name")] = [
            command for command in commands if command and not command.startswith("#")
        ]
    return blocks


@dataclass(frozen=True)
class Ran:
    """One command of a block, with its exit code and its stdout and stderr together."""

    command: str
    code: int
    output: str


@dataclass(frozen=True)
class Clone:
    directory: Path
    url: str
    env: dict[str, str]
    data: Path

    def run_block(self, commands: list[str]) -> list[Ran]:
        """Run ``commands`` in one bash session, in order, whatever each one's outcome; each one's
        stdout and stderr are read together, as a terminal shows them."""
        script = ["exec 2>&1"]
        for number, command in enumerate(commands):
            script.append(f"printf '\\n@@begin {number}\\n'")
            script.append(command.replace(README_URL, self.url))
            script.append(f"printf '\\n@@end {number} %d\\n' $?")
        finished = subprocess.run(
            ["bash", "-c", "\n".join(script)],
            cwd=self.directory,
            env=self.env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=COMMAND_SECONDS * 2,
            check=False,
        )
        return [_ran(command, number, finished.stdout) for number, command in enumerate(commands)]


def _ran(command: str, number: int, transcript: str) -> Ran:
    found = re.search(rf"\n@@begin {number}\n(.*?)\n@@end {number} (\d+)\n", transcript, re.DOTALL)
    assert found is not None, f"{command!r} did not finish:\n{transcript}"
    return Ran(command, int(found.group(2)), found.group(1))


@pytest.fixture
def clone(tmp_path: Path) -> Iterator[Clone]:
    """A directory as a clone is after ``make run``, with its server running."""
    directory, data = tmp_path / "clone", tmp_path / "data"
    directory.mkdir()
    (directory / ".venv").symlink_to(ROOT / ".venv")
    shutil.copytree(ROOT / "examples", directory / "examples")
    for example in (directory / "examples").glob("*.yaml"):
        text = example.read_text(encoding="utf-8")
        example.write_text(text.replace(EXAMPLE_DATA, str(data)), encoding="utf-8")
    port = free_loopback_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("STREAMJOBS_", "VIRTUAL_ENV"))
    }
    env.update(
        STREAMJOBS_PORT=str(port),
        STREAMJOBS_DEFAULT_DATA_ROOTS=json.dumps([data.as_uri()]),
        STREAMJOBS_CONFIG=str(tmp_path / "cli-config.yaml"),
    )
    bootstrapped = subprocess.run(
        [*STREAMJOBS, "admin", "bootstrap"],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bootstrapped.returncode == 0, bootstrapped.stderr
    server = subprocess.Popen(
        [*STREAMJOBS, "server", "--load-examples", "examples"],
        cwd=directory,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, server)  # type: ignore[arg-type]
        yield Clone(directory=directory, url=url, env=env, data=data)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
        for driver in _drivers_under(directory / ".streamjobs"):
            driver.kill()


def _drivers_under(home: Path) -> list[psutil.Process]:
    """The driver wrappers still alive whose attempt directories are under ``home``."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if "streamjobs.launch.wrapper" in cmdline and any(str(home) in part for part in cmdline):
            found.append(process)
    return found


TOUR_SAYS = {
    "streamjobs validate -f examples/rate-to-parquet.yaml": "valid",
    "streamjobs get jobs": "rate-to-parquet",
    "streamjobs get connections": "kafka-main",
    "streamjobs apply -f examples/rate-to-parquet.yaml": "rate-to-parquet unchanged",
    "sed 's/rate-to-parquet/my-ticks/g'": "my-ticks created",
    "streamjobs get jobs --tag purpose=demo": "my-ticks",
    "streamjobs describe job my-ticks": "my-ticks",
    "streamjobs get job my-ticks --template -o json": "checkpointLocation",
    'streamjobs wait "$app" --for Running': "Running",
    "streamjobs get apps my-ticks": "my-ticks-1",
    'streamjobs describe app "$app"': "my-ticks-1",
    'streamjobs wait "$app" --for Stopped': "Stopped",
    "streamjobs delete job my-ticks --abort --delete-checkpoint": (
        "streamingjob/my-ticks deleted with its checkpoint"
    ),
}
"""What each tour command says (a part of its output), by the start of the command."""


def test_the_readme_tour_runs_as_written(clone: Clone) -> None:
    commands = readme_blocks()["tour"]
    for start in TOUR_SAYS:
        assert any(command.startswith(start) for command in commands), (
            f"the README's tour no longer has {start!r}: update TOUR_SAYS"
        )

    ran = clone.run_block(commands)

    for each in ran:
        assert each.code == 0, f"{each.command!r} exited {each.code}:\n{each.output}"
        said = next(
            (text for start, text in TOUR_SAYS.items() if each.command.startswith(start)), ""
        )
        assert said in each.output, f"{each.command!r} did not say {said!r}:\n{each.output}"
    home = clone.directory / ".streamjobs"
    assert not (home / "checkpoints" / "default" / "my-ticks").exists()
    written = list((clone.data / "output" / "my-ticks").glob("*.parquet"))
    assert written, "my-ticks wrote no Parquet file"
    assert not (clone.data / "output" / "rate-to-parquet").exists()


def test_the_readme_rest_examples_run_as_written(clone: Clone) -> None:
    commands = readme_blocks()["rest"]
    assert len(commands) == 3

    exported, listed, applied = clone.run_block(commands)

    for each in (exported, listed, applied):
        assert each.code == 0, f"{each.command!r} exited {each.code}:\n{each.output}"
    jobs = json.loads(listed.output)
    assert "clickstream-sessions" in {item["metadata"]["name"] for item in jobs["items"]}
    answer = json.loads(applied.output)
    assert answer["result"] == "unchanged"
    assert answer["job"]["metadata"]["name"] == "clickstream-sessions"
