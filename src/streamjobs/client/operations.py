"""The operations of the streamjobs REST API, one method each, as the CLI and scripts call them.

Each method names its endpoint and the shape of its answer; how a request is sent and a
failure reported is ``client.transport``'s.
"""

from __future__ import annotations

from typing import Any

from streamjobs.client.transport import ApiTransport, if_match, item_path

JOBS = "/api/v1/jobs"
CONNECTIONS = "/api/v1/connections"
DESTINATIONS = "/api/v1/notification-destinations"
APPLICATIONS = "/api/v1/applications"
BUNDLES = "/api/v1/bundles"
NODE_TYPES = "/api/v1/node-types"
USERS = "/api/v1/users"
GROUPS = "/api/v1/groups"
PERMISSIONS = "/api/v1/permissions"
AUDIT = "/api/v1/audit"
ABORTING_TIMEOUT = 300.0
DESTINATION_TEST_TIMEOUT = 120.0
"""Seconds a destination's "send test" may take: each of its network steps has the server's
send timeout."""
"""Seconds a Delete that aborts the job's application may take: the server answers once the
application has ended (or once its own, shorter, wait is over)."""
UPGRADE_CHECK_TIMEOUT = 420.0
"""Seconds an upgrade (or its dry run) may take to answer: its compatibility check replays the
checkpoint's last batch in a short Spark job first."""


class StreamjobsClient(ApiTransport):
    """Talks to one streamjobs server with one access token."""

    def health(self) -> dict[str, Any]:
        return self._json("GET", "/healthz")

    def apply_job(self, manifest: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Create or update the job the manifest names: (created|configured|unchanged, job)."""
        return self._apply(JOBS, manifest, "job")

    def list_jobs(self, **filters: str | int | None) -> dict[str, Any]:
        return self._list(JOBS, filters)

    def get_job(self, name: str) -> dict[str, Any]:
        return self._json("GET", item_path(JOBS, name))

    def job_template(self, name: str) -> dict[str, Any]:
        return self._json("GET", item_path(JOBS, name) + "/template")

    def delete_job(
        self, name: str, *, abort: bool = False, delete_checkpoint: bool = False
    ) -> None:
        """Delete the job; with ``abort``, abort its live application first (the server waits
        for it to end, so the request may take as long as an abort does); with
        ``delete_checkpoint``, delete its checkpoint too (else a warning says where it stays).
        """
        params = {"deleteCheckpoint": "true"} if delete_checkpoint else {}
        if abort:
            params["abort"] = "true"
            self._request("DELETE", item_path(JOBS, name), params=params, timeout=ABORTING_TIMEOUT)
        else:
            self._request("DELETE", item_path(JOBS, name), params=params)

    def apply_connection(self, manifest: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Create or update the connection the manifest names: (created|configured|unchanged,
        connection)."""
        return self._apply(CONNECTIONS, manifest, "connection")

    def list_connections(self, **filters: str | int | None) -> dict[str, Any]:
        return self._list(CONNECTIONS, filters)

    def get_connection(self, name: str) -> dict[str, Any]:
        return self._json("GET", item_path(CONNECTIONS, name))

    def delete_connection(self, name: str) -> None:
        self._request("DELETE", item_path(CONNECTIONS, name))

    def create_destination(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Create a notification destination; the destination as stored."""
        return self._json("POST", DESTINATIONS, json=manifest)

    def apply_destination(self, manifest: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Create or update the notification destination the manifest names:
        (created|configured|unchanged, destination)."""
        return self._apply(DESTINATIONS, manifest, "destination")

    def list_destinations(self, **filters: str | None) -> dict[str, Any]:
        """Every notification destination (``type``, ``bundle`` filter): ``{"items": [...]}``."""
        return self._list(DESTINATIONS, dict(filters))

    def get_destination(self, name: str) -> dict[str, Any]:
        return self._json("GET", item_path(DESTINATIONS, name))

    def delete_destination(self, name: str) -> None:
        self._request("DELETE", item_path(DESTINATIONS, name))

    def test_destination(self, name: str) -> dict[str, Any]:
        """Send a test notification now: ``{"result": "delivered", "delivery": {...}}``; a
        failure is a ``ClientError`` (409) with the reason."""
        return self._json(
            "POST", item_path(DESTINATIONS, name) + "/test", timeout=DESTINATION_TEST_TIMEOUT
        )

    def destination_deliveries(self, name: str, limit: int = 20) -> dict[str, Any]:
        """The destination's newest deliveries, newest first: ``{"items": [...]}``."""
        path = item_path(DESTINATIONS, name) + "/deliveries"
        return self._json("GET", path, params={"limit": limit})

    def put_secret(self, bundle: str, name: str, value: str) -> tuple[str, dict[str, Any]]:
        """Create the bundle's secret or replace its value: (created|replaced, secret without
        its value)."""
        answer = self._json("PUT", _secret_path(bundle, name), json={"value": value})
        return answer["result"], answer["secret"]

    def list_secrets(self, bundle: str) -> dict[str, Any]:
        """The bundle's secrets: names and metadata, never values."""
        return self._json("GET", item_path(BUNDLES, bundle) + "/secrets")

    def delete_secret(self, bundle: str, name: str) -> None:
        self._request("DELETE", _secret_path(bundle, name))

    def run_job(
        self, name: str, *, from_snapshot: str | None = None, allow_replay: bool = False
    ) -> dict[str, Any]:
        """Start a new application; with ``from_snapshot``, from a copy of that snapshot of the
        job (``allow_replay``: even when an output has gone on past its position)."""
        path = item_path(JOBS, name) + "/run"
        if from_snapshot is None and not allow_replay:
            return self._json("POST", path)
        body = {"fromSnapshot": from_snapshot, "allowReplay": allow_replay}
        return self._json("POST", path, json=body)

    def stop_job(self, name: str) -> dict[str, Any]:
        return self._json("POST", item_path(JOBS, name) + "/stop")

    def suspend_job(self, name: str) -> dict[str, Any]:
        """Stop the live application gracefully with an aligned snapshot; it stays SUSPENDED."""
        return self._json("POST", item_path(JOBS, name) + "/suspend")

    def resume_job(self, name: str) -> dict[str, Any]:
        return self._json("POST", item_path(JOBS, name) + "/resume")

    def list_snapshots(self, job: str) -> dict[str, Any]:
        """The job's snapshots, newest first: ``{"items": [...]}``."""
        return self._json("GET", _snapshots_path(job))

    def get_snapshot(self, job: str, name: str) -> dict[str, Any]:
        return self._json("GET", item_path(_snapshots_path(job), name))

    def take_snapshot(self, job: str, name: str | None = None) -> dict[str, Any]:
        """Ask for a snapshot of the running pipeline now: the snapshot, TAKING (poll
        ``get_snapshot`` until it is READY or FAILED)."""
        body = {"name": name} if name is not None else {}
        return self._json("POST", _snapshots_path(job), json=body)

    def delete_snapshot(self, job: str, name: str) -> None:
        self._request("DELETE", item_path(_snapshots_path(job), name))

    def upgrade_job(
        self, name: str, *, mode: str | None = None, dry_run: bool = False
    ) -> dict[str, Any]:
        """Upgrade the running application to the job's current spec: the upgrade, STOPPING
        (poll ``get_upgrade`` until it has ended); with ``dry_run``, only the check's report.
        The check runs a short Spark job first, hence the long timeout."""
        params = {"dryRun": "true"} if dry_run else {}
        body = {"mode": mode} if mode is not None else {}
        path = item_path(JOBS, name) + "/upgrade"
        return self._json("POST", path, params=params, json=body, timeout=UPGRADE_CHECK_TIMEOUT)

    def list_upgrades(self, job: str) -> dict[str, Any]:
        """The job's upgrades, newest first: ``{"items": [...]}``."""
        return self._json("GET", item_path(JOBS, job) + "/upgrades")

    def get_upgrade(self, job: str, upgrade_id: str) -> dict[str, Any]:
        return self._json("GET", item_path(item_path(JOBS, job) + "/upgrades", upgrade_id))

    def list_applications(
        self, job: str | None = None, **filters: str | int | None
    ) -> dict[str, Any]:
        if job is not None:
            return self._list(item_path(JOBS, job) + "/applications", dict(filters))
        return self._list(APPLICATIONS, dict(filters))

    def get_application(self, application_id: str) -> dict[str, Any]:
        return self._json("GET", item_path(APPLICATIONS, application_id))

    def abort_application(self, application_id: str) -> dict[str, Any]:
        return self._json("POST", item_path(APPLICATIONS, application_id) + "/abort")

    def application_events(self, application_id: str, after: int | None = None) -> dict[str, Any]:
        params = {"after": after} if after is not None else {}
        return self._json("GET", item_path(APPLICATIONS, application_id) + "/events", params=params)

    def application_log(self, application_id: str, **params: str | int | None) -> dict[str, Any]:
        given = {key: value for key, value in params.items() if value is not None}
        return self._json("GET", item_path(APPLICATIONS, application_id) + "/logs", params=given)

    def whoami(self) -> dict[str, Any]:
        """The caller: name, kind, admin, groups and domain permissions."""
        return self._json("GET", "/api/v1/whoami")

    def list_users(self) -> dict[str, Any]:
        return self._json("GET", USERS)

    def get_user(self, name: str) -> dict[str, Any]:
        return self._json("GET", item_path(USERS, name))

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
        self._request("DELETE", item_path(USERS, name))

    def unlock_user(self, name: str) -> None:
        """Let ``name`` sign in again after a lockout; their failed sign-ins are forgotten."""
        self._request("POST", item_path(USERS, name) + "/unlock")

    def end_sessions(self, name: str) -> int:
        """End every web session of ``name`` (sign out everywhere); how many there were."""
        ended: int = self._json("DELETE", item_path(USERS, name) + "/sessions")["endedSessions"]
        return ended

    def grant_run_as(self, service_account: str, subject: str) -> None:
        """Let ``subject`` (user:NAME or group:NAME) run jobs as ``service_account``."""
        self._request("PUT", _run_as_path(service_account, subject))

    def revoke_run_as(self, service_account: str, subject: str) -> None:
        self._request("DELETE", _run_as_path(service_account, subject))

    def list_tokens(self, user: str) -> dict[str, Any]:
        """The user's access tokens, revoked and expired ones included; never their secrets."""
        return self._json("GET", item_path(USERS, user) + "/tokens")

    def create_token(
        self, user: str, name: str, *, expires_in_days: int | None = None
    ) -> dict[str, Any]:
        """Issue a token: its secret (``token``) is in this answer only."""
        body = {"name": name, "expiresInDays": expires_in_days}
        return self._json("POST", item_path(USERS, user) + "/tokens", json=body)

    def revoke_token(self, user: str, token_id: str) -> dict[str, Any]:
        return self._json("DELETE", item_path(item_path(USERS, user) + "/tokens", token_id))

    def list_groups(self) -> dict[str, Any]:
        return self._json("GET", GROUPS)

    def create_group(self, name: str) -> dict[str, Any]:
        return self._json("POST", GROUPS, json={"name": name})

    def delete_group(self, name: str) -> None:
        self._request("DELETE", item_path(GROUPS, name))

    def add_group_member(self, group: str, user: str) -> dict[str, Any]:
        return self._json("PUT", _member_path(group, user))

    def remove_group_member(self, group: str, user: str) -> dict[str, Any]:
        return self._json("DELETE", _member_path(group, user))

    def list_permissions(self) -> dict[str, Any]:
        """Who holds which domain permission, and what each permission means."""
        return self._json("GET", PERMISSIONS)

    def grant_permission(self, permission: str, subject: str) -> None:
        """Grant a domain permission (CREATE_JOB, MANAGE_BUNDLES, MANAGE_USERS) to ``subject``."""
        self._request("PUT", item_path(item_path(PERMISSIONS, permission), subject))

    def revoke_permission(self, permission: str, subject: str) -> None:
        self._request("DELETE", item_path(item_path(PERMISSIONS, permission), subject))

    def list_bundles(self) -> dict[str, Any]:
        """The bundles the caller manages or holds a grant on."""
        return self._json("GET", BUNDLES)

    def get_bundle(self, name: str) -> dict[str, Any]:
        """A bundle: its quota, what is in use, its grants and the caller's permissions."""
        return self._json("GET", item_path(BUNDLES, name))

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
        headers = if_match(resource_version)
        return self._json("PUT", item_path(BUNDLES, name), json=body, headers=headers)

    def set_bundle_grants(
        self, name: str, grants: list[dict[str, Any]], *, resource_version: str | None = None
    ) -> dict[str, Any]:
        """Replace every grant of the bundle: ``[{"subject": "user:alice", "permissions":
        ["VIEW", "RUN"]}]``; with ``resource_version``, as ``update_bundle``."""
        path = item_path(BUNDLES, name) + "/grants"
        return self._json("PUT", path, json={"grants": grants}, headers=if_match(resource_version))

    def delete_bundle(self, name: str) -> None:
        self._request("DELETE", item_path(BUNDLES, name))

    def list_node_types(self) -> dict[str, Any]:
        return self._json("GET", NODE_TYPES)

    def put_node_type(self, name: str, *, cores: int, memory_mb: int) -> tuple[str, dict[str, Any]]:
        """Create or resize a node type: (created|configured, node type)."""
        body = {"cores": cores, "memoryMb": memory_mb}
        response = self._request("PUT", item_path(NODE_TYPES, name), json=body)
        return ("created" if response.status_code == 201 else "configured"), response.json()

    def delete_node_type(self, name: str) -> None:
        self._request("DELETE", item_path(NODE_TYPES, name))

    def list_audit(self, **filters: str | int | None) -> dict[str, Any]:
        """The audit trail, newest first: filters actor, kind, action, limit, offset."""
        return self._list(AUDIT, filters)

    def manifest_schema(self) -> dict[str, Any]:
        return self._json("GET", "/api/v1/schema/streamingjob.json")


def _snapshots_path(job: str) -> str:
    return item_path(JOBS, job) + "/snapshots"


def _secret_path(bundle: str, name: str) -> str:
    return item_path(item_path(BUNDLES, bundle) + "/secrets", name)


def _run_as_path(service_account: str, subject: str) -> str:
    return item_path(item_path(USERS, service_account) + "/run-as", subject)


def _member_path(group: str, user: str) -> str:
    return item_path(item_path(GROUPS, group) + "/members", user)
