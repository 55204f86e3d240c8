"""silver.partition_end_offsets: one row per partition per end-offset snapshot (``snapshot-end-offsets``)."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import CHANGE_DATA_FEED, TableSpec, column

COMMITTED_MESSAGE = T.StructType([
    column("offset", T.LongType(), "an offset some consumer group had committed when the snapshot was taken", False),
    column("message_offset", T.LongType(),
           "offset of the message actually read there: the next one when the committed offset holds a "
           "transaction marker or was compacted away, the log start when it is below it"),
    column("message_timestamp", T.TimestampType(), "that message's Kafka timestamp"),
    column("timestamp_type", T.StringType(), "create_time or log_append_time (the topic's message.timestamp.type)"),
])

TABLE = TableSpec(
    name="silver.partition_end_offsets",
    description=(
        "Snapshots of every partition's log start, high watermark and last stable offset (ListOffsets), "
        "with the timestamps of the messages at the offsets groups had committed at that moment."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster the snapshot was taken of (settings: cluster_name)", False),
        column("snapshot_id", T.LongType(),
               "identifies the snapshot: its start time in ms since the epoch; the Delta txnVersion of its append",
               False),
        column("snapshot_time", T.TimestampType(),
               "when the ListOffsets requests were sent (offsetlake's clock); the offsets are at least as new", False),
        column("topic", T.StringType(), "topic", False),
        column("partition", T.IntegerType(), "partition", False),
        column("earliest_offset", T.LongType(), "log start offset (ListOffsets EARLIEST)", False),
        column("latest_offset", T.LongType(),
               "high watermark, the end a read_uncommitted consumer sees (ListOffsets LATEST, READ_UNCOMMITTED)",
               False),
        column("last_stable_offset", T.LongType(),
               "last stable offset, the end a read_committed consumer sees: below the high watermark while a "
               "transaction is open on the partition (ListOffsets LATEST, READ_COMMITTED, KIP-98)", False),
        column("committed_messages", T.ArrayType(COMMITTED_MESSAGE, False),
               "for each distinct offset below latest_offset that a group had committed on this partition "
               "(OffsetFetch at snapshot time), the timestamp of the message there; empty when not fetched"),
        column("snapshot_date", T.DateType(), "UTC date of snapshot_time (partition column)", False),
        column("topic_id", T.StringType(),
               "the topic's id (KIP-516, Admin DescribeTopics) in Kafka's text form, as KIP-848 group records and "
               "newer offset commits carry it: gold names topic ids from here; null when the cluster did not "
               "describe the topic, and in rows written before offsetlake recorded it"),
    ]),
    partition_by=("snapshot_date",),
    key=("cluster_name", "snapshot_id", "topic", "partition"),
    properties=(CHANGE_DATA_FEED,),  # gold reads what silver gained (pipelines/gold/refresh.py)
)
