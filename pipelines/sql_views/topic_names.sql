-- Question: Which topic does a topic id name (KIP-848 group records name partitions by topic id, KIP-516)?
-- Parameters: none; join on cluster_name and topic_id. gold.partition_assignments keeps every KIP-848 row's id
--   and a name only where the group's own records gave one: names are joined at read (this view), so a name
--   that arrives after a group's last record needs no recompute. The names come from the end-offset
--   snapshots (silver.topic_names) and from offset commits that carry ids (OffsetCommitValue v4, Kafka 4.1+);
--   should two names ever claim one id, the smallest is taken.
-- Reads: silver.topic_names, gold.committed_offsets
-- Example: SELECT topic_id, topic FROM dashboards.topic_names ORDER BY topic
SELECT
  coalesce(s.cluster_name, c.cluster_name) AS cluster_name,
  coalesce(s.topic_id, c.topic_id) AS topic_id,
  least(s.topic, c.topic) AS topic
FROM (
  SELECT cluster_name, topic_id, min(topic) AS topic FROM silver.topic_names GROUP BY cluster_name, topic_id
) AS s
FULL OUTER JOIN (
  SELECT cluster_name, topic_id, min(topic) AS topic FROM gold.committed_offsets
  WHERE topic_id IS NOT NULL AND topic_id <> 'AAAAAAAAAAAAAAAAAAAAAA'
  GROUP BY cluster_name, topic_id
) AS c ON s.cluster_name = c.cluster_name AND s.topic_id = c.topic_id
