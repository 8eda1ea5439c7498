"""How a notice reads in each medium: a plain-text email body and a Slack message.

The content is the ``Notice`` (``domain.notices``); only its layout differs between media, so
what a webhook receives as JSON, an email says in lines and Slack shows in blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streamjobs.domain.notices import Notice

SLACK_HEADER_LIMIT = 150
SLACK_TEXT_LIMIT = 3000
SLACK_FIELD_LIMIT = 2000
SLACK_FIELDS_PER_SECTION = 10
"""Slack's limits on a header's text, a section's text and its fields."""


def facts(notice: Notice) -> list[tuple[str, str]]:
    """The notice's labelled facts, in reading order, those it has only."""
    pairs = [
        ("Job", notice.job),
        ("Event", str(notice.event)),
        ("Rule", notice.rule),
        ("Bundle", notice.bundle),
        ("Namespace", notice.namespace),
        ("Application", notice.application_id),
        ("Attempt", None if notice.attempt is None else str(notice.attempt)),
        ("At", notice.at.isoformat()),
    ]
    return [(label, value) for label, value in pairs if value]


def plain_text(notice: Notice) -> str:
    """The body of an email: the message, the facts, the figures and the link, one a line."""
    lines = [notice.message, ""]
    lines += [f"{label}: {value}" for label, value in facts(notice)]
    if notice.figures:
        lines += ["", "Figures:"]
        lines += [f"  {key}: {_figure(value)}" for key, value in sorted(notice.figures.items())]
    if notice.link:
        lines += ["", f"Open: {notice.link}"]
    lines += ["", "-- ", "sent by streamjobs"]
    return "\n".join(lines) + "\n"


def slack_body(notice: Notice) -> dict[str, Any]:
    """A message Slack's incoming webhooks accept: ``text`` (the notification's fallback) and
    ``blocks`` (a header, the message, the facts as fields, the figures, the link)."""
    blocks: list[dict[str, Any]] = [
        {
            "type": "header",
            "text": {"type": "plain_text", "text": _cut(notice.title, SLACK_HEADER_LIMIT)},
        },
        {"type": "section", "text": _mrkdwn(notice.message, SLACK_TEXT_LIMIT)},
    ]
    fields = [_mrkdwn(f"*{label}*\n{value}", SLACK_FIELD_LIMIT) for label, value in facts(notice)]
    if fields:
        blocks.append({"type": "section", "fields": fields[:SLACK_FIELDS_PER_SECTION]})
    if notice.figures:
        figures = "\n".join(
            f"{key}: {_figure(value)}" for key, value in sorted(notice.figures.items())
        )
        blocks.append({"type": "section", "text": _mrkdwn(f"```{figures}```", SLACK_TEXT_LIMIT)})
    if notice.link and "://" in notice.link:
        link = f"<{notice.link.replace('|', '%7C')}|Open the application>"
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": link}]})
    return {"text": _cut(f"{notice.title}: {notice.message}", SLACK_TEXT_LIMIT), "blocks": blocks}


def _mrkdwn(text: str, limit: int) -> dict[str, str]:
    return {"type": "mrkdwn", "text": _cut(_escaped(text), limit)}


def _escaped(text: str) -> str:
    """Slack's mrkdwn escapes: only ``&``, ``<`` and ``>``."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _figure(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{key}={_figure(item)}" for key, item in value.items())
    return str(value)
