"""One root error for everything streamjobs refuses on purpose.

Each error says what is wrong and where: a field path (``spec.pipeline.outputs[0].format``), a line,
or the name of the thing it concerns. The API maps these types to HTTP status codes in one place
(``streamjobs.api.errors``); the CLI maps them to exit codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    """One broken rule: ``path`` locates the field (empty for the whole document)."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class StreamjobsError(Exception):
    """Root of every error streamjobs raises on purpose."""

    title = "Request failed"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class InvalidInput(StreamjobsError):
    """The input breaks one or more rules; ``errors`` names each field and rule."""

    title = "Invalid input"

    def __init__(self, errors: Sequence[FieldError], *, source: str | None = None) -> None:
        self.errors = tuple(errors)
        self.source = source
        lines = [str(error) for error in self.errors]
        prefix = f"{source}: " if source else ""
        if len(lines) == 1:
            detail = prefix + lines[0]
        else:
            detail = prefix + f"{len(lines)} problems:\n" + "\n".join(f"  {line}" for line in lines)
        super().__init__(detail)


class NotFound(StreamjobsError):
    """The named thing does not exist (or the caller may not know that it does)."""

    title = "Not found"

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f"{kind} {name!r} does not exist")


class AlreadyExists(StreamjobsError):
    """A thing with this name already exists."""

    title = "Already exists"

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f"{kind} {name!r} already exists")


class Conflict(StreamjobsError):
    """The change cannot be made in the current state (e.g. someone else changed it first)."""

    title = "Conflict"


class FieldConflict(Conflict):
    """A conflict about fields of the input: ``errors`` names each field and what conflicts
    there (the API lists them as an invalid input's)."""

    def __init__(self, errors: Sequence[FieldError], *, prefix: str = "") -> None:
        self.errors = tuple(errors)
        lines = [str(error) for error in self.errors]
        if len(lines) == 1:
            detail = prefix + lines[0]
        else:
            detail = prefix + f"{len(lines)} problems:\n" + "\n".join(f"  {line}" for line in lines)
        super().__init__(detail)


class LocationTaken(FieldConflict):
    """Another job already writes, or checkpoints at, a location the input names; ``errors``
    names each field and the job (or "another job" when the caller may not see it)."""


class CannotRun(FieldConflict):
    """A Run (or Resume) refused because the job needs what is missing now: a secret its bundle
    lacks, a connection or node type that does not exist; ``errors`` names each field."""


class StaleVersion(Conflict):
    """A versioned change was based on a version that another change has since replaced."""


class Unauthenticated(StreamjobsError):
    """No valid credentials came with the request."""

    title = "Unauthenticated"


class Forbidden(StreamjobsError):
    """The caller is known but may not do this."""

    title = "Forbidden"


class TooManyAttempts(StreamjobsError):
    """Refused for now after too many failed attempts: ``retry_after_seconds`` says when to try
    again, or is None while a lockout waits for someone to lift it."""

    title = "Too many attempts"

    def __init__(self, detail: str, *, retry_after_seconds: int | None = None) -> None:
        super().__init__(detail)
        self.retry_after_seconds = retry_after_seconds


class StoreUnavailable(StreamjobsError):
    """The store cannot do this now (its disk is full, it is locked or read-only, its server
    is out of reach) and may again once the cause is gone: ``retry_after_seconds`` hints when."""

    title = "Store unavailable"

    def __init__(self, detail: str, *, retry_after_seconds: int) -> None:
        super().__init__(detail)
        self.retry_after_seconds = retry_after_seconds


class StoreUnusable(StreamjobsError):
    """The store found at start-up cannot be served as it is (an empty or foreign file, a schema
    from a newer version, a missing key): the detail says what the operator should do."""

    title = "Store unusable"
