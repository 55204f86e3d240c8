-- Question: Which consumer groups rebalance the most, and how disruptive are their rebalances?
-- Parameters: none. One row per cluster and group with at least one completed rebalance; `rank` is 1 for the
--   group with the most rebalances in its cluster. Narrow with WHERE (cluster_name, last_rebalance_at).
--   How long members stopped is known only as bounds (gold.rebalance_events.stopped_ms_*): the longest
--   rebalance stopped its members at least max_stopped_ms_lower_bound and at most max_stopped_ms_upper_bound.
-- Reads: gold.rebalance_events
-- Example: SELECT `group`, rebalances, storm_rebalances, partitions_moved FROM dashboards.top_rebalancing_groups
--   WHERE rank <= 10 ORDER BY rank
SELECT
  cluster_name,
  `group`,
  rank() OVER (PARTITION BY cluster_name ORDER BY count(*) DESC) AS rank,
  count(*) AS rebalances,
  count_if(is_storm) AS storm_rebalances,
  count_if(stable_at >= current_timestamp() - INTERVAL 24 HOURS) AS rebalances_last_24h,
  sum(partitions_moved) AS partitions_moved,
  sum(size(members_joined)) AS members_joined,
  sum(size(members_left)) AS members_left,
  max(stopped_ms_lower_bound) AS max_stopped_ms_lower_bound,
  max(stopped_ms_upper_bound) AS max_stopped_ms_upper_bound,
  CAST(avg(stopped_ms_upper_bound) AS BIGINT) AS avg_stopped_ms_upper_bound,
  mode(likely_cause) AS most_common_cause,
  min(stable_at) AS first_rebalance_at,
  max(stable_at) AS last_rebalance_at
FROM gold.rebalance_events
WHERE event_type = 'rebalance'
GROUP BY cluster_name, `group`
