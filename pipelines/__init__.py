"""Spark and Delta at the edges: everything here needs a SparkSession, except ``embedded_sql`` (the SQL views
answered by delta-rs's embedded DataFusion, without a JVM)."""
