"""silver.offset_commits: one row per decoded offset-commit record (OffsetCommit key types 0 and 1)."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.source_position import SOURCE_KEY, SOURCE_POSITION
from schemas.table_spec import CHANGE_DATA_FEED, TableSpec, column

TABLE = TableSpec(
    name="silver.offset_commits",
    description="Every offset commit and offset tombstone, decoded, with its source position.",
    schema=T.StructType(SOURCE_POSITION + [
        column("group", T.StringType(), "consumer group id", False),
        column("topic", T.StringType(), "committed topic", False),
        column("partition", T.IntegerType(), "committed partition", False),
        column("offset", T.LongType(), "committed offset: the next message the group will read; null for a tombstone"),
        column("leader_epoch", T.IntegerType(), "leader epoch of the committed offset (value v3+), -1 when unknown"),
        column("metadata", T.StringType(), "client-supplied commit metadata"),
        column("commit_timestamp", T.TimestampType(), "when the commit was made (broker clock)"),
        column("expire_timestamp", T.TimestampType(), "expiry requested with the commit (value v1 only)"),
        column("topic_id", T.StringType(), "topic id in Kafka's base64url form (value v4, Kafka 4.1+)"),
        column("is_tombstone", T.BooleanType(), "the offset was deleted (expired, OffsetDelete or group deletion)",
               False),
        column("record_type", T.ShortType(), "1 = OffsetCommit, 0 = legacy 0.8.2 commit", False),
        column("value_version", T.ShortType(), "OffsetCommitValue version; null for a tombstone"),
        column("commit_date", T.DateType(), "UTC date of the record (partition column)"),
    ]),
    partition_by=("commit_date",),
    key=SOURCE_KEY,
    properties=(CHANGE_DATA_FEED,),  # gold reads what silver gained (pipelines/gold/refresh.py)
)
