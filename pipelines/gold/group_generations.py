"""gold.group_generations: one row per recorded generation of a classic group.

The table's whole definition (issue 14, item 7): ``TABLE`` (schema, key, clustering, properties), the build step
(``group_generations``, the classic groups' rows; KIP-848 groups' come from ``consumer_groups``) and the
incremental strategy (``Incremental.REPLACE_TOUCHED_GROUPS``): a refresh (pipelines/gold/refresh.py
``group_tables``, then ``replace_groups``) recomputes each group with new records from all of its records, the five
group tables sharing one record sequence (``group_history``), and replaces that group's rows in one commit.
Tested on hand-built rows in tests/pipelines/gold/test_group_generations.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import types as T

from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


TABLE = TableSpec(
    name="gold.group_generations",
    description=(
        "One row per generation of a classic group seen in a GroupMetadata record. The broker persists a "
        "generation only when its assignment is stored (Stable) or the group is Empty, so a generation cut "
        "short in CompletingRebalance leaves no row (a gap in the numbers). For KIP-848 consumer groups "
        "(group_type 'consumer') one row per group epoch of a ConsumerGroupMetadata record."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("incarnation", T.IntegerType(),
               "0 for the group's first life; +1 after each group tombstone (deleted or expired, then re-created)",
               False),
        column("generation", T.IntegerType(), "generation id; for KIP-848 groups the group epoch", False),
        column("protocol_type", T.StringType(), "'consumer', 'connect', ...; null when the record has none ('')"),
        column("protocol", T.StringType(),
               "selected protocol, i.e. the assignor; null without members. KIP-848: the server assignor most "
               "members ask for (group.remote.assignor); null when none does (the broker's default, first of "
               "group.consumer.assignors, is in no record)"),
        column("leader", T.StringType(),
               "member id of the leader when the generation was first recorded; null for KIP-848 (no leader)"),
        column("member_count", T.IntegerType(),
               "members when the generation was first recorded (KIP-848: after the epoch bump); 0 = Empty"),
        column("started_at", T.TimestampType(),
               "currentStateTimestamp of its first record: entry into CompletingRebalance (Empty for none). "
               "KIP-848: append time of the ConsumerGroupMetadata record that bumped the epoch"),
        column("stable_at", T.TimestampType(),
               "append time of its first record, when the assignment was stored (null for an Empty generation). "
               "KIP-848: when every member had reconciled to this epoch's target (state Stable); null if never"),
        column("ended_at", T.TimestampType(),
               "start of the next recorded generation, or the group tombstone; null while current. An upper "
               "bound when a generation was cut short in between"),
        column("end_reason", T.StringType(),
               "LIKELY cause, inferred from the next record (see gold.rebalance_events.likely_cause); "
               "'group_removed' for a tombstone (deletion and expiry look the same in records)"),
        column("records", T.IntegerType(),
               "GroupMetadata records of the generation (>1: static member swaps or leader changes); KIP-848: "
               "the group's records written while this epoch was current, its bump included", False),
        column("group_type", T.StringType(),
               "'classic' (GroupMetadata records) or 'consumer' (KIP-848, group.protocol=consumer: group epochs)",
               False),
    ]),
    key=("cluster_name", "group", "incarnation", "generation"),
    cluster_by=GROUP_CLUSTERING,
    properties=(DELETION_VECTORS,),  # each refresh replaces the rows of the groups that changed
    incremental=Incremental.REPLACE_TOUCHED_GROUPS,
)


def group_generations(sequence: DataFrame, transition_rows: DataFrame) -> DataFrame:
    """``sequence`` from group_history.record_sequence; ``transition_rows`` from rebalance_events.transitions."""
    from pyspark.sql import functions as F

    first = F.min_by(F.struct("protocol_type", "protocol", "leader", "member_count", "current_state_timestamp",
                              "record_timestamp"), "seq")
    generations = sequence.filter(~F.col("is_tombstone")).groupBy("cluster_name", "group", "incarnation",
                                                                  "generation").agg(
        first.alias("first"), F.max_by("next_at", "seq").alias("ended_at"), F.max("seq").alias("last_seq"),
        F.count(F.lit(1)).cast("int").alias("records"),
    )
    # How each generation ended: the cause of the rebalance into the next one, or the tombstone.
    successors = sequence.select("cluster_name", "group", (F.col("seq") - 1).alias("last_seq"),
                                 F.col("is_tombstone").alias("next_is_tombstone"), "seq")
    causes = transition_rows.filter("new_generation").select("cluster_name", "group", "seq", "likely_cause")
    ends = successors.join(causes, ["cluster_name", "group", "seq"], "left").select(
        "cluster_name", "group", "last_seq",
        F.when(F.col("next_is_tombstone"), "group_removed").otherwise(F.col("likely_cause")).alias("end_reason"))
    return generations.join(ends, ["cluster_name", "group", "last_seq"], "left").select(
        "cluster_name", "group", "incarnation", "generation",
        F.nullif(F.col("first.protocol_type"), F.lit("")).alias("protocol_type"),
        F.col("first.protocol").alias("protocol"), F.col("first.leader").alias("leader"),
        F.col("first.member_count").alias("member_count"),
        F.coalesce("first.current_state_timestamp", "first.record_timestamp").alias("started_at"),
        F.when(F.col("first.member_count") > 0, F.col("first.record_timestamp")).alias("stable_at"),
        "ended_at", F.when(F.col("ended_at").isNotNull(), F.col("end_reason")).alias("end_reason"), "records",
        F.lit("classic").alias("group_type"),
    ).select(*TABLE.schema.fieldNames())
