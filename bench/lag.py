"""Benchmark: gold.consumer_lag's refresh of one new snapshot beside a full rebuild, on a warehouse of 2M commits.

    .venv/bin/python bench/lag.py                                  # 2M commits, 2,000 groups, 60 snapshots
    .venv/bin/python bench/lag.py --commits 10000000 --groups 10000

What it does, in one Spark session, on silver tables it writes itself (the lag reads silver only; bench/gold.py
and bench/scale.py go through the broker and the ingest):

1. writes ``--commits`` offset commits of ``--groups`` groups, each group on a topic of its own of 12 partitions,
   spread over ``--snapshots`` end-offset snapshots a minute apart (the high watermark of every partition rising
   with time; every group behind by a few hundred messages), into silver.offset_commits and
   silver.partition_end_offsets;
2. **first refresh** (``refresh_consumer_lag``: the query starts without a checkpoint and computes every snapshot);
3. appends one more snapshot and ``--increment`` commits (1 % by default) after the last one;
4. **incremental refresh**: ``refresh_consumer_lag`` again (reads what silver gained and the state of the topics
   it touches); its rows are compared with a replay of all of silver (``consumer_lag_frame``) for that snapshot;
5. **baseline, full rebuild**: ``refresh_consumer_lag(full=True)`` (the checkpoint deleted: every snapshot
   from all of silver, what every refresh cost before the state store in proportion to the history).

Prints seconds and silver rows/s for each, the peak memory of the Python process and of the Spark JVM (VmHWM),
the load average, and as its last line ``lag: incremental/full = X.X% at N commits``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.decode import jvm_peak_mb  # noqa: E402
from bench.results import add_results_argument, start, write_result  # noqa: E402

BASE_MS = 1_700_000_000_000
MINUTE_MS = 60_000
PARTITIONS = 12


def write_silver(spark, settings, first: int, count: int, snapshots: range, groups: int,  # type: ignore[no-untyped-def]
                 commits_per_minute: float) -> None:
    """Commits ``first`` .. ``first + count - 1`` and the snapshots of ``snapshots`` (minute numbers) as silver
    rows: commit i is group ``i % groups``'s on partition ``(i // groups) % 12`` of its topic, at
    ``BASE_MS + i / commits_per_minute`` minutes; a partition's high watermark is 1,000 messages a minute."""
    from pyspark.sql import functions as F

    from pipelines.delta_tables import ensure_table, table_path
    from schemas import consumer_group_records, group_metadata, offset_commits, partition_end_offsets

    for spec in (offset_commits.TABLE, partition_end_offsets.TABLE, group_metadata.TABLE,
                 consumer_group_records.TABLE):
        ensure_table(spark, settings, spec)
    i = F.col("id")
    at = F.timestamp_millis((F.lit(BASE_MS) + i * F.lit(MINUTE_MS / commits_per_minute)).cast("long"))
    minute = (i / F.lit(commits_per_minute)).cast("long")
    commits = spark.range(first, first + count).select(
        F.lit(settings.cluster_name).alias("cluster_name"), F.lit("__consumer_offsets").alias("source_topic"),
        (i % 50).cast("int").alias("source_partition"), i.alias("source_offset"), at.alias("record_timestamp"),
        F.format_string("group-%05d", i % groups).alias("group"),
        F.format_string("topic-%05d", i % groups).alias("topic"),
        ((i / groups).cast("long") % PARTITIONS).cast("int").alias("partition"),
        # A few hundred messages behind the high watermark of the minute.
        (minute * 1_000 - (i % 7) * 50).alias("offset"), F.lit(None).cast("int").alias("leader_epoch"),
        F.lit("").alias("metadata"), at.alias("commit_timestamp"), F.lit(None).cast("timestamp").alias(
            "expire_timestamp"), F.lit(None).cast("string").alias("topic_id"), F.lit(False).alias("is_tombstone"),
        F.lit(1).cast("int").alias("record_type"), F.lit(4).cast("int").alias("value_version"),
        F.to_date(at).alias("commit_date"))
    (commits.select(*[F.col(c).cast(offset_commits.TABLE.schema[c].dataType) for c in
                      offset_commits.TABLE.schema.fieldNames()])
     .write.format("delta").mode("append").save(table_path(settings, offset_commits.TABLE)))
    snapshot_time = F.timestamp_millis(F.lit(BASE_MS) + F.col("minute") * MINUTE_MS)
    ends = (spark.range(groups).select(F.format_string("topic-%05d", F.col("id")).alias("topic"))
            .crossJoin(spark.range(PARTITIONS).select(F.col("id").cast("int").alias("partition")))
            .crossJoin(spark.createDataFrame([(m,) for m in snapshots], "minute long"))
            .select(F.lit(settings.cluster_name).alias("cluster_name"),
                    (F.lit(BASE_MS) + F.col("minute") * MINUTE_MS).alias("snapshot_id"),
                    snapshot_time.alias("snapshot_time"), "topic", "partition",
                    F.lit(0).cast("long").alias("earliest_offset"), (F.col("minute") * 1_000).alias("latest_offset"),
                    (F.col("minute") * 1_000).alias("last_stable_offset"),
                    F.array().alias("committed_messages"), F.to_date(snapshot_time).alias("snapshot_date"),
                    F.lit(None).cast("string").alias("topic_id")))
    (ends.select(*[F.col(c).cast(partition_end_offsets.TABLE.schema[c].dataType) for c in
                   partition_end_offsets.TABLE.schema.fieldNames()])
     .write.format("delta").mode("append").save(table_path(settings, partition_end_offsets.TABLE)))


def report(label: str, seconds: float, rows: int) -> None:
    print(f"  {label:<58} {seconds:8.1f} s  {rows:>11,} silver rows {rows / seconds:>10,.0f} rows/s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commits", type=int, default=2_000_000, help="commits in the initial warehouse")
    parser.add_argument("--groups", type=int, default=2_000, help="groups, each on a topic of 12 partitions")
    parser.add_argument("--snapshots", type=int, default=60, help="end-offset snapshots, a minute apart")
    parser.add_argument("--increment", type=int, default=0, help="commits after the last snapshot (default 1 %%)")
    parser.add_argument("--work", help="directory for the warehouse (default: a new temporary one, removed)")
    add_results_argument(parser)
    args = parser.parse_args()
    run = start("lag", args)
    increment = args.increment or args.commits // 100

    from pyspark.sql import functions as F

    from conf.settings import Settings, SparkSettings
    from pipelines.delta_tables import read_table
    from pipelines.gold.consumer_lag import TABLE, consumer_lag_frame, refresh_consumer_lag
    from pipelines.spark_session import build_spark_session

    work = Path(args.work or tempfile.mkdtemp(prefix="offsetlake-bench-lag-"))
    try:
        settings = Settings(warehouse=str(work / "warehouse"), cluster_name="bench",
                            spark=SparkSettings(shuffle_partitions=4, driver_memory="4g", log_level="ERROR"))
        spark = build_spark_session(settings)
        per_minute = args.commits / args.snapshots
        partitions = args.groups * PARTITIONS
        print(f"lag benchmark: {args.commits:,} commits of {args.groups:,} groups ({partitions:,} partitions), "
              f"{args.snapshots} snapshots; then 1 snapshot and {increment:,} commits; "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
        started = time.perf_counter()
        write_silver(spark, settings, 0, args.commits, range(1, args.snapshots + 1), args.groups, per_minute)
        print(f"  silver written in {time.perf_counter() - started:.1f} s", flush=True)
        silver = args.commits + args.snapshots * partitions

        first = refresh_consumer_lag(spark, settings)
        report(f"first refresh ({first.snapshots} snapshots, {first.rows:,} rows)", first.seconds, silver)

        # One minute more: the increment's commits fall in it, then its snapshot.
        write_silver(spark, settings, args.commits, increment, range(args.snapshots + 1, args.snapshots + 2),
                     args.groups, per_minute)
        silver += increment + partitions
        incremental = refresh_consumer_lag(spark, settings)
        report(f"incremental refresh ({incremental.snapshots} snapshot, {incremental.rows:,} rows)",
               incremental.seconds, increment + partitions)
        newest = incremental.newest_snapshot_id
        table = read_table(spark, settings, TABLE).filter(F.col("snapshot_id") == newest).drop("snapshot_date")
        replay = consumer_lag_frame(spark, settings).filter(F.col("snapshot_id") == newest).drop("snapshot_date")
        missing, extra = replay.exceptAll(table).count(), table.exceptAll(replay).count()
        print(f"  the new snapshot's rows against a replay of all of silver: {missing} missing, {extra} extra",
              flush=True)

        full = refresh_consumer_lag(spark, settings, full=True)
        report(f"baseline: full rebuild ({full.snapshots} snapshots, {full.rows:,} rows)", full.seconds, silver)
        print(f"peak memory: python {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB, "
              f"Spark JVM {jvm_peak_mb(spark):,.0f} MB; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        spark.stop()
        if missing or extra:
            print("lag: the incremental rows differ from a replay of all of silver", file=sys.stderr)
            sys.exit(1)
        line = f"lag: incremental/full = {100 * incremental.seconds / full.seconds:.1f}% at {args.commits:,} commits"
        write_result(run, {"incremental_seconds": round(incremental.seconds, 2),
                           "incremental_over_full_percent": round(100 * incremental.seconds / full.seconds, 1),
                           "first_refresh_seconds": round(first.seconds, 2), "rows_missing": missing,
                           "rows_extra": extra},
                     {"full_rebuild_seconds": round(full.seconds, 2)}, line)
        print(line)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
