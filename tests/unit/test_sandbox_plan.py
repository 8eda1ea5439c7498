"""The sandbox's command line (``launch.sandbox``) and account names (``launch.accounts``)."""

from __future__ import annotations

from streamjobs.launch.accounts import Account, candidate_names
from streamjobs.launch.sandbox import Bind, SandboxPlan, sandbox_argv

HOME = "/srv/streamjobs"


def plan(**changes: object) -> SandboxPlan:
    fields: dict[str, object] = {
        "read_only": [Bind("/usr"), Bind("/opt/venv")],
        "read_write": [Bind("/data/lake")],
        "private": [Bind(f"{HOME}/apps/app-1/1")],
        "hidden": [HOME],
        "working_directory": f"{HOME}/apps/app-1/1",
        "links": [("usr/bin", "/bin")],
        "account": Account(name="sj-alice-12345678", uid=990, gid=980),
    }
    fields.update(changes)
    return SandboxPlan(**fields)  # type: ignore[arg-type]


def pairs(argv: list[str], flag: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, item in enumerate(argv) if item == flag]


def test_as_root_the_command_becomes_the_account_with_no_capability() -> None:
    argv = sandbox_argv(plan(), ["spark-submit", "job.py"])
    separator = argv.index("--")
    assert argv[separator + 1 :] == [
        "/usr/bin/setpriv",
        "--reuid=990",
        "--regid=980",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
        "spark-submit",
        "job.py",
    ]
    assert "--unshare-user" not in argv
    assert {"--unshare-pid", "--die-with-parent"} <= set(argv)


def test_without_an_account_the_server_user_is_mapped_in_a_user_namespace() -> None:
    argv = sandbox_argv(plan(account=None), ["spark-submit"])
    assert "--unshare-user" in argv
    assert "setpriv" not in " ".join(argv)
    assert argv[-2:] == ["--", "spark-submit"]


def test_software_is_read_only_data_read_write_and_the_attempt_bound_last() -> None:
    argv = sandbox_argv(plan(), ["x"])
    assert pairs(argv, "--ro-bind") == [("/usr", "/usr"), ("/opt/venv", "/opt/venv")]
    binds = pairs(argv, "--bind")
    assert binds == [("/data/lake", "/data/lake"), (f"{HOME}/apps/app-1/1",) * 2]
    assert argv[argv.index("--chdir") + 1] == f"{HOME}/apps/app-1/1"


def test_the_home_is_covered_only_where_a_bind_would_show_it() -> None:
    apart = sandbox_argv(plan(), ["x"])
    assert [apart[i + 1] for i, item in enumerate(apart) if item == "--tmpfs"] == ["/tmp"]

    inside = sandbox_argv(plan(read_write=[Bind("/srv")]), ["x"])
    tmpfs = [inside[i + 1] for i, item in enumerate(inside) if item == "--tmpfs"]
    assert tmpfs == ["/tmp", HOME]
    assert inside.index(HOME) < inside.index(f"{HOME}/apps/app-1/1")


def test_parents_of_a_bind_are_made_traversable() -> None:
    argv = sandbox_argv(plan(read_only=[Bind("/root/.m2/repository")]), ["x"])
    made = [
        argv[i + 3] for i, item in enumerate(argv) if item == "--perms" and argv[i + 2] == "--dir"
    ]
    assert "/root" in made
    assert "/root/.m2" in made
    assert argv[argv.index("/root") - 2 : argv.index("/root")] == ["0755", "--dir"]


def test_account_names_are_derived_short_and_distinct() -> None:
    names = candidate_names("sj-", "Alice Smith (payments)")
    assert names[0].startswith("sj-alice-smith-")
    assert names[1] == f"{names[0]}-2"
    assert all(len(name) <= 32 for name in names)
    assert candidate_names("sj-", "alice")[0] != candidate_names("sj-", "Alice")[0]
    assert candidate_names("sj-", "Ω")[0].startswith("sj-")
