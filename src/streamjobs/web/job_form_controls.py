"""The controls the Create / Configure job form offers: the choices of its drop-downs, the pipeline
it starts from, and its groups of repeated rows (tags, Spark settings, jars...), each bound to the
manifest field it makes.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from streamjobs.domain.deployment_rules import STANDALONE_MASTER_SETTING
from streamjobs.domain.instance import DeployMode
from streamjobs.domain.spec import ApplicationType, Deployment, Guarantee, RestartPolicyType

APPLICATION_TYPES = (
    (ApplicationType.PIPELINE, "Pipeline"),
    (ApplicationType.PYTHON, "Python"),
    (ApplicationType.JVM, "JVM"),
)
DEPLOYMENTS = ((Deployment.SINGLE_NODE, "Single node"), (Deployment.STANDARD, "Standard"))
DEPLOY_MODES = ((DeployMode.CLIENT, "Client"), (DeployMode.CLUSTER, "Cluster"))
DYNAMIC_CHOICES = (("false", "Off: fixed executors"), ("true", "On: they follow the load"))


def standard_deployment_note(deployments: Collection[Deployment]) -> str:
    """The note beside the deployment choice when the server cannot run a standard job."""
    if Deployment.STANDARD in deployments:
        return ""
    return (
        "This server has no standalone master configured, so a standard job cannot run here "
        f"until {STANDALONE_MASTER_SETTING}=spark://host:port is set for the server (and it is "
        "restarted). Single node runs on this machine."
    )


RESTART_POLICIES = tuple((policy, policy.value) for policy in RestartPolicyType)
GUARANTEES = (
    (Guarantee.AT_LEAST_ONCE, "At least once"),
    (Guarantee.EXACTLY_ONCE, "Exactly once"),
    (Guarantee.NONE, "None"),
)

DEFAULT_PIPELINE = """\
# An example to edit: Spark's rate source (no connector needed) into Parquet files.
streaming:
  triggerMode: ProcessingTime
  triggerDuration: 10 seconds
inputs:
  - name: ticks
    format: rate          # columns: timestamp, value
    options:
      rowsPerSecond: 10
steps:
  - sequence:
      - name: even_ticks
        sql: SELECT timestamp, value FROM ticks WHERE value % 2 = 0
outputs:
  - name: even_ticks
    format: parquet
    path: file:///tmp/streamjobs/output/even-ticks
"""


@dataclass(frozen=True)
class RowGroup:
    """Rows of the form that make one manifest field: key/value rows a mapping, single-value
    rows a list. Controls are named ``<control>_key``/``<control>_value`` or ``<control>``."""

    control: str
    path: tuple[str, ...]
    title: str
    value_label: str
    key_label: str = ""

    @property
    def paired(self) -> bool:
        return bool(self.key_label)


TAGS = RowGroup("tags", ("metadata", "tags"), "Resource tags", "Value", "Key")
CONFIGURATION_GROUPS = (
    RowGroup("env", ("spec", "configuration", "env"), "Environment variables", "Value", "Variable"),
    RowGroup(
        "env_secrets",
        ("spec", "configuration", "envSecrets"),
        "Environment secrets",
        "Secret",
        "Variable",
    ),
    RowGroup("spark_conf", ("spec", "configuration", "sparkConf"), "Spark config", "Value", "Key"),
    RowGroup(
        "spark_conf_secrets",
        ("spec", "configuration", "sparkConfSecrets"),
        "Spark config secrets",
        "Secret",
        "Key",
    ),
    RowGroup("arguments", ("spec", "application", "arguments"), "Arguments", "Argument"),
)
DEPENDENCY_GROUPS = (
    RowGroup("jars", ("spec", "dependencies", "jars"), "Jars", "Jar"),
    RowGroup("files", ("spec", "dependencies", "files"), "Files", "File"),
    RowGroup("py_files", ("spec", "dependencies", "pyFiles"), "Python files", "Python file"),
    RowGroup("packages", ("spec", "dependencies", "packages"), "Maven packages", "Coordinate"),
)
ROW_GROUPS = (TAGS, *CONFIGURATION_GROUPS, *DEPENDENCY_GROUPS)


@dataclass(frozen=True)
class Row:
    """One row of a row group: a key and a value, or just a value."""

    value: str
    key: str = ""
