"""One group's history, replayed from its records in log order: every row of the group tables.

Pure Python (no Spark, no Kafka client): the group tables (generations, membership, partition assignments,
state history, rebalance events; for streams groups their task assignments and topology) are all functions of one
group's ``__consumer_offsets`` records, so each is decided here once, per group protocol, and Spark only feeds a
group's records in and writes its rows out (``pipelines/gold/group_history.py``).

* :mod:`history.classic`: classic groups, from GroupMetadata records (``GroupMetadataManager.storeGroup``) and,
  as evidence of when members were last at work, the group's offset commits;
* :mod:`history.consumer`: KIP-848 consumer groups, from their ConsumerGroup* records;
* :mod:`history.share`: KIP-932 share groups, from their ShareGroup* records (the same replay, other states);
* :mod:`history.streams`: KIP-1071 streams groups, from their StreamsGroup* records: tasks instead of
  partitions, and the topology;
* :mod:`history.group`: the one entry point, :func:`history.group.group_rows`: a group's records of every
  protocol in, its rows for each table out (the storm flags counted over both protocols' rebalances).

Rows are dicts keyed by the tables' column names, times as epoch milliseconds, without ``cluster_name`` and
``group`` (the caller's key). Each gold table module names the kind of rows it takes (``TableSpec.replay_rows``).
"""

GENERATIONS = "generations"
MEMBERSHIP = "membership"
ASSIGNMENTS = "assignments"
STATES = "states"
REBALANCES = "rebalances"
TASKS = "tasks"
TOPOLOGY = "topology"
KINDS = (GENERATIONS, MEMBERSHIP, ASSIGNMENTS, STATES, REBALANCES, TASKS, TOPOLOGY)
"""The kinds of rows a replay gives, one per group table (the last two: streams groups only)."""
