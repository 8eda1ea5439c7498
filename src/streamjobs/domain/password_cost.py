"""How much work one password hash costs: the Argon2id parameters the operator chose.

Written as in a hash's own PHC string (``m=65536,t=3,p=4``: memory in KiB, passes, lanes), so
that what the setting says can be read off any stored hash. Hashes made with other parameters
are re-hashed with these at the user's next sign-in.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_PASSWORD_COST = "m=65536,t=3,p=4"
"""RFC 9106's second recommendation (64 MiB, 3 passes, 4 lanes), argon2-cffi's default."""

OWASP_MIN_MEMORY_PASSES_KIB = 7168 * 5
"""OWASP's weakest recommended Argon2id setting (7 MiB over 5 passes; 19 MiB over 2 passes is
about the same work): less than this memory times passes is weak against guessing."""


@dataclass(frozen=True)
class PasswordCost:
    memory_kib: int
    passes: int
    lanes: int

    @classmethod
    def parse(cls, text: str) -> PasswordCost:
        """The cost ``text`` (``m=<KiB>,t=<passes>,p=<lanes>``) names; ``ValueError`` saying what
        is wrong otherwise."""
        values: dict[str, int] = {}
        for part in text.replace(" ", "").split(","):
            key, _, value = part.partition("=")
            if key not in ("m", "t", "p") or key in values or not value.isdigit():
                raise ValueError(
                    f"{text!r} is not m=<memory KiB>,t=<passes>,p=<lanes> "
                    f"(for example {DEFAULT_PASSWORD_COST}): {part!r}"
                )
            values[key] = int(value)
        missing = [key for key in ("m", "t", "p") if key not in values]
        if missing:
            raise ValueError(f"{text!r} lacks {', '.join(missing)} (all of m, t and p are needed)")
        cost = cls(memory_kib=values["m"], passes=values["t"], lanes=values["p"])
        if not 1 <= cost.lanes <= 255 or cost.passes < 1:
            raise ValueError(f"{text!r}: t must be at least 1 and p from 1 to 255")
        if cost.memory_kib < 8 * cost.lanes:
            raise ValueError(f"{text!r}: m must be at least 8 KiB per lane ({8 * cost.lanes})")
        return cost

    @property
    def weak(self) -> bool:
        """Below OWASP's weakest recommended Argon2id setting."""
        return self.memory_kib * self.passes < OWASP_MIN_MEMORY_PASSES_KIB

    def __str__(self) -> str:
        return f"m={self.memory_kib},t={self.passes},p={self.lanes}"
