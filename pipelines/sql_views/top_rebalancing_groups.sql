-- Question: Which consumer groups rebalance the most, and how disruptive are their rebalances?
-- Parameters: none. One row per cluster and group with at least one completed rebalance; `rank` is 1 for the
--   group with the most rebalances in its cluster. Narrow with WHERE (cluster_name, last_rebalance_at).
--   How long members stopped is known only as bounds (gold.rebalance_events.stopped_ms_*): the longest
--   rebalance stopped its members at least max_stopped_ms_lower_bound and at most max_stopped_ms_upper_bound.
--   most_common_cause is the likely_cause of most of the group's rebalances (ties: the first by name, as Spark's
--   mode(likely_cause, true) would pick).
-- Reads: gold.rebalance_events
-- Example: SELECT `group`, rebalances, storm_rebalances, partitions_moved FROM dashboards.top_rebalancing_groups
--   WHERE rank <= 10 ORDER BY rank
WITH rebalances AS (
  SELECT * FROM gold.rebalance_events WHERE event_type = 'rebalance'
),
-- The mode of likely_cause, written out: DataFusion (the embedded engine) has no mode() aggregate.
causes AS (
  SELECT cluster_name, `group`, likely_cause,
         row_number() OVER (PARTITION BY cluster_name, `group` ORDER BY count(*) DESC, likely_cause) AS cause_rank
  FROM rebalances
  WHERE likely_cause IS NOT NULL
  GROUP BY cluster_name, `group`, likely_cause
)
SELECT
  r.cluster_name,
  r.`group`,
  rank() OVER (PARTITION BY r.cluster_name ORDER BY count(*) DESC) AS rank,
  count(*) AS rebalances,
  count_if(r.is_storm) AS storm_rebalances,
  count_if(r.stable_at >= current_timestamp() - INTERVAL 24 HOURS) AS rebalances_last_24h,
  sum(r.partitions_moved) AS partitions_moved,
  sum(size(r.members_joined)) AS members_joined,
  sum(size(r.members_left)) AS members_left,
  max(r.stopped_ms_lower_bound) AS max_stopped_ms_lower_bound,
  max(r.stopped_ms_upper_bound) AS max_stopped_ms_upper_bound,
  CAST(avg(r.stopped_ms_upper_bound) AS BIGINT) AS avg_stopped_ms_upper_bound,
  c.likely_cause AS most_common_cause,
  min(r.stable_at) AS first_rebalance_at,
  max(r.stable_at) AS last_rebalance_at
FROM rebalances r
LEFT JOIN causes c ON c.cluster_name = r.cluster_name AND c.`group` = r.`group` AND c.cause_rank = 1
GROUP BY r.cluster_name, r.`group`, c.likely_cause
