"""Which environment variables a manifest may not give its driver.

A driver's environment reaches more than the job's own code: spark-submit's shell scripts, the
JVM, the Python interpreter and the launcher's wrapper all read it before any of the job runs,
some of them outside the sandbox. A variable that makes one of them load other code (``LD_PRELOAD``,
``PYTHONSTARTUP``, ``JAVA_TOOL_OPTIONS``), look for programs elsewhere (``PATH``,
``SPARK_HOME``), or change what the job takes or who it is (``SPARK_*``, ``HADOOP_USER_NAME``)
is refused in ``env`` and ``envSecrets`` (and in ``spark.executorEnv.*``), naming the key and
why. The server's own ``STREAMJOBS_*`` variables are refused too: it sets those itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping

from streamjobs.domain.errors import FieldError

_LOADS_CODE = "makes programs load other code"
_FINDS_PROGRAMS = "decides which programs and libraries run"

REFUSED_PREFIXES: Mapping[str, str] = {
    "LD_": f"is read by the dynamic loader of every program, and {_LOADS_CODE}",
    "DYLD_": f"is read by the dynamic loader, and {_LOADS_CODE}",
    "MALLOC_": "tunes the C library's allocator of every program",
    "BASH_FUNC_": f"defines shell functions in spark-submit's scripts, and {_LOADS_CODE}",
    "SPARK_": "configures spark-submit and Spark's scripts (Spark's home, its settings, the "
    "driver's JVM); the server sets what a driver needs, and sparkConf the rest",
    "PYSPARK_": "decides which Python runs and how pyspark submits; the server sets it",
    "HADOOP_": "configures Hadoop's clients (their classpath, JVM options, configuration and "
    "the user they act as)",
    "STREAMJOBS_": "is the server's own prefix: the server sets these variables itself (a "
    "connection's secrets reach the driver as STREAMJOBS_SECRET_*)",
}
"""Refused name prefixes, with why."""

REFUSED_NAMES: Mapping[str, str] = {
    **dict.fromkeys(
        ("BASH_ENV", "ENV"), f"names a script every shell runs first; it {_LOADS_CODE}"
    ),
    **dict.fromkeys(
        ("SHELLOPTS", "BASHOPTS", "PS4", "IFS", "CDPATH", "GLOBIGNORE", "BASH_XTRACEFD"),
        "changes how spark-submit's shell scripts run",
    ),
    "PATH": f"{_FINDS_PROGRAMS}; the server sets it",
    "HOME": "decides where Python's user site-packages and the JVM's caches are read from, "
    f"so it {_LOADS_CODE}; the server sets it",
    **dict.fromkeys(
        (
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONSTARTUP",
            "PYTHONINSPECT",
            "PYTHONUSERBASE",
            "PYTHONNOUSERSITE",
            "PYTHONSAFEPATH",
            "PYTHONPLATLIBDIR",
            "PYTHONEXECUTABLE",
            "PYTHONBREAKPOINT",
            "PYTHONWARNINGS",
            "PYTHONPYCACHEPREFIX",
            "PYTHONCASEOK",
        ),
        "changes where Python finds and how it starts its code; ship Python code with "
        "spec.dependencies.pyFiles",
    ),
    **dict.fromkeys(
        ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"),
        "adds options (agents, classpaths) to every JVM; use spec.configuration.javaOptions",
    ),
    "JAVA_HOME": f"{_FINDS_PROGRAMS}: the Java the server runs Spark with",
    "CLASSPATH": "adds classes to every JVM; ship jars with spec.dependencies.jars",
    **dict.fromkeys(("YARN_CONF_DIR", "HIVE_CONF_DIR"), "points Spark at other configuration"),
    **dict.fromkeys(
        ("KRB5CCNAME", "KRB5_CONFIG", "KRB5_KTNAME"),
        "decides which Kerberos credentials the job acts with",
    ),
    **dict.fromkeys(
        ("PERL5OPT", "PERL5LIB", "PERLLIB", "NODE_OPTIONS", "NODE_PATH"),
        f"is read by the interpreter of its language, and {_LOADS_CODE}",
    ),
    **dict.fromkeys(
        ("GCONV_PATH", "GLIBC_TUNABLES", "LOCPATH", "NLSPATH", "HOSTALIASES"),
        "is read by the C library of every program (some of these load code)",
    ),
    **dict.fromkeys(
        ("OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES"),
        f"configures OpenSSL in every program that uses it, and {_LOADS_CODE}",
    ),
}
"""Refused names, with why. Names are compared in upper case."""


def refused_env_reason(name: str) -> str | None:
    """Why a job may not set the environment variable ``name``, or None if it may."""
    upper = name.upper()
    reason = REFUSED_NAMES.get(upper)
    if reason is not None:
        return reason
    for prefix, prefix_reason in REFUSED_PREFIXES.items():
        if upper.startswith(prefix):
            return prefix_reason
    return None


def env_errors(env: Mapping[str, str], env_secrets: Mapping[str, str]) -> Iterator[FieldError]:
    """A ``FieldError`` at ``spec.configuration.env["NAME"]`` (or ``envSecrets``) for each
    variable a job may not set."""
    for key, names in (("env", env), ("envSecrets", env_secrets)):
        for name in names:
            reason = refused_env_reason(name)
            if reason is not None:
                yield FieldError(
                    map_key_path(f"spec.configuration.{key}", name),
                    f"a job may not set {name}: it {reason}",
                )


def map_key_path(field: str, key: str) -> str:
    """``spec.configuration.env["LD_PRELOAD"]``: the path of one key of a map field."""
    return f"{field}[{json.dumps(key)}]"
