"""What the static compatibility rules (``domain.compatibility``) find when they compare the
running application's spec with the new one: each refusal as an ``Incompatibility`` (the field,
the rule, what the user can do), and warnings about changes Spark allows but that are worth
knowing. The dry run (``domain.dry_runs``) reports its refusals the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Incompatibility:
    """One reason the new spec cannot continue from the running application's checkpoint."""

    path: str
    """Where: a field (``spec.pipeline.inputs[0]``) or a query of the dry run."""
    rule: str
    """The rule broken, in short (``input-location``, ``state-key-schema``)."""
    message: str
    """What changed, and what the user can do."""

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass(frozen=True)
class StaticReview:
    """What the static rules found: refusals, and warnings about changes they allow."""

    refusals: list[Incompatibility] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def refuse(self, path: str, rule: str, message: str) -> None:
        self.refusals.append(Incompatibility(path, rule, message))

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(f"{path}: {message}")
