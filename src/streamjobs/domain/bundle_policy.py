"""What a bundle may be given as data roots and as its Spark setting policy.

A bundle's data roots are where its jobs' paths, datasets and checkpoints may live; its Spark
setting policy lists settings its jobs may set although they are restricted by default
(``allowed``) and settings they may not set beyond those refused everywhere (``refused``). The
rules are checked when someone sets them and when the server seeds the ``default`` bundle's
roots at start; roots are kept in one normal form (``domain.locations``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.locations import (
    LocationError,
    is_filesystem_root,
    is_within,
    normalized_uri,
    overlaps,
)

MAX_DATA_ROOTS = 100
MAX_ROOT_LENGTH = 2000
MAX_SPARK_CONF_ENTRIES = 200
MAX_SPARK_KEY_LENGTH = 255

_SPARK_SETTING = re.compile(r"spark(\.[A-Za-z0-9_\-/]+)+")
_SPARK_PREFIX = re.compile(r"spark(\.[A-Za-z0-9_\-/]+)*\.\*")
SPARK_CONF_RULE = "is neither a Spark setting (spark.…) nor a prefix pattern (spark.hadoop.*)"


@dataclass(frozen=True)
class SparkConfPolicy:
    """A bundle's exceptions to the Spark settings its jobs may set: each entry a setting name
    or a ``prefix.*`` pattern."""

    allowed: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()


def checked_data_roots(
    roots: Sequence[str], *, protected: Sequence[str], path: str = "dataRoots"
) -> tuple[str, ...]:
    """``roots`` in normal form; ``InvalidInput`` at ``dataRoots[N]`` for each that is not an
    absolute path or URI, is a whole file system, lies inside or holds a ``protected`` root (the
    server's home), or repeats an earlier one."""
    errors = []
    if len(roots) > MAX_DATA_ROOTS:
        errors.append(FieldError(path, f"at most {MAX_DATA_ROOTS} data roots"))
    normal: list[str] = []
    for index, root in enumerate(roots):
        where = f"{path}[{index}]"
        problem = data_root_problem(root, protected=protected)
        if problem is not None:
            errors.append(FieldError(where, problem))
            continue
        uri = normalized_uri(root)
        if uri in normal:
            errors.append(FieldError(where, f"repeats {path}[{normal.index(uri)}] ({uri})"))
        normal.append(uri)
    if errors:
        raise InvalidInput(errors)
    return tuple(normal)


def data_root_problem(root: str, *, protected: Sequence[str]) -> str | None:
    """Why ``root`` cannot be a data root, or None if it can."""
    if len(root) > MAX_ROOT_LENGTH:
        return f"at most {MAX_ROOT_LENGTH} characters"
    try:
        uri = normalized_uri(root)
    except LocationError as error:
        return str(error)
    if "://" not in uri or is_filesystem_root(uri):
        return f"{root!r} is a whole file system; name a directory (or a bucket) in it"
    if any(ord(character) < 32 for character in uri):
        return f"{root!r} holds a control character"
    if "?" in uri or "#" in uri:
        return f"{root!r} holds a query or a fragment; a data root is a plain location"
    for server_root in protected:
        if overlaps(uri, server_root):
            where = "inside" if is_within(uri, server_root) else "holds"
            return f"{root!r} {where} the server's home ({server_root}), which no job may reach"
    return None


def checked_spark_conf_policy(
    allowed: Sequence[str], refused: Sequence[str], *, path: str = "sparkConf"
) -> SparkConfPolicy:
    """The policy, each entry stripped of surrounding spaces; ``InvalidInput`` at
    ``sparkConf.allowed[N]`` / ``sparkConf.refused[N]`` for an entry that is neither a Spark
    setting nor a prefix pattern, one repeated in its list, or one both allowed and refused."""
    errors: list[FieldError] = []
    lists: dict[str, list[str]] = {"allowed": [], "refused": []}
    for name, entries in (("allowed", allowed), ("refused", refused)):
        if len(entries) > MAX_SPARK_CONF_ENTRIES:
            errors.append(FieldError(f"{path}.{name}", f"at most {MAX_SPARK_CONF_ENTRIES} entries"))
        for index, entry in enumerate(entries):
            where, key = f"{path}.{name}[{index}]", entry.strip()
            if len(key) > MAX_SPARK_KEY_LENGTH or not is_spark_conf_entry(key):
                errors.append(FieldError(where, f"{entry!r} {SPARK_CONF_RULE}"))
            elif key in lists[name]:
                errors.append(FieldError(where, f"repeats {path}.{name}[{lists[name].index(key)}]"))
            elif name == "refused" and key in lists["allowed"]:
                at = lists["allowed"].index(key)
                errors.append(FieldError(where, f"{key!r} is also allowed ({path}.allowed[{at}])"))
            lists[name].append(key)
    if errors:
        raise InvalidInput(errors)
    return SparkConfPolicy(allowed=tuple(lists["allowed"]), refused=tuple(lists["refused"]))


def is_spark_conf_entry(entry: str) -> bool:
    """Whether ``entry`` is a Spark setting name (``spark.x.y``) or a prefix pattern
    (``spark.x.*``)."""
    return bool(_SPARK_SETTING.fullmatch(entry) or _SPARK_PREFIX.fullmatch(entry))


def spark_conf_entry_matches(entry: str, key: str) -> bool:
    """Whether the policy entry (a setting name or a ``prefix.*`` pattern) covers ``key``."""
    if entry.endswith(".*"):
        return key.startswith(entry[:-1])
    return key == entry
