"""gold.offset_commit_rate: offset commit records per group per minute."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.delta_tables import table_path
from schemas.offset_commit_rate import TABLE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

KEY = ("cluster_name", "group", "minute")
_DAY = dt.timedelta(days=1)


def offset_commit_rate(commits: DataFrame) -> DataFrame:
    """Commits per (cluster, group, minute of commit_timestamp); tombstones are deletions, not commits."""
    from pyspark.sql import functions as F

    live = commits.filter("NOT is_tombstone").withColumn(
        "minute", F.date_trunc("minute", F.coalesce("commit_timestamp", "record_timestamp")))
    return live.groupBy(*KEY).agg(
        F.count(F.lit(1)).alias("commit_records"),
        F.count_distinct("commit_timestamp").alias("commit_requests"),
        F.count_distinct("topic", "partition").alias("partitions"),
    ).select(*TABLE.schema.fieldNames())


def merge_rates(spark: SparkSession, settings: Settings, new_commits: DataFrame, all_commits: DataFrame) -> None:
    """Recount the minutes that received new commits from all of silver (so a re-run counts nothing twice).

    ``all_commits`` is silver.offset_commits, pruned to the record dates of the new commits (the
    table is partitioned by ``commit_date``), so the cost follows the new data, not the history.
    """
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    touched = offset_commit_rate(new_commits).select(*KEY)
    dates = [r[0] for r in new_commits.select(F.to_date("record_timestamp")).distinct().collect()]
    if not dates:
        return
    window = sorted({d + delta for d in dates for delta in (-_DAY, 0 * _DAY, _DAY)})
    recount = offset_commit_rate(all_commits.filter(F.col("commit_date").isin(window))) \
        .join(F.broadcast(touched), list(KEY), "left_semi")
    on = " AND ".join(f"t.`{c}` = s.`{c}`" for c in KEY)
    values = {c: f"s.`{c}`" for c in TABLE.schema.fieldNames()}
    (
        DeltaTable.forPath(spark, str(table_path(settings, TABLE))).alias("t").merge(recount.alias("s"), on)
        .whenMatchedUpdate(set=values).whenNotMatchedInsert(values=values).execute()
    )
