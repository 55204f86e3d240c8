"""How long a record takes to show in gold: p50/p95 from a ``__consumer_offsets`` record to its gold row.

Two latencies say how fresh gold is, measured while ``offsetlake run`` runs: from a client's commit
to its row in ``gold.committed_offsets``, and from a rebalance's GroupMetadata record to its row in
``gold.rebalance_events``. Both are measured from the record's append time on the broker (silver's
``record_timestamp``, Kafka's LogAppendTime for ``__consumer_offsets``: the coordinator appends the commit
as it answers the client) to the moment the main job's cycle whose gold refresh first included it committed
the table (``Visibility``: the source offsets the cycle's micro-batches had reached, when the refresh
committed each table it wrote, and when the cycle ended). A refresh writes the commit tables first, then the
group tables, so each table counts as visible when its own commit returned, not at the cycle's end.

A rebalance's row appears when the record that ends it is read -- the GroupMetadata record of the new
generation, whose append time is ``stable_at`` -- so a rebalance's latency is measured from that record.

Spark does the join (any number of records; the cycles are few and broadcast); the percentiles are Spark's
``percentile`` (exact) over the latencies.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.delta_tables import read_table
from pipelines.gold import committed_offsets, rebalance_events
from schemas import group_metadata, offset_commits

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class Visibility:
    """After a cycle ending at ``at`` (aware, UTC), gold holds every record of ``source_topic`` below these offsets.

    ``tables_at``: when the cycle's refresh committed each gold table it wrote (aware, UTC), from which
    readers saw that table's rows of those records; a table not in it (not written, or not known) counts
    from ``at``.
    """

    at: dt.datetime
    source_topic: str
    end_offsets: dict[int, int]  # partition -> first offset not yet read
    tables_at: dict[str, dt.datetime] = field(default_factory=dict)

    def visible_at(self, table: str | None) -> dt.datetime:
        """When ``table`` (None: gold as a whole) showed this cycle's records."""
        return self.tables_at.get(table, self.at) if table is not None else self.at


@dataclass(frozen=True)
class Latency:
    records: int
    p50: float | None  # seconds
    p95: float | None
    max: float | None

    def text(self) -> str:
        if not self.records or self.p50 is None or self.p95 is None or self.max is None:
            return "no records"
        return f"p50 {self.p50:.1f}s, p95 {self.p95:.1f}s, max {self.max:.1f}s over {self.records:,} records"


def visibility_frame(spark: SparkSession, cycles: list[Visibility], table: str | None = None) -> DataFrame:
    """(source_topic, source_partition, reached, visible_at): one row per cycle and partition; ``visible_at``
    is when ``table`` showed the cycle's records (``Visibility.visible_at``)."""
    rows = [(c.source_topic, partition, end, c.visible_at(table)) for c in cycles
            for partition, end in c.end_offsets.items()]
    return spark.createDataFrame(rows, "source_topic string, source_partition int, reached long, visible_at timestamp")


def first_visible(records: DataFrame, cycles: DataFrame) -> DataFrame:
    """``records`` (with source_topic, source_partition, source_offset, since) and ``visible_at``: the earliest
    ``visible_at`` of the cycles whose batches had read past the record (the first such cycle's); records no
    cycle reached are left out."""
    from pyspark.sql import functions as F

    joined = records.join(F.broadcast(cycles), ["source_topic", "source_partition"]).filter(
        F.col("source_offset") < F.col("reached"))
    return joined.groupBy(*records.columns).agg(F.min("visible_at").alias("visible_at"))


def latency(frame: DataFrame, after: dt.datetime | None = None) -> Latency:
    """p50/p95/max of ``visible_at - since`` in seconds, negative ones (clock skew) counted as 0; only rows whose
    ``since`` is at or after ``after`` (aware) when it is given."""
    from pyspark.sql import functions as F

    if after is not None:
        frame = frame.filter(F.unix_micros("since") >= int(after.timestamp() * 1_000_000))
    seconds = F.greatest(F.lit(0.0), (F.unix_micros("visible_at") - F.unix_micros("since")) / 1e6)
    row = frame.select(seconds.alias("s")).agg(
        F.count("*").alias("n"), F.percentile("s", 0.5).alias("p50"), F.percentile("s", 0.95).alias("p95"),
        F.max("s").alias("max")).head()
    return Latency(row["n"], row["p50"], row["p95"], row["max"])


def commit_latency(spark: SparkSession, settings: Settings, cycles: list[Visibility],
                   after: dt.datetime | None = None) -> Latency:
    """From each commit record's append time to the refresh that put it in gold.committed_offsets (records
    appended at or after ``after`` only, when given: e.g. once the job is warm)."""
    from pyspark.sql import functions as F

    commits = read_table(spark, settings, offset_commits.TABLE).filter(
        (F.col("cluster_name") == settings.cluster_name) & ~F.col("is_tombstone")).select(
        "source_topic", "source_partition", "source_offset", F.col("record_timestamp").alias("since"))
    return latency(first_visible(commits, visibility_frame(spark, cycles, committed_offsets.TABLE.name)), after)


def rebalance_latency(spark: SparkSession, settings: Settings, cycles: list[Visibility],
                      after: dt.datetime | None = None) -> Latency:
    """From the record that ends each rebalance (``stable_at``) to the refresh that put it in gold.rebalance_events
    (rebalances ended at or after ``after`` only, when given)."""
    from pyspark.sql import functions as F

    events = read_table(spark, settings, rebalance_events.TABLE).filter(
        F.col("cluster_name") == settings.cluster_name).select(
        "group", F.col("stable_at").alias("since")).distinct()
    records = read_table(spark, settings, group_metadata.TABLE).filter(
        F.col("cluster_name") == settings.cluster_name).select(
        "group", F.col("record_timestamp").alias("since"), "source_topic", "source_partition", "source_offset")
    # The record of each event: the group's GroupMetadata record appended at stable_at (the first, if several).
    ending = events.join(records, ["group", "since"]).groupBy("group", "since", "source_topic", "source_partition") \
        .agg(F.min("source_offset").alias("source_offset"))
    return latency(first_visible(ending, visibility_frame(spark, cycles, rebalance_events.TABLE.name)), after)
