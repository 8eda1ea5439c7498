"""A driver program for the secrets launch test: it tells digests of the secrets it was given,
never the values, then waits to be inspected.

``secret_probe.py ENV_VAR SPARK_SETTING RELEASE_FILE``: prints the SHA-256 of the environment
variable and of the Spark setting, then waits (at most two minutes) for the release file.
"""

import hashlib
import os
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

variable, setting, release = sys.argv[1], sys.argv[2], Path(sys.argv[3])


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


print(f"env {digest(os.environ.get(variable, ''))}", flush=True)
spark = SparkSession.builder.getOrCreate()
print(f"conf {digest(spark.sparkContext.getConf().get(setting, ''))}", flush=True)
deadline = time.monotonic() + 120
while not release.exists() and time.monotonic() < deadline:
    time.sleep(0.1)
spark.stop()
print("secret_probe done", flush=True)
