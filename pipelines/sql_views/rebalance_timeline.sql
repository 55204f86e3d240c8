-- Question: When did a group rebalance, why (likely), and what did each rebalance change?
-- Parameters: the group; filter with WHERE `group` = '...' (and a time range on stable_at), ORDER BY stable_at.
--   One row per completed rebalance and per static member restart (event_type), oldest first per group.
-- Reads: gold.rebalance_events
-- Example: SELECT stable_at, from_generation, to_generation, likely_cause, members_after, partitions_moved
--   FROM dashboards.rebalance_timeline WHERE `group` = 'billing' ORDER BY stable_at
SELECT
  cluster_name,
  `group`,
  event_type,
  from_generation,
  to_generation,
  last_stable_at,
  join_completed_at,
  stable_at,
  duration_upper_bound_ms,
  members_before,
  members_after,
  size(members_joined) AS joined_count,
  size(members_left) AS left_count,
  members_kept,
  members_joined,
  members_left,
  static_restarts,
  partitions_moved,
  partitions_kept,
  likely_cause,
  protocol,
  rebalance_protocol,
  rebalances_in_window,
  is_storm
FROM gold.rebalance_events
