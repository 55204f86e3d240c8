"""gold.group_membership: SCD2, one row per member id's stay in a classic group."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import TableSpec, column

TABLE = TableSpec(
    name="gold.group_membership",
    description=(
        "One row per member id seen in a classic group's GroupMetadata records (SCD2). Times are what records "
        "show: a member that joined and left within one rebalance never appears."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("member_id", T.StringType(), "member id (client id or group.instance.id + '-' + UUID)", False),
        column("group_instance_id", T.StringType(), "static membership id (KIP-345); null for dynamic members"),
        column("client_id", T.StringType(), "client.id"),
        column("client_host", T.StringType(), "host the member connected from"),
        column("session_timeout_ms", T.IntegerType(), "session timeout (last record)"),
        column("rebalance_timeout_ms", T.IntegerType(), "rebalance timeout, max.poll.interval.ms (last record)"),
        column("valid_from", T.TimestampType(),
               "first record listing it: its generation's start (currentStateTimestamp), or the record time of "
               "a static member swap. The JoinGroup itself was earlier and is not persisted", False),
        column("valid_to", T.TimestampType(),
               "the first later record without it (next generation's start, a swap, Empty or the tombstone): "
               "an upper bound of when it left; null while a member"),
        column("first_generation", T.IntegerType(), "first recorded generation listing it", False),
        column("last_generation", T.IntegerType(), "last recorded generation listing it", False),
    ]),
    key=("cluster_name", "group", "member_id"),
)
