"""Real receivers for notification tests: an SMTP server (aiosmtpd; plain, STARTTLS or TLS, with
or without a login) and an HTTP receiver (the standard library's ``http.server`` in a thread)
that keep what they received, a self-signed certificate to serve TLS with, and the manifests of
destinations that point at them.

Each receiver listens on 127.0.0.1 on a port of its own for the duration of a ``with`` block.
The HTTP receiver answers each request with the next status of its script (``status`` once the
script is spent), so a test decides when a destination is down and when it is back; it can hold
its answers until released, and ``distinct`` keeps what a receiver that drops repeats (by the
``X-Streamjobs-Delivery`` idempotency header) keeps. The SMTP receiver can ``refuse`` messages
with a temporary failure.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from streamjobs.domain.clock import Clock
from streamjobs.domain.destinations import destination_manifest, parse_destination
from streamjobs.launch.ports import free_loopback_port
from streamjobs.store import Store


@dataclass(frozen=True)
class Certificate:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key, as PEM files."""

    cert_file: Path
    key_file: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context

    def client_context(self) -> ssl.SSLContext:
        """A context that trusts this certificate only (and checks the host name)."""
        return ssl.create_default_context(cafile=str(self.cert_file))


def self_signed_certificate(directory: Path) -> Certificate:
    """Make a self-signed certificate for 127.0.0.1 and localhost in ``directory``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file = directory / "receiver-cert.pem"
    key_file = directory / "receiver-key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return Certificate(cert_file, key_file)


@dataclass
class ReceivedMail:
    sender: str
    recipients: list[str]
    message: EmailMessage
    login: str | None


@dataclass
class SmtpReceiver:
    """What the SMTP server received; ``port`` is where it listens. ``refuse`` makes it answer
    DATA with a temporary failure (and keep nothing)."""

    port: int
    messages: list[ReceivedMail] = field(default_factory=list)
    refuse: bool = False

    def subjects(self) -> list[str]:
        return [str(mail.message["Subject"]) for mail in self.messages]

    def texts(self) -> list[str]:
        return [str(mail.message.get_content()) for mail in self.messages]


class _Keeper:
    def __init__(self, receiver: SmtpReceiver) -> None:
        self._receiver = receiver

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:  # noqa: N802
        if self._receiver.refuse:
            return "451 4.3.0 try again later"
        content = cast(bytes, envelope.original_content or envelope.content)
        message = cast(EmailMessage, message_from_bytes(content, policy=policy.default))
        login = session.auth_data.login.decode() if session.auth_data else None
        self._receiver.messages.append(
            ReceivedMail(
                sender=str(envelope.mail_from),
                recipients=list(envelope.rcpt_tos),
                message=message,
                login=login,
            )
        )
        return "250 OK"


@contextmanager
def smtp_receiver(
    *,
    starttls: Certificate | None = None,
    implicit_tls: Certificate | None = None,
    logins: dict[str, str] | None = None,
) -> Iterator[SmtpReceiver]:
    """An SMTP server: plain, or offering STARTTLS (and then requiring it), or TLS from the
    first byte; with ``logins`` (user -> password) it requires one of them."""
    receiver = SmtpReceiver(port=free_loopback_port())
    parameters: dict[str, Any] = {}
    if starttls is not None:
        parameters.update(tls_context=starttls.server_context(), require_starttls=True)
    if logins is not None:

        def authenticate(
            server: Any, session: Any, envelope: Any, mechanism: str, data: Any
        ) -> AuthResult:
            if isinstance(data, LoginPassword) and (
                logins.get(data.login.decode()) == data.password.decode()
            ):
                return AuthResult(success=True, auth_data=data)
            return AuthResult(success=False, handled=False)

        parameters.update(
            authenticator=authenticate,
            auth_required=True,
            auth_require_tls=starttls is not None or implicit_tls is not None,
        )
    controller = Controller(
        _Keeper(receiver),
        hostname="127.0.0.1",
        port=receiver.port,
        ssl_context=implicit_tls.server_context() if implicit_tls else None,
        server_hostname="localhost",
        **parameters,
    )
    controller.start()
    try:
        yield receiver
    finally:
        controller.stop()


@dataclass(frozen=True)
class ReceivedRequest:
    """One POST the HTTP receiver got; ``headers`` by lower-case name, ``body`` as sent."""

    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"{}")

    @property
    def delivery(self) -> str:
        return self.headers["x-streamjobs-delivery"]


@dataclass
class HttpReceiver:
    """What the HTTP receiver got. Each POST is answered with the next status of ``script``
    (see ``answer``), else ``status``, and with ``reply`` as the body; while ``held`` is set,
    answers wait for ``released``."""

    port: int
    status: int = 200
    reply: bytes = b"ok"
    requests: list[ReceivedRequest] = field(default_factory=list)
    answered: list[int] = field(default_factory=list)
    """The status each request was answered with, in order."""
    script: list[int] = field(default_factory=list)
    held: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def answer(self, *statuses: int) -> None:
        """Answer the next requests with these statuses, in order (then ``status`` again)."""
        with self._lock:
            self.script = list(statuses)

    def record(self, request: ReceivedRequest) -> int:
        """Keep ``request``; the status to answer it with."""
        with self._lock:
            self.requests.append(request)
            status = self.script.pop(0) if self.script else self.status
            self.answered.append(status)
            return status

    def bodies(self) -> list[Any]:
        """The JSON bodies of the requests, in order."""
        return [request.json() for request in self.requests]

    def distinct(self) -> list[Any]:
        """The bodies of the requests a receiver that drops repeats (same delivery id) keeps."""
        seen: set[str] = set()
        kept = []
        for request in self.requests:
            if request.delivery not in seen:
                seen.add(request.delivery)
                kept.append(request.json())
        return kept


@contextmanager
def http_receiver(status: int = 200, reply: bytes = b"ok") -> Iterator[HttpReceiver]:
    """An HTTP server on 127.0.0.1 that keeps every POST and answers ``status`` with ``reply``
    (or the statuses its script says)."""
    receiver = HttpReceiver(port=0, status=status, reply=reply)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            headers = {key.lower(): value for key, value in self.headers.items()}
            status = receiver.record(ReceivedRequest(self.path, headers, body))
            if receiver.held.is_set():
                receiver.released.wait(60)
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(receiver.reply)))
                self.end_headers()
                self.wfile.write(receiver.reply)
            except OSError:  # the sender is gone (killed while it waited)
                return

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the tests look at what was received."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def email_spec(port: int, **extra: Any) -> dict[str, Any]:
    """The spec of an email destination for the SMTP receiver (no TLS on loopback)."""
    return {
        "type": "email",
        "host": "127.0.0.1",
        "port": port,
        "security": "none",
        "from": "streamjobs@example.com",
        "to": ["ops@example.com"],
        **extra,
    }


def email_destination(name: str, port: int, **extra: Any) -> dict[str, Any]:
    """A NotificationDestination manifest for the SMTP receiver."""
    return destination_manifest(name, email_spec(port, **extra))


def webhook_destination(name: str, url: str, **spec: Any) -> dict[str, Any]:
    """A NotificationDestination manifest for the HTTP receiver."""
    return destination_manifest(name, {"type": "webhook", "url": url, **spec})


def add_destination(store: Store, clock: Clock, manifest: dict[str, Any]) -> None:
    """Store the destination as the destination service would (its parsed config)."""
    parsed = parse_destination(manifest)
    with store.transaction() as repos:
        repos.destinations.add(
            name=parsed.name,
            kind=str(parsed.spec.type),
            bundle=parsed.spec.bundle,
            description=None,
            manifest=manifest,
            config=parsed.config(),
            secret_names=parsed.secret_names(),
            actor="alice",
            at=clock.now(),
        )
