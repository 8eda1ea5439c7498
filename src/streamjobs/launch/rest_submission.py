"""A small client of a Spark standalone master's REST submission server, for cluster deploy mode.

``spark-submit --deploy-mode cluster`` refuses Python applications on a standalone cluster, but
the master's REST server (``spark.master.rest.enabled=true``, port 6066 by default) starts any
main class on a worker: it builds a ``DriverDescription`` whose command is Spark's
``DriverWrapper`` running ``mainClass`` with ``appArgs``, the ``sparkProperties`` as the JVM's
system properties and the ``environmentVariables`` as its environment. The protocol, as Spark
4.1's ``StandaloneRestServer`` and ``RestSubmissionClient`` speak it:

- ``POST {rest}/v1/submissions/create`` with a ``CreateSubmissionRequest``; the answer's
  ``submissionId`` (``driver-…``) names the driver from then on, ``success`` false with a
  ``message`` when the master refused it;
- ``GET {rest}/v1/submissions/status/{id}``: ``driverState`` (SUBMITTED, RUNNING, FINISHED,
  RELAUNCHING, UNKNOWN, KILLED, FAILED, ERROR), the ``workerId`` and ``workerHostPort`` it runs
  on, ``success`` false when the master does not know the driver (any more);
- ``POST {rest}/v1/submissions/kill/{id}``: the worker ends the driver's process (SIGTERM, then
  SIGKILL after ``spark.worker.driverTerminateTimeout``); KILLED afterwards.

A request the server cannot read is answered 400 with an ``ErrorResponse`` and its ``message``.
The server has no authentication of its own: whoever reaches it may submit and kill drivers, so
it belongs on the cluster's private network.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from streamjobs.domain.cluster_addresses import master_addresses
from streamjobs.domain.errors import StreamjobsError

PROTOCOL_VERSION = "v1"
REST_URL_SETTING = "STREAMJOBS_SPARK_MASTER_REST_URL"
DEFAULT_REST_PORT = 6066
DEFAULT_WEB_PORT = 8080
DEFAULT_TIMEOUT = httpx.Timeout(10.0, connect=3.0)
SUBMISSION_ID = re.compile(r"driver-[0-9]+-[0-9]+")
"""What the master names a driver; anything else is not sent back to it in a URL."""

RUNNING_STATES = frozenset({"SUBMITTED", "RUNNING", "RELAUNCHING", "UNKNOWN"})
"""Driver states of a driver that has not ended: waiting for a worker, running, being started
again on another worker (``spark.driver.supervise``), or not yet reported by its worker after
the master recovered."""


class RestSubmissionError(StreamjobsError):
    """The REST submission server answered, but not as asked (a refusal, a malformed answer)."""

    title = "Spark master refused the request"


class MasterUnreachable(RestSubmissionError):
    """The REST submission server did not answer at all."""

    title = "Spark master unreachable"


@dataclass(frozen=True)
class SubmissionRequest:
    """A driver to start on the cluster: ``main_class`` run by Spark's ``DriverWrapper`` with
    ``app_resource`` (a jar, or the Python file) fetched into its directory on the worker."""

    app_resource: str
    main_class: str
    app_args: Sequence[str]
    spark_properties: Mapping[str, str]
    environment_variables: Mapping[str, str]
    client_spark_version: str

    def to_wire(self) -> dict[str, Any]:
        return {
            "action": "CreateSubmissionRequest",
            "appResource": self.app_resource,
            "mainClass": self.main_class,
            "appArgs": list(self.app_args),
            "clientSparkVersion": self.client_spark_version,
            "environmentVariables": dict(self.environment_variables),
            "sparkProperties": dict(self.spark_properties),
        }


@dataclass(frozen=True)
class SubmissionStatus:
    """What the master says of a driver (``found`` False: it knows none of that id)."""

    found: bool
    driver_state: str | None = None
    worker_id: str | None = None
    worker_host_port: str | None = None
    message: str | None = None

    @property
    def running(self) -> bool:
        return self.found and self.driver_state in RUNNING_STATES

    @property
    def worker_host(self) -> str | None:
        """The host of the worker the driver runs on (``workerHostPort`` without its port)."""
        if not self.worker_host_port:
            return None
        host, _, port = self.worker_host_port.rpartition(":")
        host = host if port.isdigit() else self.worker_host_port
        return host.removeprefix("[").removesuffix("]") or None


def default_rest_url(master_url: str) -> str:
    """``http://<master host>:6066`` for ``spark://<master host>:<port>`` (its first master)."""
    return f"http://{_first_master_host(master_url)}:{DEFAULT_REST_PORT}"


def default_web_url(master_url: str) -> str:
    """``http://<master host>:8080``: the master's web UI, whose ``/json/`` lists its workers."""
    return f"http://{_first_master_host(master_url)}:{DEFAULT_WEB_PORT}"


def _first_master_host(master_url: str) -> str:
    masters = master_addresses(master_url)
    host = masters[0].host if masters else "127.0.0.1"
    return f"[{host}]" if ":" in host else host


class RestSubmissionClient:
    """Talks to one master's REST submission server at ``rest_url`` (``http://host:6066``)."""

    def __init__(self, rest_url: str, *, timeout: httpx.Timeout = DEFAULT_TIMEOUT) -> None:
        self.rest_url = rest_url.rstrip("/")
        self._timeout = timeout

    def create(self, request: SubmissionRequest) -> str:
        """Submit the driver and return its submission id; ``MasterUnreachable`` when the server
        does not answer, ``RestSubmissionError`` with the master's reason when it refuses."""
        answer = self._call("POST", "create", json=request.to_wire())
        submission_id = answer.get("submissionId")
        if answer.get("success") is not True or not isinstance(submission_id, str):
            reason = answer.get("message") or "no reason given"
            raise RestSubmissionError(
                f"the Spark master at {self.rest_url} refused the driver: {reason}"
            )
        if not SUBMISSION_ID.fullmatch(submission_id):
            raise RestSubmissionError(
                f"the Spark master at {self.rest_url} named the driver {submission_id!r}, "
                "which is not a driver id"
            )
        return submission_id

    def status(self, submission_id: str) -> SubmissionStatus:
        """The driver's status; ``MasterUnreachable`` when the server does not answer."""
        answer = self._call("GET", f"status/{_checked(submission_id)}")
        if answer.get("success") is not True:
            return SubmissionStatus(found=False, message=_text(answer.get("message")))
        return SubmissionStatus(
            found=True,
            driver_state=_text(answer.get("driverState")),
            worker_id=_text(answer.get("workerId")),
            worker_host_port=_text(answer.get("workerHostPort")),
            message=_text(answer.get("message")),
        )

    def kill(self, submission_id: str) -> bool:
        """Ask the master to kill the driver; whether it took the request (False: the driver
        has already ended, or the master does not know it)."""
        answer = self._call("POST", f"kill/{_checked(submission_id)}")
        return answer.get("success") is True

    def _call(self, method: str, action: str, **content: Any) -> dict[str, Any]:
        url = f"{self.rest_url}/{PROTOCOL_VERSION}/submissions/{action}"
        try:
            with httpx.Client(timeout=self._timeout, trust_env=False) as client:
                response = client.request(method, url, **content)
        except httpx.HTTPError as error:
            raise MasterUnreachable(
                f"the Spark master's REST submission server at {self.rest_url} did not answer "
                f"({type(error).__name__}: {error}); check {REST_URL_SETTING} and that the "
                "master runs with spark.master.rest.enabled=true"
            ) from None
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise RestSubmissionError(
                f"{url} answered HTTP {response.status_code} without a submission document; "
                f"is {REST_URL_SETTING} the master's REST submission server?"
            )
        if response.status_code >= 400 and answer.get("action") == "ErrorResponse":
            raise RestSubmissionError(
                f"the Spark master at {self.rest_url} refused the request (HTTP "
                f"{response.status_code}): {answer.get('message') or 'no reason given'}"
            )
        return answer


def _checked(submission_id: str) -> str:
    if not SUBMISSION_ID.fullmatch(submission_id):
        raise RestSubmissionError(f"{submission_id!r} is not a driver's submission id")
    return submission_id


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
