"""gold.consumer_lag: lag and Burrow status of every (group, topic, partition) at every end-offset snapshot."""

from __future__ import annotations

from pyspark.sql import types as T

from schemas.table_spec import Constraint, TableSpec, column

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
)
