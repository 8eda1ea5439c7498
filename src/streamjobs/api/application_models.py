"""The answer of ``GET /api/v1/applications/{id}`` as the OpenAPI document describes it: the
application, its attempts (standby drivers among them) and the standby driver it holds now.

The route answers with ``http.documents.details_document``; these models only describe it and
check it on the way out. An application field that the documents gain before these models do
passes through (``extra="allow"``), while an attempt or a standby must match exactly.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from streamjobs.domain.states import AppState
from streamjobs.services.application_reads import StandbyState

Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
"""An ISO 8601 time with its offset, as every document writes one."""


class _Document(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class AttemptAnswer(_Document):
    """One attempt: a driver started for the application, in order of its ``number``."""

    number: int
    deploy_mode: Literal["local", "client", "cluster"] | None = Field(
        description="Where its driver runs; None before it started."
    )
    pid: int | None
    submission_id: str | None = Field(description="A cluster-mode driver's id at the master.")
    master: str | None
    driver_host: str | None
    launched_on: str | None = Field(description="The server host that started the driver.")
    ui_port: int | None
    submitted_at: Timestamp
    running_at: Timestamp | None = Field(
        description="When its driver ran; a held standby's: when its driver said it is ready."
    )
    ended_at: Timestamp | None
    exit_code: int | None
    outcome: str | None
    standby: bool = Field(
        description="Started as a standby driver (spec.instance.standby): held ready, not the "
        "application's driver until promoted."
    )
    promoted_at: Timestamp | None = Field(
        description="When the standby took over from the driver that died; None for an "
        "attempt that was not a standby and for one still held."
    )


class StandbyAnswer(_Document):
    """The standby driver the application holds now: started, not promoted, not ended."""

    attempt: int = Field(description="Its attempt number (the attempts list has it too).")
    state: StandbyState = Field(
        description="starting: its JVM and Spark session come up; ready: warm, waiting to be "
        "promoted when the active driver dies."
    )
    pid: int | None
    submitted_at: Timestamp
    ready_at: Timestamp | None = Field(description="When it became ready; None while starting.")


class ExecutorStateAnswer(_Document):
    running: int
    pending: int


class ApplicationDetailsAnswer(_Document):
    """An application with its attempts, its latest executor figures and its standby driver."""

    model_config = ConfigDict(extra="allow")

    id: str
    name: str
    job: str
    namespace: str
    bundle: str
    tags: dict[str, str]
    state: AppState
    triggered_by: str
    run_as: str
    created_at: Timestamp
    transition_time: Timestamp
    last_update_time: Timestamp
    submission_attempts: int
    execution_attempts: int
    restarts: int
    driver_state: str | None
    executor_state: ExecutorStateAnswer
    exit_code: int | None
    error_message: str | None
    requested: str | None = Field(description="stop or abort, once someone asked for it.")
    requested_by: str | None
    next_attempt_at: Timestamp | None
    running_since: Timestamp | None
    last_heartbeat_at: Timestamp | None
    spark_application_id: str | None
    latest: dict[str, Any] = Field(description="The latest figures its queries reported.")
    attempts: list[AttemptAnswer] = Field(
        description="First to last, standby drivers among them (held ones included)."
    )
    executors: dict[str, Any] | None
    standby: StandbyAnswer | None = Field(
        description="The standby driver held now (spec.instance.standby), while the "
        "application is active; None without one."
    )
