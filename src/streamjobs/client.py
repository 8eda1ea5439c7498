"""The HTTP client of the streamjobs REST API, used by the CLI (and by anyone scripting the server).

Every failure is a ``ClientError`` carrying the HTTP status and the server's problem document, so
callers can show the server's own words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

DEFAULT_SERVER = "http://127.0.0.1:8040"
JOBS = "/api/v1/jobs"
CONNECTIONS = "/api/v1/connections"
APPLICATIONS = "/api/v1/applications"
BUNDLES = "/api/v1/bundles"
NODE_TYPES = "/api/v1/node-types"
USERS = "/api/v1/users"
GROUPS = "/api/v1/groups"
PERMISSIONS = "/api/v1/permissions"
AUDIT = "/api/v1/audit"
CONFLICT_ATTEMPTS = 5
ABORTING_TIMEOUT = 300.0
"""Seconds a Delete that aborts the job's application may take: the server answers once the
application has ended (or once its own, shorter, wait is over)."""
"""How often ``retry_on_conflict`` tries a read-then-write that others keep changing under it."""

T = TypeVar("T")


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

    def delete_job(self, name: str, *, abort: bool = False) -> None:
        """Delete the job; with ``abort``, abort its live application first (the server waits
        for it to end, so the request may take as long as an abort does)."""
        if abort:
            self._request(
                "DELETE", _path(JOBS, name), params={"abort": "true"}, timeout=ABORTING_TIMEOUT
            )
        else:
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

    def whoami(self) -> dict[str, Any]:
        """The caller: name, kind, admin, groups and domain permissions."""
        return self._json("GET", "/api/v1/whoami")

    def list_users(self) -> dict[str, Any]:
        return self._json("GET", USERS)

    def get_user(self, name: str) -> dict[str, Any]:
        return self._json("GET", _path(USERS, name))

    def create_user(
        self, name: str, *, kind: str = "user", password: str | None = None, admin: bool = False
    ) -> dict[str, Any]:
        """A user (``kind`` user, signing in with ``password`` if given, else tokens only) or a
        service account (``kind`` serviceAccount: tokens only)."""
        body: dict[str, Any] = {"name": name, "kind": kind, "admin": admin}
        if password is not None:
            body["password"] = password
        return self._json("POST", USERS, json=body)

    def delete_user(self, name: str) -> None:
        self._request("DELETE", _path(USERS, name))

    def unlock_user(self, name: str) -> None:
        """Let ``name`` sign in again after a lockout; their failed sign-ins are forgotten."""
        self._request("POST", _path(USERS, name) + "/unlock")

    def end_sessions(self, name: str) -> int:
        """End every web session of ``name`` (sign out everywhere); how many there were."""
        ended: int = self._json("DELETE", _path(USERS, name) + "/sessions")["endedSessions"]
        return ended

    def grant_run_as(self, service_account: str, subject: str) -> None:
        """Let ``subject`` (user:NAME or group:NAME) run jobs as ``service_account``."""
        self._request("PUT", _run_as_path(service_account, subject))

    def revoke_run_as(self, service_account: str, subject: str) -> None:
        self._request("DELETE", _run_as_path(service_account, subject))

    def list_tokens(self, user: str) -> dict[str, Any]:
        """The user's access tokens, revoked and expired ones included; never their secrets."""
        return self._json("GET", _path(USERS, user) + "/tokens")

    def create_token(
        self, user: str, name: str, *, expires_in_days: int | None = None
    ) -> dict[str, Any]:
        """Issue a token: its secret (``token``) is in this answer only."""
        body = {"name": name, "expiresInDays": expires_in_days}
        return self._json("POST", _path(USERS, user) + "/tokens", json=body)

    def revoke_token(self, user: str, token_id: str) -> dict[str, Any]:
        return self._json("DELETE", _path(_path(USERS, user) + "/tokens", token_id))

    def list_groups(self) -> dict[str, Any]:
        return self._json("GET", GROUPS)

    def create_group(self, name: str) -> dict[str, Any]:
        return self._json("POST", GROUPS, json={"name": name})

    def delete_group(self, name: str) -> None:
        self._request("DELETE", _path(GROUPS, name))

    def add_group_member(self, group: str, user: str) -> dict[str, Any]:
        return self._json("PUT", _member_path(group, user))

    def remove_group_member(self, group: str, user: str) -> dict[str, Any]:
        return self._json("DELETE", _member_path(group, user))

    def list_permissions(self) -> dict[str, Any]:
        """Who holds which domain permission, and what each permission means."""
        return self._json("GET", PERMISSIONS)

    def grant_permission(self, permission: str, subject: str) -> None:
        """Grant a domain permission (CREATE_JOB, MANAGE_BUNDLES, MANAGE_USERS) to ``subject``."""
        self._request("PUT", _path(_path(PERMISSIONS, permission), subject))

    def revoke_permission(self, permission: str, subject: str) -> None:
        self._request("DELETE", _path(_path(PERMISSIONS, permission), subject))

    def list_bundles(self) -> dict[str, Any]:
        """The bundles the caller manages or holds a grant on."""
        return self._json("GET", BUNDLES)

    def get_bundle(self, name: str) -> dict[str, Any]:
        """A bundle: its quota, what is in use, its grants and the caller's permissions."""
        return self._json("GET", _path(BUNDLES, name))

    def create_bundle(
        self,
        name: str,
        *,
        description: str | None = None,
        quota: dict[str, int | None],
        data_roots: list[str] | None = None,
        spark_conf: dict[str, list[str]] | None = None,
    ) -> dict[str, Any]:
        """``quota`` holds maxRunningApplications, maxCores, maxMemoryMb (None: no limit);
        ``spark_conf`` its ``allowed`` and ``refused`` lists."""
        body = {
            "name": name,
            "description": description,
            "quota": quota,
            "dataRoots": data_roots or [],
            "sparkConf": spark_conf or {},
        }
        return self._json("POST", BUNDLES, json=body)

    def update_bundle(
        self,
        name: str,
        *,
        description: str | None,
        quota: dict[str, int | None],
        data_roots: list[str],
        spark_conf: dict[str, list[str]],
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        """Set the bundle's description, every quota (a quota left out means no limit), its data
        roots and its Spark setting policy; with ``resource_version``, only if the bundle is
        still at it (else a 409 ``ClientError``)."""
        body = {
            "description": description,
            "quota": quota,
            "dataRoots": data_roots,
            "sparkConf": spark_conf,
        }
        headers = _if_match(resource_version)
        return self._json("PUT", _path(BUNDLES, name), json=body, headers=headers)

    def set_bundle_grants(
        self, name: str, grants: list[dict[str, Any]], *, resource_version: str | None = None
    ) -> dict[str, Any]:
        """Replace every grant of the bundle: ``[{"subject": "user:alice", "permissions":
        ["VIEW", "RUN"]}]``; with ``resource_version``, as ``update_bundle``."""
        path = _path(BUNDLES, name) + "/grants"
        return self._json("PUT", path, json={"grants": grants}, headers=_if_match(resource_version))

    def delete_bundle(self, name: str) -> None:
        self._request("DELETE", _path(BUNDLES, name))

    def list_node_types(self) -> dict[str, Any]:
        return self._json("GET", NODE_TYPES)

    def put_node_type(self, name: str, *, cores: int, memory_mb: int) -> tuple[str, dict[str, Any]]:
        """Create or resize a node type: (created|configured, node type)."""
        body = {"cores": cores, "memoryMb": memory_mb}
        response = self._request("PUT", _path(NODE_TYPES, name), json=body)
        return ("created" if response.status_code == 201 else "configured"), response.json()

    def delete_node_type(self, name: str) -> None:
        self._request("DELETE", _path(NODE_TYPES, name))

    def list_audit(self, **filters: str | int | None) -> dict[str, Any]:
        """The audit trail, newest first: filters actor, kind, action, limit, offset."""
        return self._list(AUDIT, filters)

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


def retry_on_conflict(change: Callable[[], T], *, attempts: int = CONFLICT_ATTEMPTS) -> T:
    """Run ``change`` (a read, then a write naming the version it read) again while its write
    loses to someone else's change, as kubectl's edits do; the last 409 is raised."""
    for _ in range(attempts - 1):
        try:
            return change()
        except ClientError as error:
            if error.status != 409:
                raise
    return change()


def _if_match(resource_version: str | None) -> dict[str, str]:
    return {} if resource_version is None else {"If-Match": f'"{resource_version}"'}


def _path(collection: str, name: str) -> str:
    return f"{collection}/{quote(name, safe='')}"


def _secret_path(bundle: str, name: str) -> str:
    return _path(_path(BUNDLES, bundle) + "/secrets", name)


def _run_as_path(service_account: str, subject: str) -> str:
    return _path(_path(USERS, service_account) + "/run-as", subject)


def _member_path(group: str, user: str) -> str:
    return _path(_path(GROUPS, group) + "/members", user)


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
