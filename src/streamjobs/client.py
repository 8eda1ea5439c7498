"""The HTTP client of the streamjobs REST API, used by the CLI (and by anyone scripting the server).

Every failure is a ``ClientError`` carrying the HTTP status and the server's problem document, so
callers can show the server's own words.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

DEFAULT_SERVER = "http://127.0.0.1:8040"
JOBS = "/api/v1/jobs"
CONNECTIONS = "/api/v1/connections"
APPLICATIONS = "/api/v1/applications"
BUNDLES = "/api/v1/bundles"


class ClientError(Exception):
    """A request failed: ``status`` is None when the server could not be reached at all."""

    def __init__(self, message: str, *, status: int | None = None, problem: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.problem = problem if isinstance(problem, dict) else {}

    @property
    def field_errors(self) -> list[str]:
        return [
            f"{item.get('path')}: {item.get('message')}" if item.get("path") else item["message"]
            for item in self.problem.get("errors", [])
            if isinstance(item, dict) and "message" in item
        ]

    @property
    def is_invalid_input(self) -> bool:
        return self.status in (400, 422)


class StreamjobsClient:
    """Talks to one streamjobs server with one access token."""

    def __init__(
        self,
        server: str = DEFAULT_SERVER,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.server = server.rstrip("/")
        self._http = httpx.Client(
            base_url=self.server, headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> StreamjobsClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def health(self) -> dict[str, Any]:
        return self._json("GET", "/healthz")

    def apply_job(self, manifest: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Create or update the job the manifest names: (created|configured|unchanged, job)."""
        return self._apply(JOBS, manifest, "job")

    def list_jobs(self, **filters: str | int | None) -> dict[str, Any]:
        return self._list(JOBS, filters)

    def get_job(self, name: str) -> dict[str, Any]:
        return self._json("GET", _path(JOBS, name))

    def job_template(self, name: str) -> dict[str, Any]:
        return self._json("GET", _path(JOBS, name) + "/template")

    def delete_job(self, name: str) -> None:
        self._request("DELETE", _path(JOBS, name))

    def apply_connection(self, manifest: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Create or update the connection the manifest names: (created|configured|unchanged,
        connection)."""
        return self._apply(CONNECTIONS, manifest, "connection")

    def list_connections(self, **filters: str | int | None) -> dict[str, Any]:
        return self._list(CONNECTIONS, filters)

    def get_connection(self, name: str) -> dict[str, Any]:
        return self._json("GET", _path(CONNECTIONS, name))

    def delete_connection(self, name: str) -> None:
        self._request("DELETE", _path(CONNECTIONS, name))

    def put_secret(self, bundle: str, name: str, value: str) -> tuple[str, dict[str, Any]]:
        """Create the bundle's secret or replace its value: (created|replaced, secret without
        its value)."""
        answer = self._json("PUT", _secret_path(bundle, name), json={"value": value})
        return answer["result"], answer["secret"]

    def list_secrets(self, bundle: str) -> dict[str, Any]:
        """The bundle's secrets: names and metadata, never values."""
        return self._json("GET", _path(BUNDLES, bundle) + "/secrets")

    def delete_secret(self, bundle: str, name: str) -> None:
        self._request("DELETE", _secret_path(bundle, name))

    def run_job(self, name: str) -> dict[str, Any]:
        return self._json("POST", _path(JOBS, name) + "/run")

    def stop_job(self, name: str) -> dict[str, Any]:
        return self._json("POST", _path(JOBS, name) + "/stop")

    def resume_job(self, name: str) -> dict[str, Any]:
        return self._json("POST", _path(JOBS, name) + "/resume")

    def list_applications(
        self, job: str | None = None, **filters: str | int | None
    ) -> dict[str, Any]:
        if job is not None:
            return self._list(_path(JOBS, job) + "/applications", dict(filters))
        return self._list(APPLICATIONS, dict(filters))

    def get_application(self, application_id: str) -> dict[str, Any]:
        return self._json("GET", _path(APPLICATIONS, application_id))

    def abort_application(self, application_id: str) -> dict[str, Any]:
        return self._json("POST", _path(APPLICATIONS, application_id) + "/abort")

    def application_events(self, application_id: str, after: int | None = None) -> dict[str, Any]:
        params = {"after": after} if after is not None else {}
        return self._json("GET", _path(APPLICATIONS, application_id) + "/events", params=params)

    def application_log(self, application_id: str, **params: str | int | None) -> dict[str, Any]:
        given = {key: value for key, value in params.items() if value is not None}
        return self._json("GET", _path(APPLICATIONS, application_id) + "/logs", params=given)

    def manifest_schema(self) -> dict[str, Any]:
        return self._json("GET", "/api/v1/schema/streamingjob.json")

    def _apply(
        self, collection: str, manifest: dict[str, Any], key: str
    ) -> tuple[str, dict[str, Any]]:
        answer = self._json("PUT", _path(collection, manifest["metadata"]["name"]), json=manifest)
        return answer["result"], answer[key]

    def _list(self, collection: str, filters: dict[str, str | int | None]) -> dict[str, Any]:
        params = {key: value for key, value in filters.items() if value is not None}
        return self._json("GET", collection, params=params)

    def _json(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        body: dict[str, Any] = self._request(method, path, **kwargs).json()
        return body

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise ClientError(f"cannot reach the server at {self.server}: {error}") from error
        if response.is_success:
            return response
        raise _error_from(response)


def _path(collection: str, name: str) -> str:
    return f"{collection}/{quote(name, safe='')}"


def _secret_path(bundle: str, name: str) -> str:
    return _path(_path(BUNDLES, bundle) + "/secrets", name)


def _error_from(response: httpx.Response) -> ClientError:
    try:
        problem = response.json()
    except ValueError:
        problem = None
    if isinstance(problem, dict) and problem.get("detail"):
        message = str(problem["detail"])
    else:
        message = f"{response.status_code} {response.reason_phrase}: {response.text[:500]}"
    return ClientError(message, status=response.status_code, problem=problem)
