-- Question: What is every consumer group doing now: its state, members, last commit, lag and Burrow status?
-- Parameters: none. One row per cluster and group found in gold.committed_offsets, gold.group_state_history
--   or gold.consumer_lag. state, generation and members come from the group records (gold.group_state_history,
--   gold.group_membership; null for a group they do not describe); lag and burrow_status from its newest lag
--   snapshot; seconds_since_last_commit is measured against the time of the query. max_lag_seconds_<estimator>
--   is the largest positive estimate among the lagging partitions (lag > 0), 0 when none lags, null when
--   some lag but none has an estimate; lag_seconds_unknown_<estimator> counts the lagging partitions without
--   one, so a lagging group is never shown as 0 s (issue 12, item 8). The HTML page's status table is this view.
-- Reads: gold.committed_offsets, gold.group_state_history, gold.group_membership, gold.consumer_lag
-- Example: SELECT `group`, state, members, burrow_status, total_lag FROM dashboards.consumer_status_now
--   ORDER BY total_lag DESC NULLS LAST
WITH state_now AS (
  SELECT cluster_name, `group`, max_by(state, at) AS state, max(at) AS state_since,
         max_by(generation, at) AS generation
  FROM gold.group_state_history
  GROUP BY cluster_name, `group`
),
members_now AS (
  SELECT cluster_name, `group`, count(*) AS members
  FROM gold.group_membership
  WHERE valid_to IS NULL
  GROUP BY cluster_name, `group`
),
commits AS (
  SELECT cluster_name, `group`, max(commit_timestamp) AS last_commit_at, count(*) AS committed_partitions
  FROM gold.committed_offsets
  GROUP BY cluster_name, `group`
),
newest_lag AS (
  SELECT * FROM (
    SELECT *, max(snapshot_time) OVER (PARTITION BY cluster_name, `group`) AS newest_snapshot_time
    FROM gold.consumer_lag
  ) WHERE snapshot_time = newest_snapshot_time
),
lag_now AS (
  SELECT cluster_name, `group`, max(snapshot_time) AS lag_snapshot_time, max(group_status) AS burrow_status,
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
  FROM newest_lag
  GROUP BY cluster_name, `group`
),
known_groups AS (
  SELECT cluster_name, `group` FROM commits
  UNION SELECT cluster_name, `group` FROM state_now
  UNION SELECT cluster_name, `group` FROM lag_now
)
SELECT
  g.cluster_name,
  g.`group`,
  s.state,
  s.state_since,
  s.generation,
  CASE WHEN s.state IS NULL THEN m.members ELSE coalesce(m.members, 0) END AS members,
  c.last_commit_at,
  timestampdiff(SECOND, c.last_commit_at, current_timestamp()) AS seconds_since_last_commit,
  c.committed_partitions,
  l.burrow_status,
  l.total_lag,
  l.lagging_partitions,
  l.max_lag_seconds_interpolated,
  l.lag_seconds_unknown_interpolated,
  l.max_lag_seconds_message_timestamp,
  l.lag_seconds_unknown_message_timestamp,
  l.partitions_not_ok,
  l.stopped_partitions,
  l.lag_snapshot_time
FROM known_groups g
LEFT JOIN state_now s ON s.cluster_name = g.cluster_name AND s.`group` = g.`group`
LEFT JOIN members_now m ON m.cluster_name = g.cluster_name AND m.`group` = g.`group`
LEFT JOIN commits c ON c.cluster_name = g.cluster_name AND c.`group` = g.`group`
LEFT JOIN lag_now l ON l.cluster_name = g.cluster_name AND l.`group` = g.`group`
