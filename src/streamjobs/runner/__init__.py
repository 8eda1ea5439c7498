"""The program ``spark-submit`` runs for a pipeline job: manifest -> readStream / SQL / writeStream.

It imports only ``streamjobs.domain`` and pyspark, so it runs in any driver that has them.
"""
