"""The Details tab's SQL highlighting: every kind of token marked, the text given back exactly,
markup in the SQL escaped, unfinished strings and comments running to the end."""

from __future__ import annotations

import pytest

from streamjobs.web.sql_highlight import highlight, tokens


def kinds(sql: str) -> list[tuple[str, str]]:
    return [(token.kind, token.text) for token in tokens(sql) if token.kind != "text"]


def test_keywords_strings_names_numbers_and_comments_are_marked() -> None:
    sql = "select `the id`, 'it''s' AS s, 10L, 2.5e3 -- done\nFROM t /* all */ WHERE x > 0"
    assert kinds(sql) == [
        ("keyword", "select"),
        ("name", "`the id`"),
        ("string", "'it''s'"),
        ("keyword", "AS"),
        ("number", "10L"),
        ("number", "2.5e3"),
        ("comment", "-- done"),
        ("keyword", "FROM"),
        ("comment", "/* all */"),
        ("keyword", "WHERE"),
        ("number", "0"),
    ]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM ticks WHERE value % 2 = 0",
        "SELECT 'unfinished",
        "SELECT 1 /* unfinished",
        'SELECT "a\\"b", `x``y` FROM t',
        "",
        "SELECT\tcol1_2, window(ts, '1 minute') FROM t GROUP BY 1",
        "ünïcode ✓ SELECT",
    ],
)
def test_the_tokens_give_the_text_back(sql: str) -> None:
    assert "".join(token.text for token in tokens(sql)) == sql


def test_words_that_only_contain_keywords_are_not_keywords() -> None:
    assert kinds("SELECT selected, from_ts, x1 FROM t") == [
        ("keyword", "SELECT"),
        ("keyword", "FROM"),
    ]


def test_unfinished_strings_and_comments_run_to_the_end() -> None:
    assert kinds("SELECT 'open FROM t") == [("keyword", "SELECT"), ("string", "'open FROM t")]
    assert kinds("SELECT /* open FROM t") == [("keyword", "SELECT"), ("comment", "/* open FROM t")]


def test_markup_in_the_sql_is_escaped() -> None:
    shown = str(highlight("SELECT '<script>alert(1)</script>' AS x -- </pre><b>"))
    assert "<script>" not in shown
    assert "<b>" not in shown
    assert "&lt;script&gt;" in shown
    assert shown.startswith('<span class="sql-keyword">SELECT</span>')
    assert '<span class="sql-comment">-- &lt;/pre&gt;&lt;b&gt;</span>' in shown


def test_type_names_and_time_units_are_keywords_only_where_they_are_ones() -> None:
    sql = (
        "SELECT timestamp, day, CAST(key AS STRING), ts + INTERVAL 1 HOUR,"
        " TIMESTAMP '2026-01-01 00:00:00' FROM ticks"
    )
    assert [text for kind, text in kinds(sql) if kind == "keyword"] == [
        "SELECT",
        "CAST",
        "AS",
        "STRING",
        "INTERVAL",
        "HOUR",
        "TIMESTAMP",
        "FROM",
    ]
