"""silver.group_metadata: one row per classic-protocol GroupMetadata record (key type 2)."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.source_position import SOURCE_KEY, SOURCE_POSITION
from schemas.table_spec import CHANGE_DATA_FEED, GROUP_CLUSTERING, TableSpec, column

TABLE = TableSpec(
    name="silver.group_metadata",
    description="Every classic group's state as the coordinator persisted it; tombstones when the group was deleted.",
    schema=T.StructType(SOURCE_POSITION + [
        column("group", T.StringType(), "consumer group id", False),
        column("protocol_type", T.StringType(), "'consumer', 'connect', ... ('' for an empty group without one)"),
        column("generation", T.IntegerType(), "generation id"),
        column("protocol", T.StringType(), "selected protocol, i.e. the assignor (range, cooperative-sticky, ...)"),
        column("leader", T.StringType(), "member id of the leader"),
        column("current_state_timestamp", T.TimestampType(), "when the group entered its current state (value v2+)"),
        column("member_count", T.IntegerType(), "number of members; 0 means the group is Empty"),
        column("is_tombstone", T.BooleanType(), "the group was deleted", False),
        column("value_version", T.ShortType(), "GroupMetadataValue version; null for a tombstone"),
    ]),
    key=SOURCE_KEY,
    properties=(CHANGE_DATA_FEED,),  # gold reads what silver gained (pipelines/gold/refresh.py)
    cluster_by=GROUP_CLUSTERING,  # a refresh reads the records of the groups that changed
)
