"""The email sender: a notice as a plain-text message over SMTP (TLS, STARTTLS or none), with
the reasons a person can act on when the server cannot be reached, refuses the login, the sender
or the recipients; never quoting a password.
"""

from __future__ import annotations

import smtplib
import ssl
from collections.abc import Mapping
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

from streamjobs.domain.notices import Notice
from streamjobs.notify.layouts import plain_text
from streamjobs.notify.sending import (
    DEFAULT_TIMEOUT_SECONDS,
    DELIVERY_HEADER,
    DeliveryFailed,
    answer_text,
    failure_reason,
    secret_value,
    smtp_answer,
)
from streamjobs.store.destinations import DestinationRecord


class EmailSender:
    """Sends a plain-text email over SMTP: TLS from the start, STARTTLS, or none; logs in when
    the destination has a user. ``tls_context`` decides which certificates are trusted (the
    system's by default)."""

    def __init__(
        self,
        *,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        tls_context: ssl.SSLContext | None = None,
    ) -> None:
        self._timeout = timeout_seconds
        self._tls_context = tls_context

    def send(
        self,
        destination: DestinationRecord,
        notice: Notice,
        secrets: Mapping[str, str],
        *,
        delivery_id: int | None = None,
    ) -> int | None:
        config = destination.config
        host, port, security = str(config["host"]), int(config["port"]), config["security"]
        user = config.get("user")
        password = secret_value(destination, "passwordSecret", secrets) if user else None
        message = _email(config, notice, delivery_id)
        where = f"{host}:{port}"
        context = self._tls_context or ssl.create_default_context()
        try:
            smtp = self._connect(host, port, security, context)
        except TimeoutError:
            raise DeliveryFailed(
                f"could not connect to {where}: no answer within {self._timeout:g} s", field="host"
            ) from None
        except (OSError, smtplib.SMTPException) as error:
            raise DeliveryFailed(
                f"could not connect to {where}: {failure_reason(error)}", field="host"
            ) from None
        try:
            with smtp:
                if security == "starttls":
                    smtp.starttls(context=context)
                if user and password is not None:
                    smtp.login(user, password)
                smtp.send_message(message)
        except smtplib.SMTPNotSupportedError as error:
            raise DeliveryFailed(f"{where}: {failure_reason(error)}", field="security") from None
        except UnicodeEncodeError:  # smtplib's login takes ASCII only; its text quotes a character
            raise _not_ascii_login(config, where) from None
        except smtplib.SMTPAuthenticationError as error:
            raise DeliveryFailed(
                f"{where} refused the login of {user!r}: {smtp_answer(error)}", field="user"
            ) from None
        except smtplib.SMTPRecipientsRefused as error:
            refused = ", ".join(
                f"{address} ({answer_text(code, text)})"
                for address, (code, text) in error.recipients.items()
            )
            raise DeliveryFailed(
                f"{where} refused every recipient: {refused}", field="to"
            ) from None
        except smtplib.SMTPSenderRefused as error:
            raise DeliveryFailed(
                f"{where} refused the sender {error.sender}: {smtp_answer(error)}", field="from"
            ) from None
        except ssl.SSLError as error:
            raise DeliveryFailed(
                f"TLS with {where} failed: {failure_reason(error)}", field="security"
            ) from None
        except TimeoutError:
            raise DeliveryFailed(
                f"{where} stopped answering for {self._timeout:g} s", field="host"
            ) from None
        except (OSError, smtplib.SMTPException) as error:
            raise DeliveryFailed(f"{where}: {failure_reason(error)}", field="host") from None
        return None

    def _connect(
        self, host: str, port: int, security: str, context: ssl.SSLContext
    ) -> smtplib.SMTP:
        if security == "tls":
            return smtplib.SMTP_SSL(host, port, timeout=self._timeout, context=context)
        return smtplib.SMTP(host, port, timeout=self._timeout)


def _not_ascii_login(config: Mapping[str, Any], where: str) -> DeliveryFailed:
    """Why a login could not even be written: the user or the password is not ASCII (without
    quoting the password, not even one of its characters)."""
    user = str(config["user"])
    if not user.isascii():
        return DeliveryFailed(
            f"{where}: cannot log in as {user!r}: an SMTP login takes ASCII characters only",
            field="user",
        )
    return DeliveryFailed(
        f"{where}: cannot log in as {user!r}: the password in secret "
        f"{config['passwordSecret']!r} holds characters other than ASCII, which an SMTP login "
        "cannot carry",
        field="passwordSecret",
    )


def _email(config: Mapping[str, Any], notice: Notice, delivery_id: int | None) -> EmailMessage:
    message = EmailMessage()
    message["Subject"] = notice.title
    message["From"] = config["from"]
    message["To"] = ", ".join(config["to"])
    message["Date"] = formatdate(notice.at.timestamp(), usegmt=True)
    domain = str(config["from"]).rpartition("@")[2] or None
    message["Message-ID"] = make_msgid("streamjobs", domain=domain)
    if delivery_id is not None:
        message[DELIVERY_HEADER] = str(delivery_id)
    message.set_content(plain_text(notice))
    return message
