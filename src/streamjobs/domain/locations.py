"""Data locations as comparable URIs: whether one lies under another, and what is refused.

A bundle's data roots, a job's paths, datasets and checkpoints, and the server's own home are
all compared here, in one normal form, so ``/tmp/x``, ``file:/tmp/x``, ``file:///tmp/x/`` and
``file:///tmp/y/../x`` are one place and ``/tmp/xy`` is not under ``/tmp/x``.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):(.*)", re.DOTALL)
_WINDOWS_DRIVE = re.compile(r"[A-Za-z]:[\\/]")


class LocationError(ValueError):
    """A location that is not a URI or absolute path streamjobs can compare."""


def normalized_uri(location: str) -> str:
    """``location`` as ``scheme://authority/path`` with ``.`` and ``..`` resolved and no
    trailing slash (``file:///`` for the root); plain absolute paths become ``file://`` URIs.

    ``LocationError`` for a relative path, an empty one, or one holding a NUL character.
    """
    text = location.strip()
    if not text or "\x00" in text:
        raise LocationError("must be an absolute path or a URI")
    match = _SCHEME.fullmatch(text)
    if match is None or _WINDOWS_DRIVE.match(text):
        if not text.startswith("/"):
            raise LocationError(f"{location!r} is a relative path; give an absolute path or URI")
        return "file://" + _normal_path(unquote(text))
    scheme, rest = match.group(1).lower(), match.group(2)
    if scheme in {"file", "local"}:
        path = rest.removeprefix("//") if rest.startswith("///") else rest
        if rest.startswith("//") and not rest.startswith("///"):
            authority, _, after = rest[2:].partition("/")
            if authority not in {"", "localhost"}:
                raise LocationError(f"{location!r} names another host; file URIs are local")
            path = "/" + after
        if not path.startswith("/"):
            raise LocationError(f"{location!r} is a relative path; give an absolute path or URI")
        return "file://" + _normal_path(unquote(path))
    if not rest.startswith("//"):
        raise LocationError(f"{location!r} is not a URI with an authority (scheme://host/path)")
    authority, _, path = rest[2:].partition("/")
    return f"{scheme}://{authority.lower()}{_normal_path('/' + path)}".rstrip("/") or scheme


def _normal_path(path: str) -> str:
    normal = posixpath.normpath(path)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return "/" if normal in {"/", "."} else normal.rstrip("/")


def is_within(location: str, root: str) -> bool:
    """Whether ``location`` is ``root`` or lies below it (both in any accepted form)."""
    inner, outer = normalized_uri(location), normalized_uri(root)
    if inner == outer:
        return True
    prefix = outer if outer.endswith("/") else outer + "/"
    return inner.startswith(prefix)


def overlaps(first: str, second: str) -> bool:
    """Whether one of the two locations lies within the other (or they are the same)."""
    return is_within(first, second) or is_within(second, first)


def is_filesystem_root(location: str) -> bool:
    """Whether ``location`` is ``/`` itself (``file:///``)."""
    return normalized_uri(location) == "file:///"


def local_path(location: str) -> str | None:
    """The local path of a ``file://`` location (or a plain absolute path), else None."""
    uri = normalized_uri(location)
    return uri.removeprefix("file://") if uri.startswith("file://") else None
