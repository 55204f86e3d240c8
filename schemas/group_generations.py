"""gold.group_generations: one row per generation of a classic group that the records show."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import TableSpec, column

TABLE = TableSpec(
    name="gold.group_generations",
    description=(
        "One row per generation of a classic group seen in a GroupMetadata record. The broker persists a "
        "generation only when its assignment is stored (Stable) or the group is Empty, so a generation cut "
        "short in CompletingRebalance leaves no row (a gap in the numbers)."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("incarnation", T.IntegerType(),
               "0 for the group's first life; +1 after each group tombstone (deleted or expired, then re-created)",
               False),
        column("generation", T.IntegerType(), "generation id", False),
        column("protocol_type", T.StringType(), "'consumer', 'connect', ...; null when the record has none ('')"),
        column("protocol", T.StringType(), "selected protocol, i.e. the assignor; null without members"),
        column("leader", T.StringType(), "member id of the leader when the generation was first recorded"),
        column("member_count", T.IntegerType(), "members when the generation was first recorded; 0 = Empty"),
        column("started_at", T.TimestampType(),
               "currentStateTimestamp of its first record: entry into CompletingRebalance (Empty for none)"),
        column("stable_at", T.TimestampType(),
               "append time of its first record, when the assignment was stored (null for an Empty generation)"),
        column("ended_at", T.TimestampType(),
               "start of the next recorded generation, or the group tombstone; null while current. An upper "
               "bound when a generation was cut short in between"),
        column("end_reason", T.StringType(),
               "LIKELY cause, inferred from the next record (see gold.rebalance_events.likely_cause); "
               "'group_removed' for a tombstone (deletion and expiry look the same in records)"),
        column("records", T.IntegerType(),
               "GroupMetadata records of the generation (>1: static member swaps or leader changes)", False),
    ]),
    key=("cluster_name", "group", "incarnation", "generation"),
)
