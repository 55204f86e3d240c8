"""gold.group_state_history: Empty, CompletingRebalance, Stable and Dead, as the records show them.

The table's whole definition (issue 14, item 7): ``TABLE`` (schema, key, clustering, properties), the build step
(``group_state_history``, the classic groups' rows; KIP-848 groups' come from ``consumer_groups``) and the
incremental strategy (``Incremental.REPLACE_TOUCHED_GROUPS``): a refresh (pipelines/gold/refresh.py
``group_tables``, then ``replace_groups``) recomputes each group with new records from all of its records, the five
group tables sharing one record sequence (``group_history``), and replaces that group's rows in one commit.
Tested on hand-built rows in tests/pipelines/gold/test_group_state_history.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import types as T

from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


TABLE = TableSpec(
    name="gold.group_state_history",
    description=(
        "State sequence per group: Empty, CompletingRebalance, Stable, Dead. PreparingRebalance is never "
        "persisted and does not appear; CompletingRebalance only for generations that reached Stable. KIP-848 "
        "groups (group_type 'consumer'): Empty, Assigning, Reconciling, Stable, Dead, derived from the group, "
        "assignment and member epochs after every write (Kafka's ConsumerGroup.maybeUpdateGroupState)."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("state", T.StringType(),
               "Empty | CompletingRebalance | Stable | Dead; KIP-848: Empty | Assigning | Reconciling | Stable | "
               "Dead", False),
        column("at", T.TimestampType(), "when the group entered the state", False),
        column("until", T.TimestampType(), "when it entered the next recorded state; null while current"),
        column("generation", T.IntegerType(), "generation of the record, KIP-848 the group epoch (null for Dead)"),
        column("evidence", T.StringType(),
               "'current_state_timestamp' (Empty, CompletingRebalance: the record's field), 'record_time' "
               "(Stable: the assignment record's append time), 'tombstone' (Dead); KIP-848: 'no_members' "
               "(Empty), 'group_epoch_above_assignment_epoch' (Assigning), 'member_not_reconciled' (Reconciling: "
               "a member below the assignment epoch or not in member state STABLE), 'members_reconciled' "
               "(Stable), 'tombstone' (Dead); the time is the append time of the write that made it so", False),
        column("group_type", T.StringType(),
               "'classic' (GroupMetadata records) or 'consumer' (KIP-848, group.protocol=consumer: group epochs)",
               False),
        column("assignment_epoch", T.IntegerType(), "KIP-848: the target assignment epoch then; null for classic"),
    ]),
    key=("cluster_name", "group", "at", "state"),
    cluster_by=GROUP_CLUSTERING,
    properties=(DELETION_VECTORS,),  # each refresh replaces the rows of the groups that changed
    incremental=Incremental.REPLACE_TOUCHED_GROUPS,
)


def group_state_history(sequence: DataFrame) -> DataFrame:
    """``sequence`` from group_history.record_sequence.

    A generation's first record yields Empty (no members) at its currentStateTimestamp, or
    CompletingRebalance at its currentStateTimestamp and Stable at the record's append time (the
    leader's SyncGroup stored the assignment; ``ClassicGroup.currentStateTimestamp`` is set on the
    move to CompletingRebalance, before the record is written). A tombstone yields Dead.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    cst = F.coalesce("current_state_timestamp", "record_timestamp")
    states = F.when(F.col("is_tombstone"), F.array(F.struct(F.lit("Dead").alias("state"),
                                                            F.col("record_timestamp").alias("at"),
                                                            F.lit("tombstone").alias("evidence"))))
    states = states.when(F.col("member_count") == 0, F.array(F.struct(
        F.lit("Empty").alias("state"), cst.alias("at"), F.lit("current_state_timestamp").alias("evidence"))))
    states = states.otherwise(F.array(
        F.struct(F.lit("CompletingRebalance").alias("state"), cst.alias("at"),
                 F.lit("current_state_timestamp").alias("evidence")),
        F.struct(F.lit("Stable").alias("state"), F.col("record_timestamp").alias("at"),
                 F.lit("record_time").alias("evidence"))))
    rows = sequence.filter(F.col("new_generation") | F.col("is_tombstone")).select(
        "cluster_name", "group", "seq", F.when(~F.col("is_tombstone"), F.col("generation")).alias("generation"),
        F.posexplode(states).alias("pos", "s"))
    w = Window.partitionBy("cluster_name", "group").orderBy("seq", "pos")
    return rows.select("cluster_name", "group", "s.state", "s.at", F.lead("s.at").over(w).alias("until"),
                       "generation", "s.evidence", F.lit("classic").alias("group_type"),
                       F.lit(None).cast("int").alias("assignment_epoch")).select(*TABLE.schema.fieldNames())
