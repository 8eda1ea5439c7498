"""Logs read a piece at a time wherever they are: a file on this machine, or a file on a Spark
standalone worker, read through the worker's web UI.

A cluster-mode driver runs on a worker, and the executors of every standard job do: their logs
are files in the worker's work directory (``<work dir>/<driver id>/{stderr,stdout}``,
``<work dir>/<app id>/<executor id>/{stderr,stdout}``), on another host. Every worker's web UI
serves them by byte range at ``/log/?driverId=…`` or ``/log/?appId=…&executorId=…`` with
``logType`` (stderr or stdout), ``offset`` and ``byteLength``: its answer starts with the line
``==== Bytes <start>-<end> of <length> of <path> ====`` and goes on with those bytes (Spark's
``LogPage.renderLog``). That is the endpoint used here: it exists on every worker, needs nothing
installed beside Spark, and reads no more than asked.

Which workers exist, and where their web UIs are, comes from the master's web UI (``/json/``):
a worker address given by anything else (the driver, which a job controls, or a file in the
attempt directory) is only used when the master lists it, so reading a log never makes the
server fetch from an address a job chose.

Both kinds of log are a ``LogSource``, so the services read them alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import parse_qs, urlsplit

import httpx

from streamjobs.domain.errors import NotFound, StreamjobsError
from streamjobs.launch import logs
from streamjobs.launch.base import DriverHandle

BLOCK_SIZE = logs.BLOCK_SIZE
PIECE_LIMIT = 1024 * 1024
"""The most bytes asked of a worker in one request; longer ranges take several."""
TIMEOUT = httpx.Timeout(10.0, connect=3.0)
_HEADER = re.compile(rb"==== Bytes (\d+)-(\d+) of (\d+) of [^\n]* ====\n")
REPLACED = "\ufffd".encode()
"""What the worker sends for bytes it could not decode: after one, lengths no longer match."""
LOG_TYPES = ("stderr", "stdout")
APPLICATION_ID = re.compile(r"app-[0-9]+-[0-9]+")
EXECUTOR_ID = re.compile(r"[0-9]+")


class LogUnavailable(StreamjobsError):
    """A log on a worker cannot be read now: the worker (or the master that says where it is)
    does not answer, or answers something that is not a log."""

    title = "Log unavailable"


class LogSource(Protocol):
    """One log, read a piece at a time.

    Contract: ``size`` is its length in bytes now (0 while it does not exist); ``read_range``
    gives bytes ``start`` up to ``end`` (None: its end), what there is of a range beyond the
    end; ``tail_lines`` its last ``n`` lines without line ends; ``tail_text`` its last ``limit``
    bytes as text ("" when it cannot be read); ``chunks`` the whole log, in pieces. A log on a
    worker that cannot be reached raises ``LogUnavailable`` (``tail_text`` gives ""), one the
    worker does not have ``NotFound``.
    """

    @property
    def description(self) -> str: ...

    def size(self) -> int: ...

    def read_range(self, start: int, end: int | None = None) -> bytes: ...

    def tail_lines(self, n: int) -> list[str]: ...

    def tail_text(self, limit: int = BLOCK_SIZE) -> str: ...

    def chunks(self) -> Iterator[bytes]: ...


@runtime_checkable
class LogSources(Protocol):
    """A launcher whose drivers' and executors' logs are not all files on this machine.

    Contract: ``log_sources`` names every log of the handle's driver and its executors, as
    ``Launcher.log_files`` does (``driver``, ``driver-stdout``, ``executor-<id>``,
    ``executor-<id>-stdout``), each with where to read it; it never raises for a cluster that
    does not answer (the logs it cannot list are left out).
    """

    def log_sources(self, handle: DriverHandle) -> dict[str, LogSource]: ...


@dataclass(frozen=True)
class LocalLog:
    """A log file on this machine."""

    path: Path

    @property
    def description(self) -> str:
        return str(self.path)

    def size(self) -> int:
        return logs.size(self.path)

    def read_range(self, start: int, end: int | None = None) -> bytes:
        return logs.read_range(self.path, start, end)

    def tail_lines(self, n: int) -> list[str]:
        return logs.tail_lines(self.path, n)

    def tail_text(self, limit: int = BLOCK_SIZE) -> str:
        return logs.tail_text(self.path, limit)

    def chunks(self) -> Iterator[bytes]:
        with self.path.open("rb") as log:
            while piece := log.read(PIECE_LIMIT):
                yield piece


@dataclass(frozen=True)
class WorkerLog:
    """A log file on a standalone worker, read from the worker's web UI at ``worker_url``:
    a driver's (``driver_id``) or an executor's (``application_id`` and ``executor_id``).

    The worker decodes the bytes it sends as UTF-8, so bytes that are not UTF-8, and a character
    cut by the edge of a range, come back replaced (U+FFFD). So a longer read goes on piece by
    piece from a line end (a line end is never inside a character): only the edges of the range
    asked for may be replaced, as when a local log's range is shown as text.
    """

    worker_url: str
    log_type: str
    driver_id: str | None = None
    application_id: str | None = None
    executor_id: str | None = None
    worker_alive: bool = True
    """False when the master lists the worker as lost: it is not asked (it would not answer)."""

    @property
    def description(self) -> str:
        owner = self.driver_id or f"{self.application_id}/{self.executor_id}"
        return f"{self.log_type} of {owner} on the worker at {self.worker_url}"

    def size(self) -> int:
        return self._piece(0, 0)[2]

    def read_range(self, start: int, end: int | None = None) -> bytes:
        return b"".join(self._pieces(max(start, 0), end))

    def tail_lines(self, n: int) -> list[str]:
        if n <= 0:
            return []
        length = self.size()
        span = BLOCK_SIZE
        while True:
            start = max(length - span, 0)
            data = self.read_range(start, length)
            if start == 0 or data.count(b"\n") > n:
                break
            span *= 2
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        if start > 0:
            lines = lines[1:]  # the first one may be cut
        return [line.decode("utf-8", errors="replace") for line in lines[-n:]]

    def tail_text(self, limit: int = BLOCK_SIZE) -> str:
        if limit <= 0:
            return ""
        try:
            length = self.size()
            data = self.read_range(max(length - limit, 0), length)
        except StreamjobsError:
            return ""
        return data.decode("utf-8", errors="replace")

    def chunks(self) -> Iterator[bytes]:
        return self._pieces(0, None)

    def _pieces(self, start: int, end: int | None) -> Iterator[bytes]:
        """Bytes ``start`` up to ``end`` (None: the end of the log), a piece a request, each
        piece but the last ending at a line end."""
        while end is None or start < end:
            wanted = PIECE_LIMIT if end is None else min(PIECE_LIMIT, end - start)
            piece, (_, piece_end), length = self._piece(start, wanted)
            last = piece_end <= start or piece_end >= length or piece_end == end
            line_end = piece.rfind(b"\n")
            if last or line_end < 0 or REPLACED in piece[: line_end + 1]:
                yield piece
                if last:
                    return
                start = piece_end
            else:
                yield piece[: line_end + 1]
                start += line_end + 1

    def _piece(self, offset: int, length: int) -> tuple[bytes, tuple[int, int], int]:
        """Bytes ``offset`` to ``offset + length`` as the worker gives them, the range it says
        they are, and the log's length."""
        if not self.worker_alive:
            raise LogUnavailable(
                f"cannot read the {self.description}: the master lists that worker as lost"
            )
        parameters: dict[str, str | int] = {"logType": self.log_type}
        if self.driver_id is not None:
            parameters["driverId"] = self.driver_id
        else:
            parameters["appId"] = str(self.application_id)
            parameters["executorId"] = str(self.executor_id)
        parameters.update({"offset": offset, "byteLength": length})
        try:
            response = httpx.get(
                f"{self.worker_url}/log/", params=parameters, timeout=TIMEOUT, trust_env=False
            )
        except httpx.HTTPError as error:
            raise LogUnavailable(
                f"cannot read the {self.description}: the worker did not answer "
                f"({type(error).__name__}: {error}); it may be gone"
            ) from None
        header = _HEADER.match(response.content) if response.status_code == 200 else None
        if header is None:
            raise LogUnavailable(
                f"cannot read the {self.description}: the worker answered HTTP "
                f"{response.status_code} with no log"
            )
        body = response.content[header.end() :]
        start, end, total = (int(group) for group in header.groups())
        if total == 0 and body.startswith(b"Error"):
            raise NotFound("log", f"{self.description} (the worker has no such log)")
        return body, (start, end), total


@dataclass(frozen=True)
class Worker:
    """A worker as the master lists it."""

    id: str
    host: str
    port: int
    web_url: str
    alive: bool


class ClusterWorkers:
    """The workers the master at ``master_web_url`` (its web UI) knows, alive or dead."""

    def __init__(self, master_web_url: str) -> None:
        self.master_web_url = master_web_url.rstrip("/")

    def listed(self, timeout: float = 3.0) -> dict[str, Worker] | None:
        """Every worker by id; None when the master does not answer."""
        state = _json(f"{self.master_web_url}/json/", timeout)
        if not isinstance(state, dict) or not isinstance(state.get("workers"), list):
            return None
        found = {}
        for entry in state["workers"]:
            worker = _worker(entry)
            if worker is not None:
                found[worker.id] = worker
        return found

    def executors_of(
        self, application_id: str, workers: dict[str, Worker], timeout: float = 3.0
    ) -> dict[str, Worker]:
        """The executors of ``application_id`` that the live ones of ``workers`` ran or run,
        by id, with their worker (each worker's ``/json/``: running and finished executors)."""
        found: dict[str, Worker] = {}
        for worker in workers.values():
            if not worker.alive:
                continue
            state = _json(f"{worker.web_url}/json/", timeout)
            if not isinstance(state, dict):
                continue
            for key in ("executors", "finishedexecutors"):
                for executor in state.get(key) or []:
                    if isinstance(executor, dict) and executor.get("appid") == application_id:
                        found[str(executor.get("id"))] = worker
        return {key: worker for key, worker in found.items() if EXECUTOR_ID.fullmatch(key)}


def executor_logs_at(application_id: str, placed: dict[str, Worker]) -> dict[str, LogSource]:
    """``executor-<id>`` (stderr) and ``executor-<id>-stdout`` of each executor, on the worker
    ``placed`` gives."""
    sources: dict[str, LogSource] = {}
    if not APPLICATION_ID.fullmatch(application_id):
        return sources
    for executor_id, worker in sorted(placed.items(), key=_by_number):
        for log_type, suffix in (("stderr", ""), ("stdout", "-stdout")):
            sources[f"executor-{executor_id}{suffix}"] = WorkerLog(
                worker.web_url,
                log_type,
                application_id=application_id,
                executor_id=executor_id,
                worker_alive=worker.alive,
            )
    return sources


def driver_logs_at(worker: Worker, driver_id: str) -> dict[str, LogSource]:
    """``driver`` (stderr) and ``driver-stdout`` of a cluster-mode driver on its worker."""
    return {
        name: WorkerLog(worker.web_url, log_type, driver_id=driver_id, worker_alive=worker.alive)
        for name, log_type in (("driver", "stderr"), ("driver-stdout", "stdout"))
    }


def listed_worker(url: str, workers: dict[str, Worker]) -> Worker | None:
    """The worker whose web UI ``url`` is on (``scheme://host:port``), when the master lists
    it; None for any other address."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    return next((worker for worker in workers.values() if worker.web_url == origin), None)


def query_of(url: str) -> dict[str, str]:
    """The first value of each of ``url``'s query parameters."""
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items() if values}


def _by_number(item: tuple[str, Worker]) -> tuple[int, str]:
    return (int(item[0]) if item[0].isdigit() else -1, item[0])


def _worker(entry: Any) -> Worker | None:
    if not isinstance(entry, dict):
        return None
    worker_id, web_url = entry.get("id"), entry.get("webuiaddress")
    if not isinstance(worker_id, str) or not isinstance(web_url, str):
        return None
    parts = urlsplit(web_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    port = entry.get("port")
    return Worker(
        id=worker_id,
        host=str(entry.get("host", parts.hostname)),
        port=port if isinstance(port, int) else 0,
        web_url=f"{parts.scheme}://{parts.netloc}",
        alive=entry.get("state") == "ALIVE",
    )


def _json(url: str, timeout: float) -> Any:
    try:
        response = httpx.get(url, timeout=timeout, trust_env=False, follow_redirects=False)
        response.raise_for_status()
        return response.json()
    except (httpx.HTTPError, ValueError):
        return None
