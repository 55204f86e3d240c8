-- Question: Which groups still hold committed offsets but look abandoned or stuck?
-- Parameters: none; the thresholds are fixed: a group is stale when it has committed offsets and
--   it is Empty (no members) or Dead, or it made no commit for 24 hours, or its newest lag snapshot has
--   partitions in Burrow's STOP or STALL. `reasons` lists which. For another threshold, query
--   dashboards.consumer_status_now WHERE seconds_since_last_commit > N.
-- Reads: dashboards.consumer_status_now
-- Example: SELECT `group`, reasons, last_commit_at, total_lag FROM dashboards.stale_groups
--   ORDER BY last_commit_at
SELECT * FROM (
  SELECT
    *,
    array_compact(array(
      CASE WHEN state = 'Empty' THEN 'empty' END,
      CASE WHEN state = 'Dead' THEN 'dead' END,
      CASE WHEN seconds_since_last_commit > 86400 THEN 'no_commit_24h' END,
      CASE WHEN stopped_partitions > 0 THEN 'stopped_or_stalled' END
    )) AS reasons
  FROM dashboards.consumer_status_now
  WHERE committed_partitions > 0
) WHERE size(reasons) > 0
