"""silver.group_members: the members of each GroupMetadata record, one row per member."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.source_position import SOURCE_KEY, SOURCE_POSITION
from schemas.table_spec import CHANGE_DATA_FEED, GROUP_CLUSTERING, TableSpec, column

TOPIC_PARTITIONS = T.ArrayType(T.StructType([
    T.StructField("topic", T.StringType(), False),
    T.StructField("partitions", T.ArrayType(T.IntegerType(), False), False),
]), False)

TABLE = TableSpec(
    name="silver.group_members",
    description="Members of classic groups per GroupMetadata record, with decoded subscription and assignment.",
    schema=T.StructType(SOURCE_POSITION + [
        column("group", T.StringType(), "consumer group id", False),
        column("generation", T.IntegerType(), "generation of the record"),
        column("protocol_type", T.StringType(), "group protocol type"),
        column("protocol", T.StringType(), "selected assignor"),
        column("member_id", T.StringType(), "member id (client id + '-' + UUID)", False),
        column("is_leader", T.BooleanType(), "this member is the generation's leader", False),
        column("group_instance_id", T.StringType(), "static membership id (KIP-345), null for dynamic members"),
        column("client_id", T.StringType(), "client.id of the consumer"),
        column("client_host", T.StringType(), "host the member connected from"),
        column("rebalance_timeout_ms", T.IntegerType(), "rebalance timeout (max.poll.interval.ms for consumers)"),
        column("session_timeout_ms", T.IntegerType(), "session timeout"),
        column("subscribed_topics", T.ArrayType(T.StringType(), False), "topics in the member's subscription"),
        column("owned_partitions", TOPIC_PARTITIONS, "partitions the member said it owned (subscription v1+)"),
        column("subscription_generation_id", T.IntegerType(), "generation the member last had (subscription v2+)"),
        column("rack_id", T.StringType(), "client.rack (subscription v3+)"),
        column("assigned_partitions", TOPIC_PARTITIONS, "partitions assigned to the member in this generation"),
        column("subscription_version", T.ShortType(), "ConsumerProtocolSubscription version"),
        column("assignment_version", T.ShortType(), "ConsumerProtocolAssignment version"),
        column("sticky_generation", T.IntegerType(), "generation carried in sticky/cooperative-sticky user data"),
        column("undecoded", T.BooleanType(), "subscription/assignment not decoded (not the consumer protocol)", False),
        column("undecoded_reason", T.StringType(), "why they were not decoded"),
        column("subscription_raw", T.BinaryType(), "raw subscription bytes"),
        column("assignment_raw", T.BinaryType(), "raw assignment bytes"),
    ]),
    key=SOURCE_KEY + ("member_id",),
    properties=(CHANGE_DATA_FEED,),  # gold reads what silver gained (pipelines/gold/refresh.py)
    cluster_by=GROUP_CLUSTERING,  # a refresh reads the members of the groups that changed
)
