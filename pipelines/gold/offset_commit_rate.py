"""gold.offset_commit_rate: offset commit records per group per minute.

The table's whole definition, in one module: ``TABLE`` (schema, key, layout, properties),
the build step (``offset_commit_rate``: the full rebuild from silver.offset_commits) and the incremental
strategy (``Incremental.RECOUNT_TOUCHED_KEYS``, ``merge_rates``: the (group, minute) pairs the new commits fall
in, recounted from silver and MERGEd).

Laid out by day (``minute_date``), not clustered by group as the other gold tables are: every refresh MERGEs
the minutes its new commits fall in, and those are the newest minutes, whatever the group. The MERGE names
their days as literals, so Delta reads those days' files only. Clustered by group, the MERGE read the whole
table to find its few matches, and its scan was most of its time (Delta's MERGE metrics on bench/gold.py's
warehouse; the figures are in CHANGELOG.md). A table
an older offsetlake made (clustered, without ``minute_date``) is made anew and gold rebuilt by the next refresh
(``pipelines.gold.refresh.refresh_gold_tables``).
Tested on hand-built rows in tests/pipelines/gold/test_offset_commit_rate.py.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from pyspark.sql import types as T

from conf.settings import Settings
from pipelines.delta_tables import table_path
from schemas.table_spec import DELETION_VECTORS, Incremental, TableSpec, column

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


TABLE = TableSpec(
    name="gold.offset_commit_rate",
    description="Offset commit records per group per minute of commit time (tombstones not counted).",
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster the commits were read from", False),
        column("group", T.StringType(), "consumer group id", False),
        column("minute", T.TimestampType(), "start of the minute (UTC) of the commit timestamp", False),
        column("commit_records", T.LongType(), "offset commit records written in the minute (one per partition)",
               False),
        column("commit_requests", T.LongType(),
               "distinct commit timestamps in the minute: approximately the OffsetCommit requests, since one "
               "request writes all its partitions with the same timestamp", False),
        column("partitions", T.LongType(), "distinct topic-partitions committed in the minute", False),
        column("minute_date", T.DateType(), "UTC date of the minute (the table's partition column)", False),
    ]),
    key=("cluster_name", "group", "minute"),
    partition_by=("minute_date",),  # the module's docstring says why not clustered by group
    # Deletion vectors: every refresh MERGEs a few keys into this table; with them a
    # MERGE marks the rows it replaces instead of rewriting each file that holds one. The dashboard
    # reads such tables through delta-rs's DataFusion engine (dashboard/read.py), which applies them.
    properties=(DELETION_VECTORS,),
    incremental=Incremental.RECOUNT_TOUCHED_KEYS,
)

KEY = ("cluster_name", "group", "minute")
_DAY = dt.timedelta(days=1)
_MINUTE_MS = 60_000


def _minute() -> Column:
    """The minute a commit is counted in: its commit time's, or the append time's for a record without one."""
    from pyspark.sql import functions as F

    return F.date_trunc("minute", F.coalesce("commit_timestamp", "record_timestamp"))


def offset_commit_rate(commits: DataFrame) -> DataFrame:
    """Commits per (cluster, group, minute of commit_timestamp); tombstones are deletions, not commits."""
    from pyspark.sql import functions as F

    live = commits.filter("NOT is_tombstone").withColumn("minute", _minute())
    return live.groupBy(*KEY).agg(
        F.count(F.lit(1)).alias("commit_records"),
        F.count_distinct("commit_timestamp").alias("commit_requests"),
        F.count_distinct("topic", "partition").alias("partitions"),
    ).withColumn("minute_date", F.to_date("minute")).select(*TABLE.schema.fieldNames())


def merge_rates(spark: SparkSession, settings: Settings, new_commits: DataFrame, all_commits: DataFrame) -> None:
    """Recount the minutes that received new commits from all of silver (so a re-run counts nothing twice).

    ``all_commits`` is silver.offset_commits. Only the touched (group, minute) pairs' commits are counted:
    the table's partitions (``commit_date``) of the new commits' record dates and a day either side (a commit
    time and the append time of its record can straddle midnight), narrowed to the span of the touched
    minutes as literals, which Delta checks against each file's column statistics, and then to the touched
    pairs themselves (a broadcast semi-join) before the counting, rather than counting every group's commits
    of those three days and picking the touched minutes afterwards, which took a third of a refresh on
    bench/gold.py's warehouse.
    """
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    live = new_commits.filter("NOT is_tombstone").withColumn("minute", _minute())
    [span] = live.agg(F.unix_millis(F.min("minute")).alias("first"), F.unix_millis(F.max("minute")).alias("last"),
                      F.collect_set(F.to_date("record_timestamp")).alias("dates"),
                      F.collect_set(F.to_date("minute")).alias("days")).collect()
    if span["first"] is None:
        return  # tombstones only: no minute's count changes
    window = sorted({d + delta for d in span["dates"] for delta in (-_DAY, 0 * _DAY, _DAY)})
    start, end = F.timestamp_millis(F.lit(span["first"])), F.timestamp_millis(F.lit(span["last"] + _MINUTE_MS))
    in_span = (F.col("commit_timestamp").between(start, end)
               | (F.col("commit_timestamp").isNull() & F.col("record_timestamp").between(start, end)))
    touched = live.select(*KEY).distinct()
    candidates = all_commits.filter(F.col("commit_date").isin(window) & in_span).withColumn("minute", _minute())
    recount = offset_commit_rate(candidates.join(F.broadcast(touched), list(KEY), "left_semi"))
    on = " AND ".join(f"t.`{c}` = s.`{c}`" for c in KEY)
    # The recount's days as literals on the target: Delta keeps only those partitions' files (a condition on
    # the target alone prunes its files before the join; the key equality alone reads them all).
    on += f" AND t.minute_date IN ({', '.join(f'DATE {day.isoformat()!r}' for day in sorted(span['days']))})"
    values = {c: f"s.`{c}`" for c in TABLE.schema.fieldNames()}
    (
        DeltaTable.forPath(spark, str(table_path(settings, TABLE))).alias("t").merge(recount.alias("s"), on)
        .whenMatchedUpdate(set=values).whenNotMatchedInsert(values=values).execute()
    )
