"""bronze.offsets_topic_records: every record as read from the source topic, undecoded."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.source_position import SOURCE_KEY, SOURCE_POSITION
from schemas.table_spec import TableSpec, column

TABLE = TableSpec(
    name="bronze.offsets_topic_records",
    description="Every __consumer_offsets record exactly as read (append-only), the replayable source of silver.",
    schema=T.StructType(SOURCE_POSITION + [
        column("key", T.BinaryType(), "raw record key"),
        column("value", T.BinaryType(), "raw record value; null is a tombstone"),
        column("record_type", T.ShortType(), "the key's leading int16 (record type), null if the key is shorter"),
        column("ingested_at", T.TimestampType(), "when offsetlake wrote the row", False),
        column("ingest_batch_id", T.LongType(), "streaming micro-batch that wrote the row", False),
        column("record_date", T.DateType(), "UTC date of record_timestamp (partition column)"),
    ]),
    partition_by=("record_date",),
    key=SOURCE_KEY,
)
