-- Question: When did a group rebalance, why (likely), and what did each rebalance change?
-- Parameters: the group; filter with WHERE `group` = '...' (and a time range on stable_at), ORDER BY stable_at.
--   One row per completed rebalance and per static member restart (event_type), oldest first per group.
--   When members stopped and for how long are bounds, not measurements (the start of a rebalance is never
--   recorded): every member that stopped did so within [stopped_at_lower_bound, stopped_at_upper_bound].
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
  stopped_at_lower_bound,
  stopped_at_upper_bound,
  stopped_ms_lower_bound,
  stopped_ms_upper_bound,
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
  triggered_by,
  protocol,
  rebalance_protocol,
  rebalances_in_window,
  is_storm
FROM gold.rebalance_events
