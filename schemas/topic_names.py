"""silver.topic_names: the name of every topic id the end-offset snapshots saw, one row per id (a dimension)."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import CHANGE_DATA_FEED, TableSpec, column

TABLE = TableSpec(
    name="silver.topic_names",
    description=(
        "Topic id -> topic name, from the end-offset snapshots (Admin DescribeTopics): KIP-848 group records and "
        "offset commits v4 name partitions by topic id, and gold names them from here, never by asking the "
        "cluster, so a rebuild gives the same rows. One row per id: Kafka gives a re-created topic a new id."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster (settings: cluster_name)", False),
        column("topic_id", T.StringType(), "the topic's id (KIP-516) in Kafka's text form (base64url)", False),
        column("topic", T.StringType(), "the topic's name", False),
        column("first_snapshot_id", T.LongType(),
               "the first snapshot that described the topic (silver.partition_end_offsets.snapshot_id); for ids "
               "taken over from snapshots made before this table existed, the first of those", False),
    ]),
    key=("cluster_name", "topic_id"),
    properties=(CHANGE_DATA_FEED,),  # gold reads the ids named since its last refresh (pipelines/gold/refresh.py)
)
