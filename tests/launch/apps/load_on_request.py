"""A driver program for launcher tests whose executors come and go: idle until the file ``load``
appears in the control directory (its first argument), then a backlog of one-second tasks (as
many as its second argument, default 24), then idle again until the file ``stop`` appears."""

import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

control = Path(sys.argv[1])
tasks = int(sys.argv[2]) if len(sys.argv) > 2 else 24


def slow(value: int) -> int:
    time.sleep(1)
    return value


spark = SparkSession.builder.getOrCreate()
loaded = False
while not (control / "stop").exists():
    if not loaded and (control / "load").exists():
        count = spark.sparkContext.parallelize(range(tasks), tasks).map(slow).count()
        print(f"load_on_request tasks={count}", flush=True)
        loaded = True
    time.sleep(0.2)
spark.stop()
sys.exit(0)
