"""gold.consumer_lag: each group's lag and Burrow status at every end-offset snapshot.

Inputs: silver.partition_end_offsets (``snapshot-end-offsets``) and
silver.offset_commits (``ingest``), for ``settings.cluster_name``.

For every snapshot and every (group, topic, partition) the group had committed
to by the snapshot time:

* ``committed_offset``: the group's latest commit at or before the snapshot
  time (a commit's time is its ``commit_timestamp``; a tombstone's, which has
  none, its record timestamp); a tombstone removes it (null from then on);
* ``lag``: ``pipelines.end_offsets.lag_in_messages`` (log-start aware, a commit
  ahead of the snapshot clamped to 0 and flagged);
* two labelled lag-in-seconds estimators, both aging the oldest message still
  to read (at ``max(committed, log start)``): interpolation over the
  partition's high-watermark history, and the timestamp of the message there,
  read by the snapshot;
* Burrow's partition status over the window of the group's last
  ``lag.intervals`` commits (``pipelines.burrow_status``), and the group status.

A deleted group's lag ends at its deletion. DeleteGroups (and offset expiry,
once an Empty group has no offset left) makes the coordinator write, in one
append, a tombstone for each of the group's offsets and then the group's own
tombstone (``GroupCoordinatorShard.deleteGroups``: ``deleteAllOffsets`` then
``createGroupTombstoneRecords``; 2.x/3.x ``GroupMetadataManager
.cleanupGroupMetadata``). From a group tombstone on, a partition whose offset is
gone has no row until the group commits to it again (a group re-created under
the same name resumes with its new commits). An offset tombstone without a group
tombstone (OffsetDelete on a group that lives on) still gives a row with a null
offset, and a group tombstone that leaves an offset in place (a group converted
between the classic and the consumer protocol, KIP-848's upgrade path, writes
the old type's tombstone and keeps its offsets) ends nothing.

The per-partition work is plain Python (``partition_rows``), applied per
(cluster, topic) with ``cogroup().applyInPandas``: the snapshots and the commits
of one topic meet in one function call, which replays each partition.

Incremental and idempotent: only snapshots newer than the newest one already in
gold.consumer_lag are computed and appended, with ``txnAppId =
offsetlake-consumer-lag:<cluster>`` and ``txnVersion`` = the newest snapshot id
written, so a re-run writes nothing. A snapshot is computed from the commits
ingested when it is first refreshed; run ``ingest`` before ``lag``, or rebuild
with ``full=True`` (overwrites the cluster's rows).
What a refresh of new snapshots reads still grows with the history: every snapshot's high watermark and,
in Spark, every offset record (``recent_records`` hands the Python replay only the last ``lag.intervals``
records per group and partition before the new snapshots, and those after; 2026-11-28). Keeping each
partition's replay state from one refresh to the next (Spark's state store, issue 14's item 1) is not done.

The table's whole definition (issue 14, item 7): ``TABLE`` (schema, key, its CHECK constraints), the build step
(``consumer_lag_frame``) and the incremental strategy (``Incremental.APPEND_NEW_SNAPSHOTS``,
``refresh_consumer_lag``). Tested in tests/pipelines/gold/test_consumer_lag.py.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import types as T

from conf.settings import LagSettings, Settings
from pipelines.burrow_status import CommitWindow, Status, commit_lag, evaluate_partition
from pipelines.end_offsets import (
    WatermarkHistory,
    lag_in_messages,
    lag_seconds_from_message,
    lag_seconds_interpolated,
)
from schemas import consumer_group_records, group_metadata, offset_commits, partition_end_offsets
from schemas.table_spec import Constraint, Incremental, TableSpec, column

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

STATUSES = ("OK", "WARN", "STOP", "STALL", "REWIND")
GROUP_STATUSES = ("NOTFOUND", "OK", "WARN", "ERR")

# Rules that hold by construction of pipelines/gold/consumer_lag.py, whatever the cluster answered: Delta enforces
# them at write (quality/consumer_lag.py names them). The snapshot's own offsets come from the broker and are
# checked by a query instead: a constraint would stop the lag job on a bad answer.
LAG_IS_CLAMPED_OR_FLAGGED = Constraint("lag_is_non_negative_or_flagged", """
    lag < 0
    OR (committed_offset IS NULL) != (lag IS NULL)
    OR (committed_offset > latest_offset AND NOT coalesce(commit_ahead_of_snapshot, false))
    OR (committed_offset < earliest_offset AND NOT coalesce(committed_below_log_start, false))
    OR lag != greatest(latest_offset - greatest(committed_offset, earliest_offset), 0)""")
PARTITION_STATUS_IS_BURROWS = Constraint(
    "partition_status_is_a_burrow_status", f"partition_status NOT IN ({', '.join(repr(s) for s in STATUSES)})")
GROUP_STATUS_IS_BURROWS = Constraint(
    "group_status_is_a_burrow_status", f"group_status NOT IN ({', '.join(repr(s) for s in GROUP_STATUSES)})")

TABLE = TableSpec(
    name="gold.consumer_lag",
    description=(
        "At each snapshot of silver.partition_end_offsets, each group's committed offset (from "
        "silver.offset_commits), its lag in messages and in seconds (two labelled estimators), and its "
        "Burrow status per partition and per group. A deleted group's rows end at its deletion: from the group's "
        "tombstone on, a partition whose offset was tombstoned has no row until the group commits to it again."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "cluster", False),
        column("snapshot_id", T.LongType(), "the end-offset snapshot (silver.partition_end_offsets)", False),
        column("snapshot_time", T.TimestampType(), "when the snapshot was taken", False),
        column("group", T.StringType(), "consumer group id", False),
        column("topic", T.StringType(), "topic", False),
        column("partition", T.IntegerType(), "partition", False),
        column("committed_offset", T.LongType(),
               "the group's latest commit at or before snapshot_time; null when its offset was deleted (tombstone)"),
        column("commit_time", T.TimestampType(), "when that commit (or the tombstone) was written"),
        column("earliest_offset", T.LongType(), "log start offset at the snapshot", False),
        column("latest_offset", T.LongType(), "high watermark at the snapshot", False),
        column("last_stable_offset", T.LongType(), "last stable offset at the snapshot", False),
        column("lag", T.LongType(),
               "messages the group has still to read: latest_offset - max(committed_offset, earliest_offset), "
               "so only messages still in the log count; 0 when the commit is ahead of the snapshot; "
               "null when nothing is committed"),
        column("commit_ahead_of_snapshot", T.BooleanType(),
               "the committed offset is above latest_offset (a snapshot older than the commit, or an offset "
               "committed past the end); lag is clamped to 0"),
        column("committed_below_log_start", T.BooleanType(),
               "the committed offset is below earliest_offset: those messages were deleted by retention or "
               "DeleteRecords, and lag counts from the log start"),
        column("lag_seconds_interpolated", T.DoubleType(),
               "estimator 1 (interpolation): snapshot_time minus the time at which the partition's high "
               "watermark reached committed_offset, interpolated linearly between the two snapshots that "
               "bracket it; 0 when lag is 0; null when no earlier snapshot is at or below the committed offset"),
        column("lag_seconds_message_timestamp", T.DoubleType(),
               "estimator 2 (message timestamp): snapshot_time minus the timestamp of the message at "
               "committed_offset (read by the snapshot); 0 when lag is 0; null when it was not read"),
        column("committed_message_timestamp", T.TimestampType(), "timestamp of the message at committed_offset"),
        column("partition_status", T.StringType(),
               f"Burrow status of the partition over the window ({', '.join(STATUSES)}); null when nothing "
               "is committed"),
        column("window_commits", T.IntegerType(), "commits in the Burrow window (at most lag.intervals)"),
        column("window_complete", T.DoubleType(), "window_commits / lag.intervals, at most 1 (Burrow's Complete)"),
        column("group_status", T.StringType(),
               f"Burrow status of the group ({', '.join(GROUP_STATUSES)}): the worst partition status, "
               "STOP/STALL/REWIND reported as ERR; NOTFOUND when none of its partitions has a commit", False),
        column("group_lag", T.LongType(), "the group's total lag over all its partitions at this snapshot"),
        column("snapshot_date", T.DateType(), "UTC date of snapshot_time (partition column)", False),
    ]),
    partition_by=("snapshot_date",),
    key=("cluster_name", "snapshot_id", "group", "topic", "partition"),
    constraints=(LAG_IS_CLAMPED_OR_FLAGGED, PARTITION_STATUS_IS_BURROWS, GROUP_STATUS_IS_BURROWS),
    incremental=Incremental.APPEND_NEW_SNAPSHOTS,
)
END_OFFSETS = partition_end_offsets.TABLE
COMMITS = offset_commits.TABLE
GROUP_METADATA = group_metadata.TABLE
GROUP_RECORDS = consumer_group_records.TABLE
#: silver.consumer_group_records types whose tombstone deletes a group that commits offsets.
GROUP_TOMBSTONE_TYPES = ("consumer_group_metadata", "streams_group_metadata")

# What partition_rows returns: times as epoch ms, converted to timestamps in Spark.
_ROW_COLUMNS: tuple[tuple[str, str], ...] = (
    ("cluster_name", "string"), ("snapshot_id", "bigint"), ("group", "string"), ("topic", "string"),
    ("partition", "int"), ("committed_offset", "bigint"), ("commit_ms", "bigint"), ("earliest_offset", "bigint"),
    ("latest_offset", "bigint"), ("last_stable_offset", "bigint"), ("lag", "bigint"),
    ("commit_ahead_of_snapshot", "boolean"), ("committed_below_log_start", "boolean"),
    ("lag_seconds_interpolated", "double"), ("lag_seconds_message_timestamp", "double"),
    ("committed_message_ms", "bigint"), ("partition_status", "string"), ("window_commits", "int"),
    ("window_complete", "double"),
)
_PANDAS_TYPES = {"string": "object", "bigint": "Int64", "int": "Int32", "boolean": "boolean", "double": "Float64"}


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: int
    earliest: int
    latest: int
    last_stable: int
    message_ms: dict[int, int]  # committed offset -> timestamp of the message there


@dataclass(frozen=True)
class Commit:
    """One offset record of a group on one partition, or (``group_removed``) the group's tombstone."""

    group: str
    offset: int | None  # None for a tombstone
    time_ms: int
    group_removed: bool = False  # the group's own tombstone (GroupMetadata, ConsumerGroupMetadata, ...)


@dataclass(frozen=True)
class LagRefreshReport:
    snapshots: int  # snapshots computed and appended
    rows: int
    seconds: float
    newest_snapshot_id: int | None


class _Replay:
    """One group's offset records on one partition, taken in the order they were written up to a time: the record
    in force (``current``; None before the first, or once deleted with the group) and Burrow's window of commits."""

    def __init__(self, commits: list[Commit], snapshots: list[Snapshot], times: list[int], lag: LagSettings) -> None:
        self.commits, self.snapshots, self.times = commits, snapshots, times
        self.window = CommitWindow(lag.intervals, lag.min_distance_seconds)
        self.current: Commit | None = None
        self.taken = 0

    def absorb(self, until_ms: int) -> None:
        """Take the records written at or before ``until_ms``."""
        while self.taken < len(self.commits) and self.commits[self.taken].time_ms <= until_ms:
            commit = self.commits[self.taken]
            self.taken += 1
            if commit.group_removed:
                if self.current is not None and self.current.offset is None:
                    self.current = None  # deleted with the group: no row until it commits here again
                continue
            self.current = commit
            if commit.offset is None:
                self.window.clear()  # the offset was deleted: Burrow's history of it ends too
                continue
            # Lag stored with the commit, against the newest snapshot taken at or before it.
            known = bisect.bisect_right(self.times, commit.time_ms) - 1
            self.window.add(commit.offset, commit.time_ms,
                            commit_lag(self.snapshots[known].latest if known >= 0 else None, commit.offset))


def partition_rows(cluster: str, topic: str, partition: int, snapshots: list[Snapshot], commits: list[Commit],
                   lag: LagSettings, after_snapshot_id: int | None = None) -> Iterator[dict[str, Any]]:
    """gold.consumer_lag rows of one partition (pure Python).

    ``snapshots`` and ``commits`` are in time order (commits in the order they
    were written to __consumer_offsets). Rows are produced for snapshots with
    ``snapshot_id > after_snapshot_id``; the older ones still build the windows.

    The commits up to the last older snapshot are taken in one pass, not snapshot by snapshot (the older
    snapshots give no row, so stepping through them only added a loop over every snapshot ever taken, per
    group), and the interpolation reads the high-watermark history through ``WatermarkHistory`` (a binary
    search instead of a scan per row): the same rows, at a cost that no longer grows with the history per row.
    """
    times = [s.snapshot_id for s in snapshots]
    watermarks = WatermarkHistory.of([(s.snapshot_id, s.latest) for s in snapshots])
    first = 0 if after_snapshot_id is None else bisect.bisect_right(times, after_snapshot_id)
    by_group: dict[str, list[Commit]] = {}
    for c in commits:
        by_group.setdefault(c.group, []).append(c)

    for group, group_commits in sorted(by_group.items()):
        replay = _Replay(group_commits, snapshots, times, lag)
        if first > 0:
            replay.absorb(snapshots[first - 1].snapshot_id)
        for index in range(first, len(snapshots)):
            snap = snapshots[index]
            replay.absorb(snap.snapshot_id)
            current, window = replay.current, replay.window
            if current is None:
                continue
            committed = current.offset
            messages = lag_in_messages(committed, snap.earliest, snap.latest)
            message_ms = snap.message_ms.get(committed) if committed is not None else None
            row: dict[str, Any] = {
                "cluster_name": cluster, "snapshot_id": snap.snapshot_id, "group": group, "topic": topic,
                "partition": partition, "committed_offset": committed, "commit_ms": current.time_ms,
                "earliest_offset": snap.earliest, "latest_offset": snap.latest,
                "last_stable_offset": snap.last_stable, "lag": messages.lag,
                "commit_ahead_of_snapshot": messages.commit_ahead_of_snapshot,
                "committed_below_log_start": messages.committed_below_log_start,
                "lag_seconds_interpolated": lag_seconds_interpolated(
                    watermarks.upto(index + 1), snap.snapshot_id, committed, snap.earliest, messages.lag),
                "lag_seconds_message_timestamp": lag_seconds_from_message(snap.snapshot_id, message_ms, messages.lag),
                "committed_message_ms": message_ms,
                "partition_status": None, "window_commits": 0, "window_complete": 0.0,
            }
            if committed is not None and len(window):
                # Burrow's CurrentLag: latest broker offset minus the last commit, 0 when ahead (fetchConsumer);
                # its broker-offset ring: the last `intervals` high watermarks.
                observations = window.observations
                broker_offsets = [s.latest for s in snapshots[max(0, index + 1 - lag.intervals):index + 1]]
                evaluation = evaluate_partition(
                    observations, lag.intervals, broker_offsets,
                    commit_lag(snap.latest, observations[-1].offset) or 0, snap.snapshot_id // 1000,
                    lag.allowed_lag, lag.minimum_complete)
                row.update(partition_status=evaluation.status.name, window_commits=len(evaluation.window),
                           window_complete=evaluation.complete)
            yield row


def _rows_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame(rows, columns=[name for name, _ in _ROW_COLUMNS])
    return frame.astype({name: _PANDAS_TYPES[kind] for name, kind in _ROW_COLUMNS})


def _apply(lag: LagSettings, after_snapshot_id: int | None):  # type: ignore[no-untyped-def]
    def compute(key: tuple[Any, ...], snaps: pd.DataFrame, commits: pd.DataFrame) -> pd.DataFrame:
        """The rows of every partition of one topic: ``partition_rows`` per partition."""
        import pandas as pd

        cluster, topic = key
        if snaps.empty or commits.empty:
            return _rows_frame([])
        snaps = snaps.sort_values(["partition", "snapshot_id"])
        commits = commits.sort_values(["partition", "time_ms", "source_partition", "source_offset"])
        snapshots_of: dict[int, list[Snapshot]] = {}
        for partition, snapshot_id, earliest, latest, stable, offsets, times in zip(
                snaps["partition"].tolist(), snaps["snapshot_id"].tolist(), snaps["earliest_offset"].tolist(),
                snaps["latest_offset"].tolist(), snaps["last_stable_offset"].tolist(),
                snaps["message_offsets"].tolist(), snaps["message_ms"].tolist(), strict=True):
            messages = dict(zip((int(o) for o in offsets), (int(t) for t in times), strict=True)) \
                if offsets is not None else {}
            snapshots_of.setdefault(int(partition), []).append(
                Snapshot(int(snapshot_id), int(earliest), int(latest), int(stable), messages))
        commits_of: dict[int, list[Commit]] = {}
        offset_column = commits["offset"].astype("Int64")
        for partition, group, offset, tombstone, time_ms, removed in zip(
                commits["partition"].tolist(), commits["group"].tolist(), offset_column.tolist(),
                commits["is_tombstone"].tolist(), commits["time_ms"].tolist(), commits["group_removed"].tolist(),
                strict=True):
            none = bool(tombstone) or offset is pd.NA  # Int64's missing value
            commits_of.setdefault(int(partition), []).append(
                Commit(group, None if none else int(offset), int(time_ms), bool(removed)))
        rows: list[dict[str, Any]] = []
        for partition in sorted(snapshots_of.keys() & commits_of.keys()):
            rows.extend(partition_rows(cluster, topic, partition, snapshots_of[partition], commits_of[partition],
                                       lag, after_snapshot_id))
        return _rows_frame(rows)

    return compute


def group_tombstones(spark: SparkSession, settings: Settings) -> DataFrame:
    """(cluster_name, group, time_ms, source_partition, source_offset) of every group tombstone of the cluster.

    A classic group's is its GroupMetadata tombstone (silver.group_metadata); a KIP-848 consumer
    group's its ConsumerGroupMetadata tombstone, a streams group's (KIP-1071) its
    StreamsGroupMetadata tombstone (silver.consumer_group_records). Share groups keep no offsets
    in __consumer_offsets. Its time is the record's: the coordinator wrote it in the same append
    as the offset tombstones before it, which the position orders it after.
    """
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table

    cluster = F.col("cluster_name") == settings.cluster_name
    position = [F.unix_millis("record_timestamp").alias("time_ms"), "source_partition", "source_offset"]
    classic = read_table(spark, settings, GROUP_METADATA).filter(cluster & F.col("is_tombstone")).select(
        "cluster_name", "group", *position)
    typed = read_table(spark, settings, GROUP_RECORDS).filter(
        cluster & F.col("is_tombstone") & F.col("type").isin(*GROUP_TOMBSTONE_TYPES)).select(
        "cluster_name", F.col("group_id").alias("group"), *position)
    return classic.unionByName(typed)


def consumer_lag_frame(spark: SparkSession, settings: Settings, after_snapshot_id: int | None = None) -> DataFrame:
    """gold.consumer_lag rows for the snapshots newer than ``after_snapshot_id`` (all when None)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table

    cluster = F.col("cluster_name") == settings.cluster_name
    # The messages at the committed offsets matter only to the snapshots that get rows; the older ones give the
    # high-watermark history (and the newest one before each commit), not their arrays.
    with_rows = F.lit(True) if after_snapshot_id is None else F.col("snapshot_id") > after_snapshot_id
    snaps = read_table(spark, settings, END_OFFSETS).filter(cluster).select(
        "cluster_name", "topic", "partition", "snapshot_id", "earliest_offset", "latest_offset",
        "last_stable_offset",
        F.when(with_rows, F.transform("committed_messages", lambda m: m["offset"])).alias("message_offsets"),
        F.when(with_rows, F.transform("committed_messages", lambda m: F.unix_millis(m["message_timestamp"])))
        .alias("message_ms"),
    )
    offsets = read_table(spark, settings, COMMITS).filter(cluster).select(
        "cluster_name", "topic", "partition", "group", "offset", "is_tombstone",
        # A tombstone has no commit_timestamp: its time is when it was written.
        F.unix_millis(F.coalesce("commit_timestamp", "record_timestamp")).alias("time_ms"),
        "source_partition", "source_offset", F.lit(False).alias("group_removed"),
    ).filter(F.col("time_ms").isNotNull())
    # Each group tombstone, on every partition the group has an offset record for (few rows: deletions).
    removals = group_tombstones(spark, settings).join(
        offsets.select("cluster_name", "group", "topic", "partition").distinct(), ["cluster_name", "group"])
    commits = offsets.unionByName(removals.select(
        "cluster_name", "topic", "partition", "group", F.lit(None).cast("bigint").alias("offset"),
        F.lit(True).alias("is_tombstone"), "time_ms", "source_partition", "source_offset",
        F.lit(True).alias("group_removed")))
    if after_snapshot_id is not None and settings.lag.min_distance_seconds == 0:
        commits = recent_records(commits, after_snapshot_id, settings.lag.intervals)
    # One Python call per topic, not per partition: at 10,000 groups (75,000 partitions, bench/scale.py) the
    # pandas set-up of ~75,000 calls was most of the step; a topic's partitions are replayed in one call.
    keys = ["cluster_name", "topic"]
    schema = ", ".join(f"`{name}` {kind}" for name, kind in _ROW_COLUMNS)
    rows = snaps.groupBy(*keys).cogroup(commits.groupBy(*keys)).applyInPandas(
        _apply(settings.lag, after_snapshot_id), schema)

    # Group status: Burrow's evaluateConsumerStatus, the worst partition status with STOP, STALL and
    # REWIND reported as ERR (pipelines.burrow_status.group_status, in Spark over each snapshot's group).
    rank = F.create_map(*[x for s in Status for x in (F.lit(s.name), F.lit(int(s)))])
    per_group = Window.partitionBy("cluster_name", "snapshot_id", "group")
    worst = F.max(rank[F.col("partition_status")]).over(per_group)
    group_status = (F.when(worst.isNull(), F.lit(Status.NOTFOUND.name))
                    .when(worst > int(Status.ERR), F.lit(Status.ERR.name))
                    .when(worst == int(Status.WARN), F.lit(Status.WARN.name))
                    .otherwise(F.lit(Status.OK.name)))
    snapshot_time = F.timestamp_millis(F.col("snapshot_id"))
    return rows.select(
        "cluster_name", "snapshot_id", snapshot_time.alias("snapshot_time"), "group", "topic", "partition",
        "committed_offset", F.timestamp_millis("commit_ms").alias("commit_time"), "earliest_offset",
        "latest_offset", "last_stable_offset", "lag", "commit_ahead_of_snapshot", "committed_below_log_start",
        "lag_seconds_interpolated", "lag_seconds_message_timestamp",
        F.timestamp_millis("committed_message_ms").alias("committed_message_timestamp"),
        "partition_status", "window_commits", "window_complete", group_status.alias("group_status"),
        F.sum("lag").over(per_group).alias("group_lag"), F.to_date(snapshot_time).alias("snapshot_date"),
    )


def recent_records(commits: DataFrame, after_snapshot_id: int, intervals: int) -> DataFrame:
    """The offset records a refresh of the snapshots after ``after_snapshot_id`` needs, of all ``commits``.

    ``partition_rows`` replays a group's records on a partition in the order they were written; what the
    records up to ``after_snapshot_id`` leave behind is the record in force and Burrow's window, the last
    ``intervals`` commits since the last offset tombstone (with ``min_distance_seconds`` 0, Burrow's default, no
    commit merges into an earlier one, so the window is exactly those). Both are decided by the last
    ``intervals`` records before that time, whatever came earlier: those are kept, with every record after it
    and every group tombstone (few; one before the kept records finds no deleted offset in force and changes
    nothing). So the Python replay reads what is new plus ``intervals`` records per (group, partition) instead
    of the whole history, and gives the same rows (a test compares them with a replay of everything). With
    ``min_distance_seconds`` above 0 the window's entries depend on where each run of close commits began,
    which can lie before any cut: the caller passes every record then.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    new = F.col("time_ms") > after_snapshot_id
    latest_first = Window.partitionBy("cluster_name", "topic", "partition", "group", "group_removed", new).orderBy(
        F.col("time_ms").desc(), F.col("source_partition").desc(), F.col("source_offset").desc())
    return (commits.withColumn("_recent", F.row_number().over(latest_first))
            .filter(F.col("group_removed") | new | (F.col("_recent") <= intervals)).drop("_recent"))


def app_id(settings: Settings) -> str:
    return f"offsetlake-consumer-lag:{settings.cluster_name}"


def refresh_consumer_lag(spark: SparkSession, settings: Settings, *, full: bool = False) -> LagRefreshReport:
    """Append gold.consumer_lag rows for the snapshots not yet in it (all of them with ``full``)."""
    from pyspark.sql import functions as F

    from pipelines.delta_tables import ensure_current_table, ensure_table, read_table, table_path

    started = time.monotonic()
    for spec in (END_OFFSETS, COMMITS, GROUP_METADATA, GROUP_RECORDS):
        ensure_table(spark, settings, spec)
    ensure_current_table(spark, settings, TABLE)  # a table from before gains the CHECK constraints
    cluster = F.col("cluster_name") == settings.cluster_name
    done = None
    if not full:
        done = read_table(spark, settings, TABLE).filter(cluster).agg(F.max("snapshot_id")).first()[0]
    pending = read_table(spark, settings, END_OFFSETS).filter(cluster)
    if done is not None:
        pending = pending.filter(F.col("snapshot_id") > done)
    bounds = pending.agg(F.count_distinct("snapshot_id"), F.max("snapshot_id")).first()
    count, newest = int(bounds[0]), bounds[1]
    if not count and not full:
        return LagRefreshReport(0, 0, time.monotonic() - started, None)

    frame = consumer_lag_frame(spark, settings, done).select(*TABLE.schema.fieldNames()).cache()
    try:
        rows = frame.count()
        writer = frame.write.format("delta")
        if full:
            # Replace this cluster's rows only; a full rebuild has its own transaction id.
            (writer.mode("overwrite").option("replaceWhere", f"cluster_name = '{settings.cluster_name}'")
             .option("txnAppId", app_id(settings) + ":full").option("txnVersion", str(time.time_ns()))
             .save(str(table_path(settings, TABLE))))
        else:
            (writer.mode("append").option("txnAppId", app_id(settings)).option("txnVersion", str(newest))
             .save(str(table_path(settings, TABLE))))
    finally:
        frame.unpersist()
    return LagRefreshReport(count, rows, time.monotonic() - started, newest)


def latest_status(spark: SparkSession, settings: Settings, group: str | None = None) -> list[dict[str, Any]]:
    """Per (group, topic, partition), its row at the newest snapshot that has one, for printing.

    Only rows at their partition's newest computed snapshot count: a group whose lag ended (deleted,
    see the module docstring) has no row there and is not shown with its last lag from before.
    Snapshots of different topics are taken apart (``snapshot-end-offsets --topics``), hence per
    partition.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table

    cluster = F.col("cluster_name") == settings.cluster_name
    table = read_table(spark, settings, TABLE).filter(cluster)
    computed = table.agg(F.max("snapshot_id")).first()[0]  # the refresh wrote the snapshots up to here
    if computed is None:
        return []
    if group is not None:
        table = table.filter(F.col("group") == group)
    newest_per_partition = read_table(spark, settings, END_OFFSETS).filter(
        cluster & (F.col("snapshot_id") <= computed)).groupBy("topic", "partition").agg(
        F.max("snapshot_id").alias("snapshot_id"))
    table = table.join(newest_per_partition, ["topic", "partition", "snapshot_id"], "left_semi")
    newest = Window.partitionBy("group").orderBy(F.col("snapshot_id").desc())
    rows = (table.withColumn("_rank", F.dense_rank().over(newest)).filter("_rank = 1").drop("_rank")
            .orderBy("group", "topic", "partition").collect())
    return [row.asDict() for row in rows]
