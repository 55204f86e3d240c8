"""gold.committed_offsets: the latest committed offset per (cluster, group, topic, partition)."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, TableSpec, column

TABLE = TableSpec(
    name="gold.committed_offsets",
    description=(
        "Latest committed offset per group, topic and partition. Offset tombstones (expiry, OffsetDelete, "
        "group deletion) remove the row. Transactional commits appear only once their transaction committed: "
        "ingest reads with isolation.level=read_committed, so aborted or still-open ones never reach silver."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster the commit was read from", False),
        column("group", T.StringType(), "consumer group id", False),
        column("topic", T.StringType(), "committed topic", False),
        column("partition", T.IntegerType(), "committed partition", False),
        column("offset", T.LongType(), "committed offset: the next message the group will read", False),
        column("leader_epoch", T.IntegerType(), "leader epoch sent with the commit; null when the client sent -1"),
        column("metadata", T.StringType(), "client-supplied commit metadata"),
        column("commit_timestamp", T.TimestampType(), "when the commit was made (broker clock)"),
        column("expire_timestamp", T.TimestampType(), "expiry requested with the commit (OffsetCommitValue v1 only)"),
        column("topic_id", T.StringType(), "topic id, base64url (OffsetCommitValue v4, Kafka 4.1+); else null"),
        column("source_topic", T.StringType(), "topic the commit record was read from", False),
        column("source_partition", T.IntegerType(), "partition of the commit record", False),
        column("source_offset", T.LongType(), "offset of the commit record: later records win", False),
        column("record_timestamp", T.TimestampType(), "append time of the commit record"),
    ]),
    key=("cluster_name", "group", "topic", "partition"),
    cluster_by=GROUP_CLUSTERING,
    # Deletion vectors (issue 14, item 4): every refresh MERGEs a few keys into this table; with them a
    # MERGE marks the rows it replaces instead of rewriting each file that holds one. The dashboard
    # reads such tables through delta-rs's DataFusion engine (dashboard/read.py), which applies them.
    properties=(DELETION_VECTORS,),
)
