"""gold.partition_assignments: SCD2 rows of who owned which partition in each generation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemas.partition_assignments import TABLE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def partition_assignments(member_rows: DataFrame) -> DataFrame:
    """``member_rows`` from group_history.member_sequence; one row per (generation, member, partition)."""
    from pyspark.sql import functions as F

    exploded = member_rows.select(
        "cluster_name", "group", "generation", "member_id", "client_id", "group_instance_id", "seq",
        "record_timestamp", "next_at", F.explode(F.coalesce("assigned_partitions", F.array())).alias("tp"),
    ).select("*", F.col("tp.topic").alias("topic"), F.explode("tp.partitions").alias("partition"))
    return exploded.groupBy("cluster_name", "group", "generation", "member_id", "topic", "partition").agg(
        F.max_by("client_id", "seq").alias("client_id"),
        F.max_by("group_instance_id", "seq").alias("group_instance_id"),
        F.min_by("record_timestamp", "seq").alias("valid_from"), F.max_by("next_at", "seq").alias("valid_to"),
    ).select("*", F.lit("classic").alias("group_type"), F.lit("current").alias("assignment_kind"),
             F.lit(None).cast("string").alias("topic_id")).select(*TABLE.schema.fieldNames())
