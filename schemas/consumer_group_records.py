"""silver.consumer_group_records: KIP-848 consumer-group, share-group and streams-group records."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.decoded_records import GROUP_RECORD_TYPES, record_struct
from schemas.source_position import SOURCE_KEY, SOURCE_POSITION
from schemas.table_spec import CHANGE_DATA_FEED, TableSpec, column

# Everything but the classic GroupMetadata record, which has its own tables.
RECORD_TYPES = tuple(name for name in GROUP_RECORD_TYPES if name != "group_metadata")

TABLE = TableSpec(
    name="silver.consumer_group_records",
    description="Records of the new group protocols (KIP-848 consumer, KIP-932 share, KIP-1071 streams), typed.",
    schema=T.StructType(SOURCE_POSITION + [
        column("type", T.StringType(), "record type, e.g. consumer_group_member_metadata", False),
        column("record_type", T.ShortType(), "the key's int16 record type", False),
        column("group_id", T.StringType(), "group id", False),
        column("member_id", T.StringType(), "member id, for member-scoped records"),
        column("is_tombstone", T.BooleanType(), "the record deletes its key", False),
        column("value_version", T.ShortType(), "value version; null for a tombstone"),
        column("group_epoch", T.IntegerType(), "group epoch (group metadata) or assignment epoch (target metadata)"),
        column("member_epoch", T.IntegerType(), "member epoch (current member assignment)"),
        column("previous_member_epoch", T.IntegerType(), "previous member epoch (current member assignment)"),
        column("member_state", T.ByteType(), "member state (current member assignment; 0 stable, 1 unrevoked, ...)"),
    ] + [column(name, record_struct(name), f"decoded {name} record (key and value)") for name in RECORD_TYPES]),
    key=SOURCE_KEY,
    properties=(CHANGE_DATA_FEED,),  # gold reads what silver gained (pipelines/gold/refresh.py)
    # A refresh reads the records of the groups that changed (GROUP_CLUSTERING, by this table's group column).
    cluster_by=("cluster_name", "group_id"),
)
