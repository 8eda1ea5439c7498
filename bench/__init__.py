"""The benchmark harness: how fast streamjobs runs pipelines, against hand-written baselines."""
