"""A driver program for launcher tests: a small RDD job spread over the cluster's executors."""

import sys

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
total = spark.sparkContext.parallelize(range(1000), 4).map(lambda value: value * 2).sum()
print(f"rdd_sum total={total}", flush=True)
spark.stop()
sys.exit(0)
