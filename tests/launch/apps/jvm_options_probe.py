"""A driver program for the launcher's JVM options test: prints, as one JSON line, the options
its JVM started with, in their order."""

import json

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
runtime = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
print("jvm_options " + json.dumps(list(runtime.getInputArguments())), flush=True)
spark.stop()
