"""gold._refresh_state: the last silver Delta version each gold refresh consumed."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import TableSpec, column

TABLE = TableSpec(
    name="gold._refresh_state",
    description="Per silver table, the Delta version gold has been refreshed up to (pipelines/gold/refresh.py).",
    schema=T.StructType([
        column("source_table", T.StringType(), "silver table name, e.g. silver.group_metadata", False),
        column("version", T.LongType(), "last Delta version of it whose rows are reflected in gold", False),
        column("refreshed_at", T.TimestampType(), "when that refresh finished", False),
    ]),
    key=("source_table",),
)
