"""Where each health rule of each running application stands (``domain.health.RuleState``).

The supervisor's health step (``supervisor.health``) reads an application's rule states every
tick it judges the application and writes one back when it changed, in the transaction that
also records the rule's event and queues its notifications. Kept in the store, not in memory,
so a restarted server neither fires a rule that is firing again nor forgets how long a
condition has held. A row goes with its application (ON DELETE CASCADE); the rows of rules a
resumed application's spec no longer has are removed with ``keep_only``.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import Double, ForeignKey, String, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from streamjobs.domain.health import RuleState
from streamjobs.store.base import Repository
from streamjobs.store.column_types import UtcDateTime
from streamjobs.store.tables import NAME_LENGTH, Base


class HealthRuleStateRow(Base):
    """One rule of one application: since when its condition holds, since when it fires."""

    __tablename__ = "health_rule_states"

    application_id: Mapped[str] = mapped_column(
        ForeignKey("applications.id", ondelete="CASCADE"), primary_key=True
    )
    rule: Mapped[str] = mapped_column(String(NAME_LENGTH), primary_key=True)
    holding_since: Mapped[datetime | None] = mapped_column(UtcDateTime)
    firing_since: Mapped[datetime | None] = mapped_column(UtcDateTime)
    last_value: Mapped[float | None] = mapped_column(Double)
    judged_at: Mapped[datetime | None] = mapped_column(UtcDateTime)


_STATE_COLUMNS = ("holding_since", "firing_since", "last_value", "judged_at")


class HealthStateRepository(Repository):
    """Rule states per (application, rule name)."""

    def of(self, application_id: str) -> dict[str, RuleState]:
        """The states of the application's rules by rule name (a rule never judged is absent)."""
        row = HealthRuleStateRow
        rows = self._read(
            select(row.rule, *(getattr(row, name) for name in _STATE_COLUMNS)).where(
                row.application_id == application_id
            )
        ).all()
        return {
            rule: RuleState(
                holding_since=holding_since,
                firing_since=firing_since,
                last_value=last_value,
                judged_at=judged_at,
            )
            for rule, holding_since, firing_since, last_value, judged_at in rows
        }

    def firing(self, application_id: str) -> dict[str, RuleState]:
        """The application's rules that fire now, by name."""
        return {name: state for name, state in self.of(application_id).items() if state.firing}

    def put(self, application_id: str, rule: str, state: RuleState) -> None:
        """Store ``state`` as the application's ``rule``'s, replacing the one stored."""
        values = {
            "application_id": application_id,
            "rule": rule,
            **{name: getattr(state, name) for name in _STATE_COLUMNS},
        }
        dialect = self._session.get_bind().dialect.name
        insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(
            HealthRuleStateRow
        ).values(values)
        self._session.execute(
            insert.on_conflict_do_update(
                index_elements=["application_id", "rule"],
                set_={name: values[name] for name in _STATE_COLUMNS},
            )
        )

    def keep_only(self, application_id: str, rules: Collection[str]) -> None:
        """Remove the application's states of rules not named in ``rules``."""
        row = HealthRuleStateRow
        self._session.execute(
            delete(row)
            .where(row.application_id == application_id, row.rule.not_in(list(rules)))
            .execution_options(synchronize_session=False)
        )
