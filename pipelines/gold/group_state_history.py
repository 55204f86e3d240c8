"""gold.group_state_history: Empty, CompletingRebalance, Stable and Dead, as the records show them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemas.group_state_history import TABLE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


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
