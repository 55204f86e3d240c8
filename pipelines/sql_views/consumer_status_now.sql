-- Question: What is every consumer group doing now: its state, members, last commit, lag and Burrow status?
-- Parameters: none. One row per cluster and group found in gold.committed_offsets, gold.group_state_history
--   or gold.consumer_lag. state, generation and members come from the group records (gold.group_state_history,
--   gold.group_membership; null for a group they do not describe); lag and burrow_status from its newest lag
--   snapshot; seconds_since_last_commit is measured against the time of the query. max_lag_seconds_<estimator>
--   is the largest positive estimate among the lagging partitions (lag > 0), 0 when none lags, null when
--   some lag but none has an estimate; lag_seconds_unknown_<estimator> counts the lagging partitions without
--   one, so a lagging group is never shown as 0 s. group_type is the current state's ('classic', 'consumer',
--   'share', 'streams'; null without state rows): share and streams groups are listed like the others. The HTML
--   page's status table is this view.
-- Reads: gold.committed_offsets, gold.group_state_history, gold.group_membership, gold.consumer_lag
-- Example: SELECT `group`, state, members, burrow_status, total_lag FROM dashboards.consumer_status_now
--   ORDER BY total_lag DESC NULLS LAST

-- One scan of each table and one aggregation by group: the four tables' rows are tagged and unioned, not
--   aggregated apart and joined (five shuffles fewer; over serve-sql the joined form took longer than the 2 s
--   an interactive query should take, recorded in CHANGELOG.md). A group's newest lag snapshot is
--   max_by(..., snapshot_time) over its per-snapshot aggregates. A group's state is its row of
--   gold.group_state_history without an `until` (gold orders a generation's states by record and position,
--   so that row is the current one), not max_by(state, at): CompletingRebalance and Stable often share their
--   millisecond, and max_by picked either (Spark and DataFusion disagreed on the demo warehouse).
WITH lag_snapshots AS (
  SELECT cluster_name, `group`, snapshot_time, max(group_status) AS burrow_status,
         max(group_lag) AS total_lag,
         count_if(lag > 0) AS lagging_partitions,
         coalesce(max(CASE WHEN lag > 0 AND lag_seconds_interpolated > 0 THEN lag_seconds_interpolated END),
                  CASE WHEN count_if(lag > 0) = 0 THEN CAST(0 AS DOUBLE) END) AS max_lag_seconds_interpolated,
         count_if(lag > 0 AND (lag_seconds_interpolated IS NULL OR lag_seconds_interpolated <= 0))
           AS lag_seconds_unknown_interpolated,
         coalesce(max(CASE WHEN lag > 0 AND lag_seconds_message_timestamp > 0 THEN lag_seconds_message_timestamp END),
                  CASE WHEN count_if(lag > 0) = 0 THEN CAST(0 AS DOUBLE) END) AS max_lag_seconds_message_timestamp,
         count_if(lag > 0 AND (lag_seconds_message_timestamp IS NULL OR lag_seconds_message_timestamp <= 0))
           AS lag_seconds_unknown_message_timestamp,
         count_if(partition_status IN ('STOP', 'STALL')) AS stopped_partitions,
         count_if(partition_status IS NOT NULL AND partition_status <> 'OK') AS partitions_not_ok
  FROM gold.consumer_lag
  GROUP BY cluster_name, `group`, snapshot_time
),
facts AS (
  SELECT cluster_name, `group`, state, at AS state_at, generation, CAST(NULL AS INT) AS open_member,
         CAST(NULL AS TIMESTAMP) AS commit_timestamp, CAST(NULL AS INT) AS committed_partition,
         CAST(NULL AS TIMESTAMP) AS snapshot_time, CAST(NULL AS STRING) AS burrow_status, CAST(NULL AS BIGINT) AS total_lag,
         CAST(NULL AS BIGINT) AS lagging_partitions, CAST(NULL AS DOUBLE) AS max_lag_seconds_interpolated,
         CAST(NULL AS BIGINT) AS lag_seconds_unknown_interpolated, CAST(NULL AS DOUBLE) AS max_lag_seconds_message_timestamp,
         CAST(NULL AS BIGINT) AS lag_seconds_unknown_message_timestamp, CAST(NULL AS BIGINT) AS stopped_partitions,
         CAST(NULL AS BIGINT) AS partitions_not_ok, group_type
  FROM gold.group_state_history
  WHERE until IS NULL
  UNION ALL
  SELECT cluster_name, `group`, NULL, NULL, NULL, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         NULL
  FROM gold.group_membership WHERE valid_to IS NULL
  UNION ALL
  SELECT cluster_name, `group`, NULL, NULL, NULL, NULL, commit_timestamp, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         NULL
  FROM gold.committed_offsets
  UNION ALL
  SELECT cluster_name, `group`, NULL, NULL, NULL, NULL, NULL, NULL, snapshot_time, burrow_status, total_lag,
         lagging_partitions, max_lag_seconds_interpolated, lag_seconds_unknown_interpolated,
         max_lag_seconds_message_timestamp, lag_seconds_unknown_message_timestamp, stopped_partitions, partitions_not_ok,
         NULL
  FROM lag_snapshots
),
per_group AS (
  SELECT cluster_name, `group`,
         max_by(state, state_at) AS state, max(state_at) AS state_since, max_by(generation, state_at) AS generation,
         count(open_member) AS open_members, count(state_at) AS state_rows,
         max(commit_timestamp) AS last_commit_at, count(committed_partition) AS committed_partitions,
         max(snapshot_time) AS lag_snapshot_time,
         max_by(burrow_status, snapshot_time) AS burrow_status, max_by(total_lag, snapshot_time) AS total_lag,
         max_by(lagging_partitions, snapshot_time) AS lagging_partitions,
         max_by(max_lag_seconds_interpolated, snapshot_time) AS max_lag_seconds_interpolated,
         max_by(lag_seconds_unknown_interpolated, snapshot_time) AS lag_seconds_unknown_interpolated,
         max_by(max_lag_seconds_message_timestamp, snapshot_time) AS max_lag_seconds_message_timestamp,
         max_by(lag_seconds_unknown_message_timestamp, snapshot_time) AS lag_seconds_unknown_message_timestamp,
         max_by(partitions_not_ok, snapshot_time) AS partitions_not_ok,
         max_by(stopped_partitions, snapshot_time) AS stopped_partitions,
         max_by(group_type, state_at) AS group_type
  FROM facts
  GROUP BY cluster_name, `group`
)
SELECT
  cluster_name, `group`, state, state_since, generation,
  CASE WHEN state IS NULL THEN nullif(open_members, 0) ELSE open_members END AS members,
  last_commit_at,
  timestampdiff(SECOND, last_commit_at, current_timestamp()) AS seconds_since_last_commit,
  CASE WHEN committed_partitions > 0 THEN committed_partitions END AS committed_partitions,
  burrow_status, total_lag, lagging_partitions, max_lag_seconds_interpolated, lag_seconds_unknown_interpolated,
  max_lag_seconds_message_timestamp, lag_seconds_unknown_message_timestamp, partitions_not_ok, stopped_partitions,
  lag_snapshot_time, group_type
FROM per_group
WHERE committed_partitions > 0 OR state_rows > 0 OR lag_snapshot_time IS NOT NULL
