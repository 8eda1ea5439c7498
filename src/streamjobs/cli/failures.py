"""Turns errors into what a shell expects: a message on stderr and exit 2 (bad input) or 1."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from pydantic import ValidationError
from rich.text import Text

from streamjobs.cli.output import console
from streamjobs.client import ClientError
from streamjobs.domain.errors import InvalidInput, StreamjobsError
from streamjobs.settings import ENV_PREFIX

EXIT_FAILED = 1
EXIT_INVALID_INPUT = 2


def fail(message: str, *, code: int = EXIT_FAILED) -> typer.Exit:
    console(stderr=True).print(Text("error: ", style="red") + Text(message))
    return typer.Exit(code)


@contextmanager
def reported_failures(context: str | None = None) -> Iterator[None]:
    """Report a failure inside the block and exit with its code; ``context`` prefixes it."""
    prefix = f"{context}: " if context else ""
    try:
        yield
    except InvalidInput as error:
        raise fail(prefix + error.detail, code=EXIT_INVALID_INPUT) from None
    except ClientError as error:
        detail = str(error)
        fields = error.field_errors
        if fields and len(fields) > 1:
            detail = "\n".join(["the server refused it:", *(f"  {line}" for line in fields)])
        code = EXIT_INVALID_INPUT if error.is_invalid_input else EXIT_FAILED
        raise fail(prefix + detail, code=code) from None
    except StreamjobsError as error:
        raise fail(prefix + error.detail) from None


def report_bad_settings(error: ValidationError) -> int:
    """Say which ``STREAMJOBS_*`` variables are wrong, and how; the exit code (bad input)."""
    for problem in error.errors():
        name = ENV_PREFIX + "_".join(str(part) for part in problem["loc"]).upper()
        message = problem["msg"].removeprefix("Value error, ")
        console(stderr=True).print(Text("error: ", style="red") + Text(f"{name}: {message}"))
    return EXIT_INVALID_INPUT
