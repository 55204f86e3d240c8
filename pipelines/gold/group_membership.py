"""gold.group_membership: SCD2 rows of classic group members, from the records listing them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemas.group_membership import TABLE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def group_membership(member_rows: DataFrame) -> DataFrame:
    """``member_rows`` from group_history.member_sequence."""
    from pyspark.sql import functions as F

    last = F.max_by(F.struct("group_instance_id", "client_id", "client_host", "session_timeout_ms",
                             "rebalance_timeout_ms", "subscribed_topics"), "seq")
    return member_rows.groupBy("cluster_name", "group", "member_id").agg(
        last.alias("last"), F.min_by("at", "seq").alias("valid_from"), F.max_by("next_at", "seq").alias("valid_to"),
        F.min("generation").alias("first_generation"), F.max("generation").alias("last_generation"),
    ).select("cluster_name", "group", "member_id", "last.*", "valid_from", "valid_to", "first_generation",
             "last_generation", F.lit("classic").alias("group_type"), F.lit(None).cast("string").alias("rack_id"),
             F.lit(None).cast("string").alias("subscribed_topic_regex"),
             F.lit(None).cast("string").alias("server_assignor"),
             F.lit(None).cast("int").alias("first_member_epoch"), F.lit(None).cast("int").alias("last_member_epoch"),
             ).select(*TABLE.schema.fieldNames())
