"""The rules a named secret follows, and where a job names secrets.

A secret belongs to a resource bundle and is named like a DNS label, so its name can go into
URLs, file names and environment variable names unchanged. Its value is text the server keeps
encrypted and hands only to the drivers of that bundle's jobs, at launch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from streamjobs.domain.connections import Connection
from streamjobs.domain.control_characters import text_error
from streamjobs.domain.errors import FieldError
from streamjobs.domain.manifest import StreamingJob

MAX_NAME_LENGTH = 63
MAX_VALUE_BYTES = 64 * 1024
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def name_errors(name: str, *, path: str = "name") -> list[FieldError]:
    """What is wrong with ``name`` as a secret name (nothing when it is fine)."""
    if not name:
        return [FieldError(path, "give the secret a name")]
    if len(name) > MAX_NAME_LENGTH:
        return [FieldError(path, f"must be at most {MAX_NAME_LENGTH} characters")]
    if not _NAME.fullmatch(name):
        return [
            FieldError(
                path,
                f"{name!r} is not a secret name: use lowercase letters, digits and '-', "
                "starting and ending with a letter or digit (e.g. 'warehouse-db-password')",
            )
        ]
    return []


def value_errors(value: str, *, path: str = "value") -> list[FieldError]:
    """What is wrong with ``value`` as a secret's value; the message never quotes it."""
    if not value:
        return [FieldError(path, "must not be empty")]
    control = text_error(value, path=path, multi_line=True)
    if control is not None:
        return [control]
    size = len(value.encode("utf-8"))
    if size > MAX_VALUE_BYTES:
        return [FieldError(path, f"is {size} bytes; at most {MAX_VALUE_BYTES} are kept")]
    return []


@dataclass(frozen=True)
class SecretUse:
    """One place a job names a secret: ``path`` is the manifest field, ``target`` what gets the
    value there (an environment variable, a Spark setting, a connection option)."""

    path: str
    target: str
    secret: str


def env_secret_uses(job: StreamingJob) -> list[SecretUse]:
    """The job's ``envSecrets``: environment variable -> secret."""
    return [
        SecretUse(f"spec.configuration.envSecrets.{variable}", variable, secret)
        for variable, secret in job.spec.configuration.env_secrets.items()
    ]


def spark_conf_secret_uses(job: StreamingJob) -> list[SecretUse]:
    """The job's ``sparkConfSecrets``: Spark setting -> secret."""
    return [
        SecretUse(f'spec.configuration.sparkConfSecrets["{key}"]', key, secret)
        for key, secret in job.spec.configuration.spark_conf_secrets.items()
    ]


def connection_secret_uses(connections: Iterable[Connection]) -> list[SecretUse]:
    """The ``secretOptions`` of the connections a job uses: option -> secret."""
    return [
        SecretUse(
            f'connection {connection.metadata.name!r} spec.secretOptions["{option}"]',
            option,
            secret,
        )
        for connection in connections
        for option, secret in connection.spec.secret_options.items()
    ]
