"""Access control through the CLI against a real server: whoami, users, service accounts, groups,
tokens, bundles and their quotas, node types, grants, the audit trail; bad input exits 2 and a
refusal 1, each with the server's words; and a story of a user who sees only her bundle's jobs."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from tests.cli.conftest import run, write
from tests.factories import pipeline_manifest

PASSWORD = "a-long-enough-password"


@pytest.fixture
def uid() -> str:
    """A suffix no other test uses, since the server is shared."""
    return uuid.uuid4().hex[:8]


def ok(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


def refused(result: Result, code: int, message: str) -> None:
    assert result.exit_code == code, result.output
    assert message in result.stderr, result.stderr


def rows(stdout: str, first: str) -> list[list[str]]:
    """The table rows whose first column is ``first``, split on blanks."""
    return [line.split() for line in stdout.splitlines() if line.split()[:1] == [first]]


def token_for(cli: CliRunner, user: str) -> str:
    return ok(run(cli, "create", "token", f"t-{uuid.uuid4().hex[:6]}", "--user", user)).strip()


def test_whoami_shows_the_admin(cli: CliRunner) -> None:
    text = ok(run(cli, "whoami"))
    assert "Name:         admin" in text
    assert "Permissions:  every permission (admin)" in text
    assert "  default: DELETE, RUN, UPDATE, VIEW" in text
    assert json.loads(ok(run(cli, "whoami", "-o", "json")))["admin"] is True


def test_users_service_accounts_groups_and_members(cli: CliRunner, uid: str) -> None:
    alice, bot, team = f"alice-{uid}", f"bot-{uid}", f"team-{uid}"
    created = run(cli, "create", "user", alice, "--password-stdin", stdin=PASSWORD + "\n")
    assert ok(created).strip() == f"user/{alice} created"
    assert ok(run(cli, "create", "serviceaccount", bot)).strip() == f"serviceaccount/{bot} created"
    assert ok(run(cli, "create", "group", team)).strip() == f"group/{team} created"
    assert (
        ok(run(cli, "add", "member", team, alice)).strip() == f"user/{alice} added to group/{team}"
    )

    users = ok(run(cli, "get", "users"))
    assert users.splitlines()[0].split()[:4] == ["NAME", "KIND", "ADMIN", "PASSWORD"]
    assert rows(users, alice)[0][:5] == [alice, "user", "no", "yes", team]
    assert rows(users, bot)[0][:4] == [bot, "serviceaccount", "no", "no"]
    shown = yaml.safe_load(ok(run(cli, "get", "user", alice)))
    assert shown["groups"] == [team]
    assert shown["signsInWithPassword"] is True
    groups = json.loads(ok(run(cli, "get", "groups", "-o", "json")))
    assert {"name": team, "members": [alice]}.items() <= next(
        g for g in groups["items"] if g["name"] == team
    ).items()

    removed = run(cli, "remove", "member", team, alice)
    assert ok(removed).strip() == f"user/{alice} removed from group/{team}"
    assert rows(ok(run(cli, "get", "groups")), team)[0][1] == "-"
    assert ok(run(cli, "delete", "group", team)).strip() == f"group/{team} deleted"
    for name in (alice, bot):
        assert ok(run(cli, "delete", "user", name)).strip() == f"user/{name} deleted"
    refused(run(cli, "delete", "user", alice), 1, f"user '{alice}' does not exist")
    refused(run(cli, "delete", "group", team), 1, f"group '{team}' does not exist")
    refused(run(cli, "add", "member", f"nog-{uid}", "admin"), 1, f"group 'nog-{uid}' does not")


@pytest.mark.parametrize(
    ("arguments", "stdin", "code", "message"),
    [
        (["Not valid!"], None, 2, "name: 'Not valid!' is not a valid name"),
        (["admin"], None, 1, "user 'admin' already exists"),
        (["nopw-{uid}", "--password-stdin"], "\n", 2, "standard input holds no password"),
        (["short-{uid}", "--password-stdin"], "short\n", 2, "password: must be at least 12"),
    ],
)
def test_bad_users_are_refused(
    cli: CliRunner, uid: str, arguments: list[str], stdin: str | None, code: int, message: str
) -> None:
    given = [argument.replace("{uid}", uid) for argument in arguments]
    refused(run(cli, "create", "user", *given, stdin=stdin), code, message)


def test_a_token_is_shown_once_works_and_can_be_revoked(cli: CliRunner, uid: str) -> None:
    alice = f"alice-{uid}"
    ok(run(cli, "create", "user", alice))
    created = run(cli, "create", "token", "laptop", "--user", alice, "--expires-in-days", "7")
    secret = ok(created).strip()
    assert secret.startswith("sj_")
    assert "\n" not in secret
    assert "shown this once" in created.stderr
    assert f"created for user {alice}" in created.stderr

    me = run(cli, "--token", secret, "whoami", "-o", "json")
    assert json.loads(ok(me))["name"] == alice
    mine = ok(run(cli, "--token", secret, "get", "tokens"))
    header, line = mine.splitlines()
    assert header.split()[:4] == ["ID", "NAME", "USER", "STATUS"]
    token_id, *row = line.split()
    assert row[:3] == ["laptop", alice, "active"]
    assert secret not in mine
    listed = json.loads(ok(run(cli, "get", "tokens", "--user", alice, "-o", "json")))
    assert [item["id"] for item in listed["items"]] == [token_id]

    revoked = run(cli, "delete", "token", token_id, "--user", alice)
    assert ok(revoked).strip() == f"token/{token_id} (laptop) revoked"
    assert rows(ok(run(cli, "get", "tokens", "-u", alice)), token_id)[0][3] == "revoked"
    assert run(cli, "--token", secret, "whoami").exit_code == 1
    refused(run(cli, "delete", "token", "nope", "--user", alice), 1, "token 'nope' does not exist")
    refused(run(cli, "create", "token", "x", "--expires-in-days", "0"), 2, "expiresInDays: must")
    as_json = json.loads(ok(run(cli, "create", "token", "ci", "--user", alice, "-o", "json")))
    assert as_json["token"].startswith("sj_")
    assert as_json["name"] == "ci"


def test_domain_permissions(cli: CliRunner, uid: str) -> None:
    alice = f"alice-{uid}"
    ok(run(cli, "create", "user", alice))
    granted = run(cli, "grant", "create_job,MANAGE_BUNDLES", f"user:{alice}")
    assert ok(granted).strip() == f"granted CREATE_JOB, MANAGE_BUNDLES to user:{alice}"
    table = ok(run(cli, "get", "permissions"))
    assert table.splitlines()[0].split() == ["PERMISSION", "MEANING", "SUBJECT"]
    assert ["CREATE_JOB", "Create", "Spark", "Job", f"user:{alice}"] in rows(table, "CREATE_JOB")
    listed = json.loads(ok(run(cli, "get", "permissions", "-o", "json")))
    held = {i["permission"] for i in listed["items"] if i["subject"] == f"user:{alice}"}
    assert held == {"CREATE_JOB", "MANAGE_BUNDLES"}
    token = token_for(cli, alice)
    assert "Permissions:  CREATE_JOB, MANAGE_BUNDLES" in ok(run(cli, "--token", token, "whoami"))

    revoked = run(cli, "revoke", "MANAGE_BUNDLES", f"user:{alice}")
    assert ok(revoked).strip() == f"revoked MANAGE_BUNDLES from user:{alice}"
    listed = json.loads(ok(run(cli, "get", "permissions", "-o", "json")))
    assert [i["permission"] for i in listed["items"] if i["subject"] == f"user:{alice}"] == [
        "CREATE_JOB"
    ]
    refused(run(cli, "--token", token, "get", "audit"), 1, "the audit trail is for admins only")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["BOGUS", "user:admin"], "BOGUS is not a permission: with --bundle, VIEW, RUN"),
        (["VIEW,NOPE", "user:admin", "-b", "default"], "NOPE is not a permission"),
        (["VIEW", "admin", "--bundle", "default"], "'admin' is not 'user:NAME' or 'group:NAME'"),
        (["CREATE_JOB", "team:x"], "'team:x' is not 'user:NAME' or 'group:NAME'"),
        (["VIEW", "user:admin"], "VIEW is a permission on a bundle's jobs: name it with --bundle"),
        (["CREATE_JOB", "user:admin", "--bundle", "default"], "not a bundle permission"),
        (["run-as", "some-bot"], "needs a service account and a subject"),
        (["run-as", "some-bot", "user:admin", "--bundle", "default"], "drop --bundle"),
        (["VIEW", "user:admin", "user:x", "--bundle", "default"], "only run-as takes two"),
        (["MANAGE_USERS", "user:nobody-x"], "subject: no user is called 'nobody-x'"),
        (["run-as", "admin", "user:admin"], "path.name: 'admin' is not a service account"),
    ],
)
@pytest.mark.parametrize("verb", ["grant", "revoke"])
def test_bad_grants_exit_2_saying_why(
    cli: CliRunner, verb: str, arguments: list[str], message: str
) -> None:
    refused(run(cli, verb, *arguments), 2, message)


def test_run_as_a_service_account(cli: CliRunner, uid: str) -> None:
    alice, bot = f"alice-{uid}", f"bot-{uid}"
    ok(run(cli, "create", "user", alice))
    ok(run(cli, "create", "serviceaccount", bot))
    granted = run(cli, "grant", "run-as", bot, f"user:{alice}")
    assert ok(granted).strip() == f"user:{alice} may run jobs as serviceaccount/{bot}"
    shown = json.loads(ok(run(cli, "get", "user", bot, "-o", "json")))
    assert shown["runAsGrantees"] == [f"user:{alice}"]
    assert rows(ok(run(cli, "get", "users")), bot)[0][6] == f"user:{alice}"
    revoked = run(cli, "revoke", "RUN-AS", bot, f"user:{alice}")
    assert ok(revoked).strip() == f"user:{alice} may no longer run jobs as serviceaccount/{bot}"
    assert json.loads(ok(run(cli, "get", "user", bot, "-o", "json")))["runAsGrantees"] == []
    refused(run(cli, "grant", "run-as", f"ghost-{uid}", "user:admin"), 1, "does not exist")


def test_bundles_and_their_quotas(cli: CliRunner, uid: str) -> None:
    bundle = f"b-{uid}"
    created = run(
        cli,
        *("create", "bundle", bundle, "--description", "Payments team"),
        *("--max-running-applications", "2", "--max-memory-mb", "8192"),
    )
    assert ok(created).strip() == f"bundle/{bundle} created"
    table = ok(run(cli, "get", "bundles"))
    assert table.splitlines()[0].split()[:5] == ["NAME", "JOBS", "RUNNING", "CORES", "MEMORY"]
    assert rows(table, bundle)[0] == [
        *(bundle, "0", "0/2", "0/-", "0/8192", "DELETE,RUN,UPDATE,VIEW", "Payments", "team")
    ]
    shown = yaml.safe_load(ok(run(cli, "get", "bundle", bundle)))
    assert shown["quota"] == {"maxRunningApplications": 2, "maxCores": None, "maxMemoryMb": 8192}
    described = ok(run(cli, "describe", "bundle", bundle))
    assert "Description:       Payments team" in described
    assert "  Running applications  0           2" in described
    assert "  Cores                 0           no limit" in described
    assert "  Memory                0 MB        8192 MB" in described
    assert "Grants: -" in described

    changed = run(cli, "set", "quota", bundle, "--max-cores", "16", "--max-memory-mb", "none")
    assert ok(changed).strip() == (
        f"bundle/{bundle} quota set: running applications 2, cores 16, memory no limit"
    )
    after = json.loads(ok(run(cli, "get", "bundle", bundle, "-o", "json")))
    assert after["quota"] == {"maxRunningApplications": 2, "maxCores": 16, "maxMemoryMb": None}
    assert after["description"] == "Payments team"

    refused(run(cli, "set", "quota", bundle), 2, "give at least one of")
    refused(run(cli, "set", "quota", bundle, "--max-cores", "lots"), 2, "'lots' is neither")
    refused(run(cli, "set", "quota", bundle, "--max-cores", "-1"), 2, "quota.maxCores: must be")
    refused(
        run(cli, "create", "bundle", f"neg-{uid}", "--max-running-applications", "-3"),
        2,
        "quota.maxRunningApplications: must be between 0 and",
    )
    refused(run(cli, "create", "bundle", bundle), 1, f"resource bundle '{bundle}' already exists")
    refused(run(cli, "set", "quota", f"nope-{uid}", "--max-cores", "1"), 1, "does not exist")
    refused(run(cli, "describe", "bundle", f"nope-{uid}"), 1, "does not exist")

    assert ok(run(cli, "delete", "bundle", bundle)).strip() == f"bundle/{bundle} deleted"
    refused(run(cli, "get", "bundle", bundle), 1, f"resource bundle '{bundle}' does not exist")


def test_bundle_grants_are_read_changed_and_put_back(cli: CliRunner, uid: str) -> None:
    bundle, alice, team = f"b-{uid}", f"alice-{uid}", f"team-{uid}"
    ok(run(cli, "create", "bundle", bundle))
    ok(run(cli, "create", "user", alice))
    ok(run(cli, "create", "group", team))
    granted = run(cli, "grant", "VIEW,RUN", f"user:{alice}", "--bundle", bundle)
    assert ok(granted).strip() == f"granted VIEW, RUN on bundle/{bundle} to user:{alice}"
    again = ok(run(cli, "grant", "RUN", f"user:{alice}", "-b", bundle))
    assert again.strip() == f"user:{alice} already holds RUN on bundle/{bundle}; unchanged"
    ok(run(cli, "grant", "UPDATE", f"group:{team}", "--bundle", bundle))

    described = ok(run(cli, "describe", "bundle", bundle))
    assert f"  user:{alice}" in described
    assert "RUN, VIEW" in described
    assert f"  group:{team}" in described
    listed = ok(run(cli, "get", "permissions", "--bundle", bundle))
    assert rows(listed, f"user:{alice}") == [[f"user:{alice}", "RUN,VIEW"]]
    assert rows(listed, f"group:{team}") == [[f"group:{team}", "UPDATE"]]

    revoked = ok(run(cli, "revoke", "VIEW", f"user:{alice}", "--bundle", bundle))
    assert f"revoked VIEW on bundle/{bundle} from user:{alice}" in revoked
    assert "RUN implies VIEW" in revoked
    ok(run(cli, "revoke", "RUN", f"user:{alice}", "--bundle", bundle))
    grants = json.loads(ok(run(cli, "get", "bundle", bundle, "-o", "json")))["grants"]
    assert grants == [{"subject": f"group:{team}", "permissions": ["UPDATE"]}]
    nothing = ok(run(cli, "revoke", "RUN", f"user:{alice}", "--bundle", bundle))
    assert nothing.strip() == f"user:{alice} holds none of RUN on bundle/{bundle}; unchanged"
    refused(run(cli, "grant", "VIEW", "user:admin", "-b", f"nope-{uid}"), 1, "does not exist")
    refused(
        run(cli, "grant", "VIEW", f"group:ghost-{uid}", "-b", bundle),
        2,
        f"no group is called 'ghost-{uid}'",
    )


def test_node_types(cli: CliRunner, uid: str) -> None:
    name = f"xl-{uid}"
    created = run(cli, "create", "node-type", name, "--cores", "8", "--memory-mb", "32768")
    assert ok(created).strip() == f"node-type/{name} created"
    resized = run(cli, "create", "node-type", name, "--cores", "16", "--memory-mb", "65536")
    assert ok(resized).strip() == f"node-type/{name} configured"
    table = ok(run(cli, "get", "node-types"))
    assert table.splitlines()[0].split() == ["NAME", "CORES", "MEMORY", "MB"]
    assert rows(table, name) == [[name, "16", "65536"]]
    assert rows(table, "small") == [["small", "1", "1024"]]
    listed = json.loads(ok(run(cli, "get", "node-types", "-o", "json")))
    assert {"name": name, "cores": 16, "memoryMb": 65536} in listed["items"]
    refused(
        run(cli, "create", "node-type", name, "--cores", "0", "--memory-mb", "1"),
        2,
        "cores: must be between 1",
    )
    assert ok(run(cli, "delete", "node-type", name)).strip() == f"node-type/{name} deleted"
    refused(run(cli, "delete", "node-type", name), 1, f"node type '{name}' does not exist")


def test_the_audit_trail(cli: CliRunner, uid: str) -> None:
    bundle = f"b-{uid}"
    ok(run(cli, "create", "bundle", bundle))
    ok(run(cli, "set", "quota", bundle, "--max-cores", "4"))
    table = ok(run(cli, "get", "audit", "--kind", "bundle", "--limit", "500"))
    assert table.splitlines()[0].split() == [
        "AT",
        "ACTOR",
        "ACTION",
        "RESOURCE",
        "DETAIL",
        "SOURCE",
    ]
    actions = [row[4] for row in (line.split() for line in table.splitlines()) if len(row) > 5]
    assert "bundle.created" in actions
    assert "bundle.configured" in actions
    page = json.loads(ok(run(cli, "get", "audit", "--action", "bundle.conf", "-o", "json")))
    assert page["items"][0]["resource"] == {"kind": "bundle", "name": bundle}
    assert page["items"][0]["detail"]["maxCores"] == 4
    assert {item["action"] for item in page["items"]} == {"bundle.configured"}
    latest = ok(run(cli, "get", "audit", "--action", "bundle.conf", "--limit", "1"))
    assert "maxCores=4,maxMemoryMb=null" in latest
    limited = run(cli, "get", "audit", "--actor", "admin", "--limit", "1")
    assert len(ok(limited).splitlines()) == 2
    assert "--offset 1 for more" in limited.stderr


def test_a_user_sees_only_the_jobs_of_her_bundle(cli: CliRunner, tmp_path: Path, uid: str) -> None:
    """The story: an admin sets up alice, a token, a bundle with a quota, and grants; alice sees
    that bundle's jobs and nothing else, and may run but not delete them."""
    alice, bundle = f"alice-{uid}", f"team-{uid}"
    mine, other = f"job-mine-{uid}", f"job-other-{uid}"
    ok(run(cli, "create", "user", alice))
    token = token_for(cli, alice)
    ok(
        run(
            cli,
            "create",
            "bundle",
            bundle,
            "--max-running-applications",
            "1",
            "--data-root",
            "/tmp/out",
        )
    )
    ok(run(cli, "grant", "VIEW,RUN", f"user:{alice}", "--bundle", bundle))
    manifests = write(
        tmp_path / "jobs.yaml", pipeline_manifest(mine, bundle=bundle), pipeline_manifest(other)
    )
    ok(run(cli, "apply", "-f", str(manifests)))

    as_alice = ("--token", token)
    listed = json.loads(ok(run(cli, *as_alice, "get", "jobs", "-o", "json")))
    assert [job["metadata"]["name"] for job in listed["items"]] == [mine]
    table = ok(run(cli, *as_alice, "get", "jobs"))
    assert rows(table, mine)[0][:3] == [mine, "default", bundle]
    assert other not in table
    bundles = ok(run(cli, *as_alice, "get", "bundles"))
    assert [row[0] for row in (line.split() for line in bundles.splitlines()[1:])] == [bundle]
    assert rows(bundles, bundle)[0][2:6] == ["0/1", "0/-", "0/-", "RUN,VIEW"]
    assert f"  {bundle}: RUN, VIEW" in ok(run(cli, *as_alice, "whoami"))
    refused(run(cli, *as_alice, "get", "job", other), 1, f"job '{other}' does not exist")
    refused(run(cli, *as_alice, "delete", "job", mine), 1, "needs the DELETE permission")
    refused(run(cli, *as_alice, "create", "bundle", f"x-{uid}"), 1, "'Manage bundles'")

    refused(
        run(cli, "delete", "bundle", bundle),
        1,
        f"resource bundle '{bundle}' still holds 1 job(s); move or delete them first",
    )
    for job in (mine, other):
        ok(run(cli, "delete", "job", job))
    ok(run(cli, "delete", "bundle", bundle))
