"""Prometheus metrics: ``offsetlake serve-metrics`` and ``offsetlake run --metrics-port``.

``catalog.py`` names every metric once (docs/metrics.md's reference comes from it), ``groups.py`` reads the
consumer groups' metrics from the gold tables through delta-rs at each scrape (no Spark), and ``run.py`` holds
the main job's health, fed by its loop.
"""
