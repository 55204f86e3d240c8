-- Question: How did each group's lag evolve, snapshot by snapshot?
-- Parameters: the group and a time range; filter with WHERE `group` = '...' AND snapshot_time >= ...,
--   ORDER BY snapshot_time. One row per cluster, group and end-offset snapshot at which the group had
--   committed offsets (per-partition detail is in gold.consumer_lag).
-- Reads: gold.consumer_lag
-- Example: SELECT snapshot_time, total_lag, group_status FROM dashboards.lag_over_time
--   WHERE `group` = 'billing' ORDER BY snapshot_time
SELECT
  cluster_name,
  `group`,
  snapshot_id,
  snapshot_time,
  max(group_status) AS group_status,
  max(group_lag) AS total_lag,
  max(lag) AS max_partition_lag,
  max(lag_seconds_interpolated) AS max_lag_seconds_interpolated,
  max(lag_seconds_message_timestamp) AS max_lag_seconds_message_timestamp,
  count(*) AS partitions,
  count_if(partition_status IS NOT NULL AND partition_status <> 'OK') AS partitions_not_ok
FROM gold.consumer_lag
GROUP BY cluster_name, `group`, snapshot_id, snapshot_time
