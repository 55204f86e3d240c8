"""gold.group_generations: one row per recorded generation of a classic group."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemas.group_generations import TABLE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


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
