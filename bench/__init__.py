"""The benchmark harness: how fast streamjobs runs pipelines, against hand-written baselines.

``python -m bench.run`` (or ``make bench``) runs the figures and writes ``bench/REPORT.md`` with a
PNG chart per figure. Every figure compares streamjobs with a baseline run on the same machine in
the same run, repeated, and reports medians and spreads (see ``bench/README.md``).
"""
