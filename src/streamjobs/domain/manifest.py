"""The StreamingJob manifest as pydantic models: every block, every field, every default.

These models check what one field can check on its own: types, ranges, enums and string syntax.
Rules that tie fields together (a step reads only defined views, EXACTLY_ONCE needs an idempotent
sink, ...) live in ``manifest_rules``. Parse manifests with ``spec.parse_manifest``, which applies
both; validating these models directly skips the cross-field rules.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, Self

from pydantic import Field, JsonValue, StrictBool, model_validator

from streamjobs.domain.alerts import Health, Subscription
from streamjobs.domain.formats import (
    ApplicationFile,
    DatasetReference,
    DnsLabel,
    EnvVarName,
    ImageReference,
    JavaClassName,
    JobName,
    Location,
    MavenCoordinate,
    ReferenceName,
    ScalarString,
    SnapshotName,
    SparkConfKey,
    SparkInterval,
    SparkSchemaDdl,
    SqlIdentifier,
    TagKey,
    TagValue,
)
from streamjobs.domain.instance import (
    DEFAULT_EXECUTOR_NODE_TYPE,
    Deployment,
    DeployMode,
    Instance,
    Volume,
)
from streamjobs.domain.manifest_model import JavaInt, JavaLong, ManifestModel

__all__ = [
    "DEFAULT_EXECUTOR_NODE_TYPE",
    "DeployMode",
    "Deployment",
    "Instance",
    "JavaInt",
    "JavaLong",
    "ManifestModel",
    "Volume",
]


class ApplicationType(StrEnum):
    """What a job runs: the declared pipeline, a Python program or a JVM program."""

    PIPELINE = "pipeline"
    PYTHON = "python"
    JVM = "jvm"


class TriggerMode(StrEnum):
    """When Spark starts a micro-batch; Once and AvailableNow finish, the others run on."""

    PROCESSING_TIME = "ProcessingTime"
    ONCE = "Once"
    AVAILABLE_NOW = "AvailableNow"
    CONTINUOUS = "Continuous"
    REAL_TIME = "RealTime"


class LogLevel(StrEnum):
    """Log level of the Spark driver running a pipeline."""

    ALL = "ALL"
    TRACE = "TRACE"
    DEBUG = "DEBUG"
    INFO = "INFO"
    WARN = "WARN"
    ERROR = "ERROR"
    FATAL = "FATAL"
    OFF = "OFF"


class InputFormat(StrEnum):
    """How an input is read; kafka gives raw key/value bytes, kafkajson parses JSON values."""

    KAFKA = "kafka"
    KAFKA_JSON = "kafkajson"
    JSON = "json"
    CSV = "csv"
    PARQUET = "parquet"
    TEXT = "text"
    DELTA = "delta"
    ICEBERG = "iceberg"
    RATE = "rate"


class OutputFormat(StrEnum):
    """How an output is written."""

    PARQUET = "parquet"
    JSON = "json"
    CSV = "csv"
    DELTA = "delta"
    ICEBERG = "iceberg"
    KAFKA = "kafka"
    JDBC = "jdbc"
    CONSOLE = "console"


class OutputMode(StrEnum):
    """Which rows of a streaming result each trigger writes (Spark's output modes)."""

    APPEND = "append"
    UPDATE = "update"
    COMPLETE = "complete"


class RestartPolicyType(StrEnum):
    """When a job whose application ended is started again."""

    NEVER = "Never"
    ALWAYS = "Always"
    ON_FAILURE = "OnFailure"


class Backoff(StrEnum):
    """How the pause before a retry grows: the same every time, or doubling."""

    FIXED = "fixed"
    EXPONENTIAL = "exponential"


class StateStore(StrEnum):
    """The state store provider of a pipeline's stateful operators."""

    HDFS = "hdfs"
    ROCKSDB = "rocksdb"


class Guarantee(StrEnum):
    """How often each input record affects the outputs, across failures and restarts."""

    NONE = "NONE"
    AT_LEAST_ONCE = "AT_LEAST_ONCE"
    EXACTLY_ONCE = "EXACTLY_ONCE"


class Metadata(ManifestModel):
    """Who the job is: its name, namespace, description and tags."""

    name: JobName
    """Unique, and never changes."""
    description: str | None = None
    namespace: DnsLabel = "default"
    tags: dict[TagKey, TagValue] = {}


class ApplicationSpec(ManifestModel):
    """What to run: the declared pipeline, or the user's own Python or JVM program."""

    type: ApplicationType
    main_class: JavaClassName | None = None
    """jvm only, and required there."""
    main_application_file: ApplicationFile | None = None
    """Required for python and jvm; a pipeline has none."""
    image: ImageReference | None = None
    """Container image: for a Kubernetes deployment, which this version does not have; refused."""
    arguments: list[str] = []


class Streaming(ManifestModel):
    """How the pipeline's streaming query triggers and where it checkpoints."""

    trigger_mode: TriggerMode = TriggerMode.PROCESSING_TIME
    trigger_duration: SparkInterval | None = None
    """Required for Continuous and RealTime; for ProcessingTime, omitted means micro-batches back
    to back; Once and AvailableNow take none."""
    for_each_batch_mode: bool = False
    """Write each micro-batch with batch writers, to one or many outputs."""
    checkpoint_location: Location | None = None
    """Derived from the server's checkpoint root, namespace and job name when not given."""
    low_latency: StrictBool = False
    """Lower latency where Spark's defaults trade it away (``domain.low_latency``): the queries
    of Kafka outputs under a ProcessingTime trigger track progress asynchronously, unless they
    keep state or the output's options say otherwise."""


class Watermark(ManifestModel):
    """How late an event-time ``column`` may be before state for it is dropped."""

    column: str = Field(min_length=1)
    delay: SparkInterval


class BadRecords(ManifestModel):
    """Where a kafkajson input sends the records whose JSON does not parse."""

    output: SqlIdentifier
    """The output that receives the records that do not parse (kafkajson inputs only)."""


class Input(ManifestModel):
    """A source the pipeline reads: a dataset (``<connection>:<rest>``) or a path, as a view."""

    name: SqlIdentifier
    """The view the input defines for the steps."""
    dataset: DatasetReference | None = None
    path: Location | None = None
    format: InputFormat
    schema_ddl: SparkSchemaDdl | None = Field(default=None, alias="schema")
    is_stream: bool = True
    watermark: Watermark | None = None
    options: dict[str, JsonValue] = {}
    bad_records: BadRecords | None = None


class View(ManifestModel):
    """One SQL query of a step; its result is a view named ``name``."""

    name: SqlIdentifier
    sql: str = Field(min_length=1)


class Step(ManifestModel):
    """A sequence of SQL views, run in order."""

    sequence: list[View] = Field(min_length=1)


class Output(ManifestModel):
    """A sink the pipeline writes: the view of the same name, into a dataset or a path."""

    name: SqlIdentifier
    """The view to write."""
    dataset: DatasetReference | None = None
    path: Location | None = None
    format: OutputFormat
    output_mode: OutputMode = OutputMode.APPEND
    options: dict[str, JsonValue] = {}
    """Writer options; ``keyColumns`` (a list of columns) makes a jdbc output an upsert, and
    ``saveMode`` says what a batch write does with data already there."""


class Pipeline(ManifestModel):
    """The declarative pipeline, with the key names of the Flare job spec."""

    explain: bool = False
    show_preview_lines: JavaInt = Field(default=0, ge=0)
    log_level: LogLevel = LogLevel.INFO
    batch_mode: bool = False
    """Read every input once, write every output once (by its ``saveMode``), and complete."""
    streaming: Streaming = Field(default_factory=Streaming)
    """Omitted: micro-batches back to back, checkpoints in the derived location."""
    inputs: list[Input] = Field(min_length=1)
    steps: list[Step] = []
    outputs: list[Output] = Field(min_length=1)


class Configuration(ManifestModel):
    """Environment, Spark settings and JVM options; secrets are given by name only."""

    env: dict[EnvVarName, ScalarString] = {}
    env_secrets: dict[EnvVarName, ReferenceName] = {}
    """Environment variable -> secret name; resolved at launch."""
    spark_conf: dict[SparkConfKey, ScalarString] = {}
    spark_conf_secrets: dict[SparkConfKey, ReferenceName] = {}
    """Spark setting -> secret name; resolved at launch."""
    java_options: str | None = None
    config_maps: list[ReferenceName] = []
    """For a Kubernetes deployment, which this version does not have; refused unless empty."""


class Dependencies(ManifestModel):
    """Extra files shipped with the job, and Maven packages Spark resolves at submission."""

    jars: list[Location] = []
    files: list[Location] = []
    py_files: list[Location] = []
    packages: list[MavenCoordinate] = []


class RestartPolicy(ManifestModel):
    """When and how often a failed submission or application is retried."""

    type: RestartPolicyType = RestartPolicyType.NEVER
    """Never; OnFailure: after a failure, within the retries; Always: after any end, without
    limit once the driver ran (a driver that fails to start is bounded as under OnFailure)."""
    on_submission_failure_retries: JavaInt = Field(default=1, ge=0)
    """How often a driver that failed to start is started again (OnFailure and Always)."""
    on_submission_failure_retry_interval: JavaInt = Field(default=5, ge=1)
    """Seconds before the first such retry; each next one waits twice as long, up to
    maxInterval."""
    on_failure_retries: JavaInt = Field(default=1, ge=0)
    """How often a driver that failed while running is started again (OnFailure)."""
    on_failure_retry_interval: JavaInt = Field(default=5, ge=1)
    """Seconds before a restart after a run (OnFailure and Always)."""
    backoff: Backoff = Backoff.FIXED
    """exponential: each consecutive retry after a failure while running waits twice as long
    as the one before (retries after failures to start always do)."""
    max_interval: JavaInt = Field(default=300, ge=1)
    """Seconds; the longest a doubling wait grows to."""
    reset_after_seconds: JavaInt | None = Field(default=None, ge=1)
    """An attempt that ran healthy this long resets the retry counts; none: never reset."""


class Processing(ManifestModel):
    """Processing guarantee and checkpoint snapshots.

    ``guarantee`` is a pipeline's (a python or jvm program decides its own: None there). Omitted,
    it is AT_LEAST_ONCE, what Spark gives with a checkpoint and any sink, so a minimal manifest is
    valid whatever it writes to. EXACTLY_ONCE is a choice made on purpose: it needs a checkpoint
    and idempotent sinks (not kafka or console).
    """

    guarantee: Guarantee | None = None
    """Pipelines only; AT_LEAST_ONCE when omitted."""
    snapshot_interval_millis: JavaLong | None = Field(default=None, ge=5000)
    """Take a periodic snapshot of the checkpoint this often (pipelines); none: never. At least
    5 s: each snapshot holds the queries while the checkpoint is copied."""
    snapshots_to_keep: JavaInt = Field(default=3, ge=1, le=1000)
    """How many automatic snapshots (periodic, at Stop, at Suspend) are kept; the oldest go
    first. Snapshots taken on demand are kept until deleted."""
    suspend_on_failure: bool = False
    initial_snapshot_name: SnapshotName | None = None
    """Start from this snapshot of the job when a Run finds its checkpoint without state."""
    state_store: StateStore = StateStore.HDFS
    """Where stateful operators keep their state: Spark's default (hdfs, in memory with files
    in the checkpoint) or rocksdb (RocksDB with changelog checkpointing, for large state)."""


class UpgradePolicy(ManifestModel):
    """How an upgrade of the running application to a new spec is watched (``streamjobs
    upgrade``)."""

    rollback_within_seconds: JavaInt = Field(default=300, ge=0)
    """The upgraded application failing, or a health rule of it firing, this long after it
    runs puts back the previous spec and the snapshot taken before the upgrade; 0: never."""


class JobSpec(ManifestModel):
    """What the job runs, with what, where, and how it is kept running."""

    bundle: ReferenceName = "default"
    """Resource bundle: quotas and permissions."""
    run_as: ReferenceName | None = None
    """Identity the job runs under; defaults to its creator."""
    application: ApplicationSpec
    pipeline: Pipeline | None = None
    """Required for and only for pipeline applications."""
    configuration: Configuration = Field(default_factory=Configuration)
    dependencies: Dependencies = Field(default_factory=Dependencies)
    instance: Instance = Field(default_factory=Instance)
    restart_policy: RestartPolicy = Field(default_factory=RestartPolicy)
    processing: Processing = Field(default_factory=Processing)
    notifications: list[Subscription] = []
    """Which events of the job's applications go to which notification destinations."""
    health: Health = Field(default_factory=Health)
    """Rules on a running application's figures, and what to do when one holds."""
    upgrade: UpgradePolicy = Field(default_factory=UpgradePolicy)
    """How an upgrade to a new spec is watched and rolled back."""

    @model_validator(mode="after")
    def _fill_pipeline_guarantee(self) -> Self:
        if self.application.type is ApplicationType.PIPELINE and self.processing.guarantee is None:
            self.processing.guarantee = Guarantee.AT_LEAST_ONCE
        return self


class StreamingJob(ManifestModel):
    """A StreamingJob manifest: the user's declared intent for one streaming job."""

    api_version: Literal["streamjobs.io/v1"]
    kind: Literal["StreamingJob"]
    metadata: Metadata
    spec: JobSpec

    @property
    def name(self) -> str:
        """The job's name (``metadata.name``)."""
        return self.metadata.name
