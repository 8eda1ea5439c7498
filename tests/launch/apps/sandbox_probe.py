"""A hostile driver program for sandbox tests: it reports who it runs as and what it can reach.

``sandbox_probe.py REPORT [--read PATH]... [--write PATH]... [--link PATH TARGET]...``: tries to
read and to write each path and to replace each ``--link`` path by a symbolic link to its target
(where the server would follow it), lists the processes it can see and its environment's
names, and writes what happened as
JSON to REPORT (a path the test reads afterwards). It never stops at a failure: every attempt is
recorded as "ok" or the error's name.
"""

import json
import os
import sys
from pathlib import Path


def attempt(action):
    try:
        action()
        return "ok"
    except OSError as error:
        return type(error).__name__


def relink(path, target):
    Path(path).unlink(missing_ok=True)
    os.symlink(target, path)


def main(arguments):
    report_path, rest = Path(arguments[0]), arguments[1:]
    reads = [rest[i + 1] for i, flag in enumerate(rest) if flag == "--read"]
    writes = [rest[i + 1] for i, flag in enumerate(rest) if flag == "--write"]
    links = [(rest[i + 1], rest[i + 2]) for i, flag in enumerate(rest) if flag == "--link"]
    report = {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "environment": sorted(os.environ),
        "pids": sorted(int(name) for name in os.listdir("/proc") if name.isdigit()),
        "reads": {path: attempt(lambda p=path: Path(p).read_bytes()) for path in reads},
        "writes": {path: attempt(lambda p=path: Path(p).write_text("probe")) for path in writes},
        "links": {path: attempt(lambda p=path, t=target: relink(p, t)) for path, target in links},
    }
    report_path.write_text(json.dumps(report), encoding="utf-8")
    print("sandbox_probe done", flush=True)


main(sys.argv[1:])
