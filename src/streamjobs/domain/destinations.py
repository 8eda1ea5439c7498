"""Notification destinations: where a job's notices go (an SMTP mailbox, a webhook, a Slack
channel), defined once, apart from jobs, which name them in ``spec.notifications``.

A ``NotificationDestination`` manifest holds addresses, never credentials: an SMTP password, a
webhook's signing key, a header that authenticates and a Slack incoming-webhook URL (itself a
credential) are given as names of secrets of ``spec.bundle``, resolved only when a notice is
sent. ``parse_destination`` checks one manifest (field rules, then the rules of its type) and
reports every broken rule at its field path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import AfterValidator, Field
from pydantic.json_schema import DEFAULT_REF_TEMPLATE

from streamjobs.domain.control_characters import refuse_control_characters
from streamjobs.domain.errors import FieldError, InvalidInput
from streamjobs.domain.formats import DnsLabel, ReferenceName, Syntax, TagKey, TagValue
from streamjobs.domain.manifest_model import ManifestModel
from streamjobs.domain.validation import format_path, validated

KIND = "NotificationDestination"
DESTINATION_MULTI_LINE = (("metadata", "description"),)
"""The NotificationDestination fields that may span lines."""


class DestinationType(StrEnum):
    """How a destination carries a notice."""

    EMAIL = "email"
    WEBHOOK = "webhook"
    SLACK = "slack"


class SmtpSecurity(StrEnum):
    """How the connection to an SMTP server is protected."""

    NONE = "none"
    """Plain text (a relay on the same host or network only)."""
    STARTTLS = "starttls"
    """Plain connection upgraded with STARTTLS (usually port 587)."""
    TLS = "tls"
    """TLS from the first byte (SMTPS, usually port 465)."""


DestinationName = Annotated[
    str,
    Syntax(
        "destination name",
        r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
        "1-63 lowercase letters, digits or '-', starting and ending with a letter or digit "
        "(jobs name it in spec.notifications[].destination)",
    ),
]
HostName = Annotated[
    str,
    Syntax(
        "host name",
        r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_]([A-Za-z0-9_.-]{0,251}[A-Za-z0-9_])?)$",
        "a DNS name or an IP address, e.g. 'smtp.example.com' or '127.0.0.1'",
    ),
]
EmailAddress = Annotated[
    str,
    Syntax(
        "email address",
        r"^[^@\s<>,;\"]{1,64}@[A-Za-z0-9_.\[\]:-]{1,253}$",
        "one address, e.g. 'ops@example.com' (no display name)",
    ),
]
HeaderName = Annotated[
    str,
    Syntax(
        "HTTP header name",
        r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$",
        "letters, digits and !#$%&'*+-.^_`|~, e.g. 'X-Team'",
    ),
]

HeaderValue = Annotated[
    str,
    Syntax(
        "HTTP header value",
        r"^[\x20-\x7e\t]{0,4096}$",
        "at most 4096 printable ASCII characters, spaces and tabs",
    ),
]


def _web_url(value: str) -> str:
    """An http or https URL with a host and no credentials in it."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{value[:60]!r} is not an http or https URL, e.g. 'https://hooks.example.com/alerts'"
        )
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "must not hold a user or password, since manifests are not secret; sign the body "
            "with signingSecret or send a credential header with headerSecrets"
        )
    for key, _ in parse_qsl(parts.query, keep_blank_values=True):
        if _CREDENTIAL_NAME.search(key):
            raise ValueError(
                f"its query parameter {key!r} looks like a credential, and manifests are not "
                "secret; send it in a header with headerSecrets"
            )
    try:
        _ = parts.port
    except ValueError as error:
        raise ValueError(f"{value[:60]!r} has a bad port: {error}") from None
    return value


WebUrl = Annotated[str, AfterValidator(_web_url), Field(max_length=2048)]

_CREDENTIAL_NAME = re.compile(
    r"auth|token|secret|password|passwd|api[-_]?key|cookie|session|credential|signature",
    re.IGNORECASE,
)
"""A header (or query parameter) whose name holds one of these carries a credential."""
RESERVED_HEADERS = frozenset(
    {
        "content-type",
        "content-length",
        "host",
        "user-agent",
        "x-streamjobs-signature",
        "x-streamjobs-delivery",
        "x-streamjobs-event",
    }
)
"""Headers the webhook sender sets itself; a destination may not set them."""


class DestinationMetadata(ManifestModel):
    """Who the destination is: its name (which jobs use in spec.notifications) and description."""

    name: DestinationName
    description: str | None = Field(default=None, max_length=4096)
    namespace: DnsLabel = "default"
    tags: dict[TagKey, TagValue] = Field(default_factory=dict)


class DestinationSpec(ManifestModel):
    """Where notices go and how; which fields apply depends on ``type``."""

    type: DestinationType
    bundle: ReferenceName = "default"
    """The bundle whose secrets the secret names below are resolved in."""
    host: HostName | None = None
    """email only, and required there: the SMTP server."""
    port: int | None = Field(default=None, ge=1, le=65535)
    """email only: the SMTP server's port (default 587 for starttls, 465 for tls, 25 for none)."""
    security: SmtpSecurity | None = None
    """email only: starttls (the default), tls or none."""
    user: ReferenceName | None = None
    """email only: the SMTP login; its password is the secret named by passwordSecret."""
    password_secret: ReferenceName | None = None
    """email only, with user: the name of the secret holding the SMTP password."""
    from_address: EmailAddress | None = Field(default=None, alias="from")
    """email only, and required there: the sender's address."""
    to: list[EmailAddress] | None = Field(default=None, max_length=100)
    """email only, and required there: the recipients' addresses."""
    url: WebUrl | None = None
    """webhook only, and required there: where the JSON body is POSTed."""
    signing_secret: ReferenceName | None = None
    """webhook only: the name of the secret whose value signs the body (HMAC-SHA256, in the
    X-Streamjobs-Signature header as ``sha256=<hex>``)."""
    headers: dict[HeaderName, HeaderValue] | None = None
    """webhook only: headers sent as given; a credential goes in headerSecrets."""
    header_secrets: dict[HeaderName, ReferenceName] | None = None
    """webhook only: header -> name of the secret holding its value (``Authorization``...)."""
    url_secret: ReferenceName | None = None
    """slack only, and required there: the name of the secret holding the incoming-webhook URL
    (the URL is itself a credential)."""


class NotificationDestination(ManifestModel):
    """A NotificationDestination manifest: one named place notices go to."""

    api_version: Literal["streamjobs.io/v1"]
    kind: Literal["NotificationDestination"]
    metadata: DestinationMetadata
    spec: DestinationSpec

    @property
    def name(self) -> str:
        """The destination's name (``metadata.name``)."""
        return self.metadata.name

    def config(self) -> dict[str, Any]:
        """The settings of its type, keyed as in the manifest, without ``type`` and ``bundle``
        (what the store keeps as a destination's ``config``); defaults filled in."""
        spec = self.spec.model_dump(by_alias=True, exclude_none=True, mode="json")
        spec.pop("type")
        spec.pop("bundle")
        if self.spec.type is DestinationType.EMAIL:
            security = self.spec.security or SmtpSecurity.STARTTLS
            spec["security"] = security.value
            spec.setdefault("port", DEFAULT_SMTP_PORTS[security])
        return spec

    def secret_names(self) -> tuple[str, ...]:
        """Every secret name the destination uses, once each, sorted."""
        spec = self.spec
        names = {spec.password_secret, spec.signing_secret, spec.url_secret}
        names.update((spec.header_secrets or {}).values())
        return tuple(sorted(name for name in names if name is not None))


DEFAULT_SMTP_PORTS = {SmtpSecurity.NONE: 25, SmtpSecurity.STARTTLS: 587, SmtpSecurity.TLS: 465}

_FIELDS_OF_TYPE: dict[DestinationType, frozenset[str]] = {
    DestinationType.EMAIL: frozenset(
        {"host", "port", "security", "user", "passwordSecret", "from", "to"}
    ),
    DestinationType.WEBHOOK: frozenset({"url", "signingSecret", "headers", "headerSecrets"}),
    DestinationType.SLACK: frozenset({"urlSecret"}),
}
_REQUIRED_OF_TYPE: dict[DestinationType, tuple[tuple[str, str], ...]] = {
    DestinationType.EMAIL: (
        ("host", "'smtp.example.com'"),
        ("from", "'streamjobs@example.com'"),
        ("to", "['ops@example.com']"),
    ),
    DestinationType.WEBHOOK: (("url", "'https://hooks.example.com/streamjobs'"),),
    DestinationType.SLACK: (("urlSecret", "'slack-ops-url' (a secret of the bundle)"),),
}


def parse_destination(
    document: Mapping[str, Any], *, source: str | None = None
) -> NotificationDestination:
    """Parse and check one NotificationDestination manifest, or raise ``InvalidInput`` listing
    every broken rule at its field path. ``source`` (a file name, say) prefixes the error."""
    refuse_control_characters(document, multi_line=DESTINATION_MULTI_LINE, source=source)
    destination = validated(NotificationDestination, document, source=source)
    errors = [*_type_errors(destination.spec), *_header_errors(destination.spec)]
    if errors:
        raise InvalidInput(errors, source=source)
    return destination


def destination_json_schema(ref_template: str = DEFAULT_REF_TEMPLATE) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the NotificationDestination manifest, for editors and the
    API (``ref_template`` places its definitions, e.g. in an OpenAPI document's components)."""
    schema = NotificationDestination.model_json_schema(by_alias=True, ref_template=ref_template)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": KIND,
    }


def destination_manifest(
    name: str,
    spec: Mapping[str, Any],
    *,
    description: str | None = None,
) -> dict[str, Any]:
    """The manifest document of a destination called ``name`` with ``spec`` (as the CLI's and
    the web form's flags give it); parse it with ``parse_destination``."""
    metadata: dict[str, Any] = {"name": name}
    if description:
        metadata["description"] = description
    return {
        "apiVersion": "streamjobs.io/v1",
        "kind": KIND,
        "metadata": metadata,
        "spec": dict(spec),
    }


def _type_errors(spec: DestinationSpec) -> Iterator[FieldError]:
    """The fields the type needs are there and no field of another type is."""
    given = {
        key
        for key, value in spec.model_dump(by_alias=True, exclude_none=True).items()
        if key not in ("type", "bundle")
    }
    for required, example in _REQUIRED_OF_TYPE[spec.type]:
        if required not in given:
            yield FieldError(
                f"spec.{required}", f"a {spec.type} destination needs {required}, e.g. {example}"
            )
    for key in sorted(given - _FIELDS_OF_TYPE[spec.type]):
        owner = next(kind for kind, fields in _FIELDS_OF_TYPE.items() if key in fields)
        yield FieldError(
            f"spec.{key}", f"{key} is for {owner} destinations only, not {spec.type}; remove it"
        )
    if spec.type is DestinationType.EMAIL:
        if spec.user is not None and spec.password_secret is None:
            yield FieldError(
                "spec.passwordSecret",
                "required with user: the name of the secret holding the password",
            )
        if spec.password_secret is not None and spec.user is None:
            yield FieldError("spec.user", "required with passwordSecret: the SMTP login")
        if spec.to is not None and not spec.to:
            yield FieldError("spec.to", "must list at least one address")


def _header_errors(spec: DestinationSpec) -> Iterator[FieldError]:
    """No header carries a credential in clear, none is one the sender sets, none is given twice."""
    headers = spec.headers or {}
    header_secrets = spec.header_secrets or {}
    for field, names in (("headers", headers), ("headerSecrets", header_secrets)):
        for name in names:
            path = format_path(("spec", field, name))
            if name.lower() in RESERVED_HEADERS:
                yield FieldError(path, f"{name} is set by streamjobs itself; remove it")
    for name, value in headers.items():
        if _CREDENTIAL_NAME.search(name) and value:
            yield FieldError(
                format_path(("spec", "headers", name)),
                "looks like a credential, and manifests are not secret: give it in "
                f"headerSecrets as a secret name, e.g. headerSecrets: {{{name}: <secret name>}}",
            )
    lowered = {name.lower() for name in headers}
    for name in header_secrets:
        if name.lower() in lowered:
            yield FieldError(
                format_path(("spec", "headerSecrets", name)),
                f"{name} is also in headers; give each header once",
            )
