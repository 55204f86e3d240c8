"""gold.offset_commit_rate: offset commits per group per minute."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, TableSpec, column

TABLE = TableSpec(
    name="gold.offset_commit_rate",
    description="Offset commit records per group per minute of commit time (tombstones not counted).",
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster the commits were read from", False),
        column("group", T.StringType(), "consumer group id", False),
        column("minute", T.TimestampType(), "start of the minute (UTC) of the commit timestamp", False),
        column("commit_records", T.LongType(), "offset commit records written in the minute (one per partition)",
               False),
        column("commit_requests", T.LongType(),
               "distinct commit timestamps in the minute: approximately the OffsetCommit requests, since one "
               "request writes all its partitions with the same timestamp", False),
        column("partitions", T.LongType(), "distinct topic-partitions committed in the minute", False),
    ]),
    key=("cluster_name", "group", "minute"),
    cluster_by=GROUP_CLUSTERING,
    # Deletion vectors (issue 14, item 4): every refresh MERGEs a few keys into this table; with them a
    # MERGE marks the rows it replaces instead of rewriting each file that holds one. The dashboard
    # reads such tables through delta-rs's DataFusion engine (dashboard/read.py), which applies them.
    properties=(DELETION_VECTORS,),
)
