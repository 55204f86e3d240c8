"""Spark schemas of offsetlake's tables: one module per table, StructType plus column descriptions."""
