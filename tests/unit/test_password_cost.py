"""The Argon2id cost setting: read as a hash's PHC string writes it, refused with what is wrong."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from streamjobs.domain.password_cost import DEFAULT_PASSWORD_COST, PasswordCost
from streamjobs.settings import Settings


def test_the_default_is_rfc_9106_s_low_memory_choice_and_not_weak() -> None:
    cost = PasswordCost.parse(DEFAULT_PASSWORD_COST)
    assert cost == PasswordCost(memory_kib=65536, passes=3, lanes=4)
    assert str(cost) == DEFAULT_PASSWORD_COST
    assert not cost.weak


@pytest.mark.parametrize(
    ("text", "weak"),
    [("m=19456,t=2,p=1", False), ("m=7168, t=5, p=1", False), ("t=4,p=1,m=7168", True)],
)
def test_owasp_s_settings_are_not_weak_and_less_is(text: str, weak: bool) -> None:
    assert PasswordCost.parse(text).weak is weak


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "is not m=<memory KiB>,t=<passes>,p=<lanes>"),
        ("m=65536,t=3", "lacks p"),
        ("m=65536,t=3,p=4,x=1", "'x=1'"),
        ("m=65536,t=3,p=4,p=2", "'p=2'"),
        ("m=64MiB,t=3,p=4", "'m=64MiB'"),
        ("m=65536,t=0,p=4", "t must be at least 1"),
        ("m=65536,t=3,p=0", "p from 1 to 255"),
        ("m=16,t=3,p=4", "at least 8 KiB per lane (32)"),
    ],
)
def test_a_cost_that_is_not_one_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)):
        PasswordCost.parse(text)


def test_the_setting_is_checked_and_written_the_one_way() -> None:
    assert Settings(password_cost=" t=2, m=19456, p=1").password_cost == "m=19456,t=2,p=1"
    with pytest.raises(ValidationError, match="lacks t, p"):
        Settings(password_cost="m=19456")
