-- Question: Who owned which partition, and when? Who owned it at a given moment?
-- Parameters: a point in time T; filter with
--   WHERE valid_from <= TIMESTAMP 'T' AND (valid_to IS NULL OR valid_to > TIMESTAMP 'T').
--   One row per partition, owner and generation (SCD2 intervals, half-open [valid_from, valid_to));
--   valid_to is null while current. Between a generation's start and its stored assignment (a rebalance in
--   progress) no row matches: the new owners were not recorded yet and the old ones' end is an upper bound.
--   To see what the warehouse itself held at an earlier version instead, use Delta time travel on the table:
--   SELECT * FROM gold.partition_assignments VERSION AS OF <v> (or TIMESTAMP AS OF '<ts>'); versions are
--   listed by DESCRIBE HISTORY gold.partition_assignments. KIP-848 groups also record the coordinator's
--   target assignment (assignment_kind 'target'): not ownership, so left out; a partition being revoked
--   ('pending_revocation') is still owned. A KIP-848 row's topic is named at read from its topic_id
--   (dashboards.topic_names) where the group's own records did not name it.
-- Reads: gold.partition_assignments, dashboards.topic_names
-- Example: SELECT topic, `partition`, client_id, generation FROM dashboards.partition_ownership
--   WHERE `group` = 'billing' AND valid_from <= TIMESTAMP '2026-01-01 12:00:00'
--   AND (valid_to IS NULL OR valid_to > TIMESTAMP '2026-01-01 12:00:00') ORDER BY topic, `partition`
-- Example: SELECT topic, `partition`, client_id, generation FROM gold.partition_assignments VERSION AS OF 0
--   WHERE valid_to IS NULL
-- Example: DESCRIBE HISTORY gold.partition_assignments
SELECT
  a.cluster_name,
  a.`group`,
  coalesce(a.topic, n.topic) AS topic,
  a.`partition`,
  a.member_id,
  a.client_id,
  a.group_instance_id,
  a.generation,
  a.assignment_kind,
  a.valid_from,
  a.valid_to,
  a.valid_to IS NULL AS is_current,
  (unix_micros(coalesce(a.valid_to, current_timestamp())) - unix_micros(a.valid_from)) / 1e6 AS owned_seconds,
  a.topic_id
FROM gold.partition_assignments AS a
LEFT JOIN dashboards.topic_names AS n ON a.cluster_name = n.cluster_name AND a.topic_id = n.topic_id
WHERE a.assignment_kind <> 'target'
