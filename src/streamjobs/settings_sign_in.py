"""The settings of signing in: how long a web session lasts, how failed sign-ins are slowed down
and locked out, what a password hash costs, and whose forwarded addresses are believed. Part of
``streamjobs.settings.Settings``, which inherits them."""

from __future__ import annotations

import ipaddress

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from streamjobs.domain.password_cost import DEFAULT_PASSWORD_COST, PasswordCost

ENV_PREFIX = "STREAMJOBS_"


class SignInSettings(BaseSettings):
    """Each from an environment variable STREAMJOBS_<NAME>."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    session_lifetime_seconds: float = Field(
        default=12 * 3600, gt=0, description="How long a web session lasts after sign-in."
    )
    session_idle_timeout_seconds: float = Field(
        default=2 * 3600,
        gt=0,
        description="A web session unused this long ends (its use is recorded to the minute, "
        "or to half this when that is shorter).",
    )
    sign_in_free_failures: int = Field(
        default=3,
        ge=0,
        description="Failed sign-ins to one account allowed before each further attempt "
        "must wait (a delay that doubles with every failure).",
    )
    sign_in_address_free_failures: int = Field(
        default=10,
        ge=0,
        description="The same, for failed sign-ins from one address (to any account).",
    )
    sign_in_base_delay_seconds: float = Field(
        default=1.0, gt=0, description="The first delay once the free failures are used up."
    )
    sign_in_max_delay_seconds: float = Field(
        default=900.0, gt=0, description="The longest delay between two attempts."
    )
    sign_in_lockout_failures: int = Field(
        default=10,
        ge=1,
        description="Failed sign-ins to one account that lock it until an admin unlocks it "
        "(tokens keep working).",
    )
    sign_in_failure_window_seconds: float = Field(
        default=3600.0,
        gt=0,
        description="Failures older than this (with none since) no longer count (and are "
        "forgotten); the lockout of an existing account stays until lifted.",
    )
    sign_in_concurrency: int = Field(
        default=2,
        ge=1,
        description="How many password checks (Argon2, memory-hard) may run at once; the "
        "others wait without holding a thread.",
    )
    password_cost: str = Field(
        default=DEFAULT_PASSWORD_COST,
        description="The Argon2id cost of each password hash, as a hash's own PHC string writes "
        "it: m=<memory KiB>,t=<passes>,p=<lanes>. Hashes of another cost are re-hashed at the "
        "user's next sign-in. Below OWASP's recommendations (e.g. m=19456,t=2,p=1) the server "
        "warns at start.",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="The addresses (a JSON list; networks like 10.0.0.0/8 too) of the reverse "
        "proxies in front of the server, whose X-Forwarded-For and X-Forwarded-Proto are "
        "believed: the client's address is then what sign-in limits count and the audit shows. "
        "From anyone else those headers are ignored; by default from everyone.",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _proxy_addresses(cls, proxies: list[str]) -> list[str]:
        for proxy in proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise ValueError(f"trusted proxy {proxy!r} is not an address or network") from None
        return proxies

    @field_validator("password_cost")
    @classmethod
    def _argon2_cost(cls, cost: str) -> str:
        return str(PasswordCost.parse(cost))

    @property
    def parsed_password_cost(self) -> PasswordCost:
        return PasswordCost.parse(self.password_cost)
