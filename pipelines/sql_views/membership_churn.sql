-- Question: How much do groups' memberships churn: members joining and leaving, hour by hour?
-- Parameters: the group and a time range; filter with WHERE `group` = '...' AND hour >= ..., ORDER BY hour.
--   One row per cluster, group and UTC hour in which a member appeared in or disappeared from the group's
--   records (gold.group_membership valid_from / valid_to; a static member's restart counts as one leave and
--   one join, since it gets a new member id). A KIP-848 member that changes its subscription keeps its
--   member id: its row ends where its next row starts, which is neither a leave nor a join.
-- Reads: gold.group_membership
-- Example: SELECT `group`, sum(churn) AS churn FROM dashboards.membership_churn
--   GROUP BY `group` ORDER BY churn DESC
WITH stays AS (
  SELECT cluster_name, `group`, valid_from, valid_to,
         lag(valid_to) OVER member_rows <=> valid_from AS continues_a_row,
         lead(valid_from) OVER member_rows <=> valid_to AS continued
  FROM gold.group_membership
  WINDOW member_rows AS (PARTITION BY cluster_name, `group`, member_id ORDER BY valid_from)
),
changes AS (
  SELECT cluster_name, `group`, date_trunc('HOUR', valid_from) AS hour, 1 AS joined, 0 AS departed
  FROM stays
  WHERE NOT continues_a_row
  UNION ALL
  SELECT cluster_name, `group`, date_trunc('HOUR', valid_to) AS hour, 0 AS joined, 1 AS departed
  FROM stays
  WHERE valid_to IS NOT NULL AND NOT continued
)
SELECT
  cluster_name,
  `group`,
  hour,
  sum(joined) AS members_joined,
  sum(departed) AS members_left,
  sum(joined) + sum(departed) AS churn
FROM changes
GROUP BY cluster_name, `group`, hour
