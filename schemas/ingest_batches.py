"""silver.ingest_batches: one row per micro-batch and source partition, for audits and data-loss reporting."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import TableSpec, column

TABLE = TableSpec(
    name="silver.ingest_batches",
    description="What each ingest micro-batch planned and read per source partition, and any data lost to retention.",
    schema=T.StructType([
        column("cluster_name", T.StringType(), "cluster", False),
        column("source_topic", T.StringType(), "source topic", False),
        column("batch_id", T.LongType(), "streaming micro-batch id", False),
        column("source_partition", T.IntegerType(), "source partition", False),
        column("start_offset", T.LongType(), "first offset the batch planned to read"),
        column("end_offset", T.LongType(), "offset after the last one the batch planned to read"),
        column("records", T.LongType(), "records actually read", False),
        column("log_start_offset", T.LongType(), "the partition's log start offset when the batch ran"),
        column("lost_records", T.LongType(),
               "offsets in the planned range already deleted by retention (failOnDataLoss=false skips them)", False),
        column("ingested_at", T.TimestampType(), "when the batch was written", False),
    ]),
    key=("cluster_name", "source_topic", "batch_id", "source_partition"),
)
