"""Expectations on gold.consumer_lag: lag is non-negative or flagged, statuses are Burrow's.

The lag rule and the two status rules are CHECK constraints of the table too (pipelines/gold/consumer_lag.py): Delta
enforces them at write, and the check reads that instead of scanning."""

from __future__ import annotations

from pipelines.gold import consumer_lag
from quality.suite import Rule, Scope, Suite, enforced_by, unexpected_rows

TABLE = consumer_lag.TABLE.name

LAG_NON_NEGATIVE_OR_FLAGGED = Rule(
    "lag_is_non_negative_or_flagged", "critical",
    "Lag is latest_offset - max(committed_offset, earliest_offset), clamped at 0: never negative, null exactly "
    "when nothing is committed, and a commit above the high watermark or below the log start is flagged "
    "(commit_ahead_of_snapshot, committed_below_log_start) rather than silently distorting the lag.",
    enforced_by(consumer_lag.LAG_IS_CLAMPED_OR_FLAGGED,
                "cluster_name, snapshot_id, `group`, topic, `partition`, committed_offset, earliest_offset, "
                "latest_offset, lag, commit_ahead_of_snapshot, committed_below_log_start"),
    constraint=consumer_lag.LAG_IS_CLAMPED_OR_FLAGGED,
    scope=Scope.ROW,
)

SNAPSHOT_OFFSETS_ORDERED = Rule(
    "snapshot_offsets_are_ordered", "critical",
    "ListOffsets answers log start <= high watermark and last stable offset <= high watermark (KIP-98); "
    "otherwise the snapshot was mis-recorded and every lag computed from it is wrong.",
    unexpected_rows("""
        SELECT cluster_name, snapshot_id, topic, `partition`, earliest_offset, last_stable_offset, latest_offset
        FROM {batch}
        WHERE earliest_offset < 0 OR earliest_offset > latest_offset OR last_stable_offset > latest_offset"""),
    scope=Scope.ROW,
)

PARTITION_STATUS_IS_BURROWS = Rule(
    "partition_status_is_a_burrow_status", "critical",
    "Dashboards and alerts match on Burrow's partition statuses; anything else is a bug in the evaluator.",
    enforced_by(consumer_lag.PARTITION_STATUS_IS_BURROWS,
                "cluster_name, snapshot_id, `group`, topic, `partition`, partition_status"),
    constraint=consumer_lag.PARTITION_STATUS_IS_BURROWS,
    scope=Scope.ROW,
)

GROUP_STATUS_IS_BURROWS = Rule(
    "group_status_is_a_burrow_status", "critical",
    "Dashboards and alerts match on Burrow's group statuses; anything else is a bug in the evaluator.",
    enforced_by(consumer_lag.GROUP_STATUS_IS_BURROWS, "cluster_name, snapshot_id, `group`, group_status"),
    constraint=consumer_lag.GROUP_STATUS_IS_BURROWS,
    scope=Scope.ROW,
)

LAG_SECONDS_NON_NEGATIVE = Rule(
    "lag_seconds_are_non_negative", "warning",
    "Both lag-in-seconds estimators age the oldest unread message; a negative age means a producer's "
    "CreateTime or the broker clock is ahead of offsetlake's clock.",
    unexpected_rows("""
        SELECT cluster_name, snapshot_id, snapshot_time, `group`, topic, `partition`, lag_seconds_interpolated,
               lag_seconds_message_timestamp, committed_message_timestamp
        FROM {batch} WHERE lag_seconds_interpolated < 0 OR lag_seconds_message_timestamp < 0"""),
    scope=Scope.ROW,
)

SNAPSHOT_TIMES_WITHIN_BOUNDS = Rule(
    "snapshot_times_are_within_bounds", "critical",
    "Snapshots are taken by offsetlake now; a time before quality.earliest_timestamp or ahead of now by more "
    "than quality.future_slack_seconds would misplace the whole lag history.",
    unexpected_rows("""
        SELECT DISTINCT cluster_name, snapshot_id, snapshot_time FROM {batch}
        WHERE snapshot_time < TIMESTAMP '$earliest_timestamp'
           OR snapshot_time > current_timestamp() + INTERVAL $future_slack_seconds SECONDS"""),
    scope=Scope.ROW,
)

SUITE = Suite("consumer_lag", TABLE, (
    LAG_NON_NEGATIVE_OR_FLAGGED, SNAPSHOT_OFFSETS_ORDERED, PARTITION_STATUS_IS_BURROWS, GROUP_STATUS_IS_BURROWS,
    LAG_SECONDS_NON_NEGATIVE, SNAPSHOT_TIMES_WITHIN_BOUNDS,
))
