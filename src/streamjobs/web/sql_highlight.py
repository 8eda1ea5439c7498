"""Spark SQL shown with its keywords, strings, numbers and comments marked, rendered on the server.

A job's Details tab shows each pipeline step's SQL highlighted without a JavaScript library: a
small tokenizer splits the text into words, quoted strings, backquoted names, numbers and comments,
and each kind but plain text becomes ``<span class="sql-…">``. The text itself is never changed
(joining the tokens gives it back), and everything is escaped, so a step's SQL cannot inject markup.
Unfinished strings and comments run to the end of the text, as Spark would read them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from markupsafe import Markup, escape

_KEYWORD_LIST = """
    ADD ALL ALTER AND ANTI ANY ARRAY AS ASC BETWEEN BOTH BY CASE CAST CLUSTER COLLATE CREATE
    CROSS CUBE DELETE DESC DISTINCT DISTRIBUTE DROP ELSE END ESCAPE EXCEPT EXISTS EXPLAIN FALSE
    FILTER FOLLOWING FOR FROM FULL FUNCTION GROUP GROUPING HAVING IF IGNORE ILIKE IN INNER INSERT
    INTERSECT INTERVAL INTO IS JOIN LATERAL LEADING LEFT LIKE LIMIT MINUS NATURAL NOT NULL NULLS
    OF OFFSET ON OR ORDER OUTER OVER OVERWRITE PARTITION PIVOT PRECEDING QUALIFY RANGE REPLACE
    RIGHT RLIKE ROLLUP ROW ROWS SELECT SEMI SET SETS SORT TABLE TABLESAMPLE TEMPORARY THEN TO
    TRAILING TRUE TRY_CAST UNBOUNDED UNION UNKNOWN UNPIVOT UPDATE USING VALUES VIEW WATERMARK
    WHEN WHERE WINDOW WITH
"""
KEYWORDS = frozenset(_KEYWORD_LIST.split())
"""Spark SQL's keywords, always marked (compared in upper case)."""
_CONTEXT_WORD_LIST = """
    BIGINT BINARY BOOLEAN CHAR DATE DECIMAL DOUBLE FLOAT INT INTEGER LONG MAP SMALLINT STRING
    STRUCT TIMESTAMP TIMESTAMP_NTZ TINYINT VARCHAR
    DAY DAYS HOUR HOURS MINUTE MINUTES SECOND SECONDS MONTH MONTHS WEEK WEEKS YEAR YEARS
"""
CONTEXT_WORDS = frozenset(_CONTEXT_WORD_LIST.split())
"""Type names and time units, often column names too (``timestamp``, ``day``): marked only
after ``AS`` or a literal (``CAST(x AS STRING)``, ``INTERVAL 1 HOUR``) or before a string
(``TIMESTAMP '2026-01-01 00:00:00'``)."""
_LITERAL_KINDS = frozenset({"number", "string"})

_TOKENS = re.compile(
    r"""
    (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
    |(?P<string>'(?:\\.|''|[^'\\])*(?:'|\Z)|"(?:\\.|""|[^"\\])*(?:"|\Z))
    |(?P<name>`(?:``|[^`])*(?:`|\Z))
    |(?P<number>\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:BD|bd|[LSYDFlsydf])?\b)
    |(?P<word>[A-Za-z_][A-Za-z_0-9]*)
    |(?P<other>\s+|.)
    """,
    re.VERBOSE | re.DOTALL,
)
_CLASSES = {
    "comment": "sql-comment",
    "string": "sql-string",
    "name": "sql-name",
    "number": "sql-number",
    "keyword": "sql-keyword",
}


class SqlToken(NamedTuple):
    """One piece of the text and its kind: comment, string, name, number, keyword or text."""

    kind: str
    text: str


def tokens(sql: str) -> list[SqlToken]:
    """The text cut into tokens, in order; their texts joined give ``sql`` back exactly."""
    found = [SqlToken(match.lastgroup or "other", match.group()) for match in _TOKENS.finditer(sql)]
    significant = [index for index, token in enumerate(found) if token.text.strip()]
    for position, index in enumerate(significant):
        token = found[index]
        if token.kind == "word":
            before = found[significant[position - 1]] if position else None
            after = found[significant[position + 1]] if position + 1 < len(significant) else None
            found[index] = SqlToken(_word_kind(token.text, before, after), token.text)
    merged: list[SqlToken] = []
    for token in found:
        kind = "text" if token.kind in ("word", "other") else token.kind
        if merged and kind == "text" and merged[-1].kind == "text":
            merged[-1] = SqlToken("text", merged[-1].text + token.text)
        else:
            merged.append(SqlToken(kind, token.text))
    return merged


def _word_kind(word: str, before: SqlToken | None, after: SqlToken | None) -> str:
    """``keyword`` for a keyword, and for a type name or time unit where it is one; else text."""
    upper = word.upper()
    if upper in KEYWORDS:
        return "keyword"
    if upper not in CONTEXT_WORDS:
        return "text"
    after_as = before is not None and before.text.upper() == "AS"
    after_literal = before is not None and before.kind in _LITERAL_KINDS
    before_string = after is not None and after.kind == "string"
    return "keyword" if after_as or after_literal or before_string else "text"


def highlight(sql: str) -> Markup:
    """``sql`` as escaped HTML, each keyword, string, name, number and comment in a span whose
    class says which (``sql-keyword``…), for a ``<pre>``."""
    parts = []
    for token in tokens(sql):
        css_class = _CLASSES.get(token.kind)
        text = escape(token.text)
        parts.append(Markup(f'<span class="{css_class}">{text}</span>') if css_class else text)
    return Markup("").join(parts)
