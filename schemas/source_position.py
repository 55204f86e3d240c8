"""Columns every ingested row carries: which cluster, and where in the source topic it came from."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import column

SOURCE_POSITION = [
    column("cluster_name", T.StringType(), "the cluster this row was read from (settings: cluster_name)", False),
    column("source_topic", T.StringType(), "topic the record was read from (usually __consumer_offsets)", False),
    column("source_partition", T.IntegerType(), "partition of the source topic", False),
    column("source_offset", T.LongType(), "offset of the record in its source partition", False),
    column("record_timestamp", T.TimestampType(), "the record's Kafka timestamp (append time on the broker)"),
]

SOURCE_KEY = ("cluster_name", "source_topic", "source_partition", "source_offset")
