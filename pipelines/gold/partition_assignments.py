"""gold.partition_assignments: SCD2 rows of who owned which partition in each generation.

The table's whole definition: ``TABLE`` (schema, key, clustering, properties) and its incremental strategy. Its
rows are the replay's ``assignments`` rows (``history.classic`` for classic groups, ``history.consumer`` for KIP-848
ones: what each column means is decided there once), written by ``pipelines/gold/refresh.py``: a refresh replays
each group that gained records from all of its records and replaces that group's rows in one commit.
"""

from __future__ import annotations

from pyspark.sql import types as T

from history import ASSIGNMENTS
from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

TABLE = TableSpec(
    name="gold.partition_assignments",
    description=(
        "Which member owned which partition, generation by generation, from the stored assignments. KIP-848 "
        "groups (group_type 'consumer') have three kinds of rows: what a member owns ('current', by member "
        "epoch), what the assignor wants it to own ('target', by assignment epoch) and what it still has to "
        "give up ('pending_revocation'). Share groups (group_type 'share'): 'current' and 'target' rows only "
        "(a share member never revokes: several members may read one partition at once, so their rows "
        "overlap). Streams groups' tasks: gold.streams_task_assignments."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("topic", T.StringType(),
               "assigned topic; KIP-848: the name the group's own records give topic_id, else null: other names "
               "are joined at read by topic_id (dashboards.topic_names; dashboards.partition_ownership does)"),
        column("partition", T.IntegerType(), "assigned partition", False),
        column("member_id", T.StringType(), "owner member id", False),
        column("client_id", T.StringType(), "owner client.id"),
        column("group_instance_id", T.StringType(), "owner's static membership id, if any"),
        column("generation", T.IntegerType(),
               "generation of the assignment; KIP-848: the member epoch ('current', 'pending_revocation') or the "
               "assignment epoch ('target')", False),
        column("valid_from", T.TimestampType(),
               "the assignment was stored: append time of the first record with it (Stable, or a static swap)",
               False),
        column("valid_to", T.TimestampType(),
               "the first later record without it (next generation's start, swap, Empty, tombstone); null while "
               "current. An upper bound: eager members revoke when the rebalance starts, which is not persisted. "
               "KIP-848: the first later record of the group without it"),
        column("group_type", T.StringType(),
               "'classic' (GroupMetadata records), 'consumer' (KIP-848, group.protocol=consumer: group epochs) or "
               "'share' (KIP-932 share groups); streams groups' tasks are in gold.streams_task_assignments", False),
        column("assignment_kind", T.StringType(),
               "'current' (owned; every classic row), 'target' (KIP-848 target assignment) or "
               "'pending_revocation' (KIP-848: still owned, to be revoked)", False),
        column("topic_id", T.StringType(), "KIP-848: topic id (base64url) as recorded; null for classic rows"),
    ]),
    key=("cluster_name", "group", "generation", "member_id", "assignment_kind", "topic_id", "topic", "partition"),
    cluster_by=GROUP_CLUSTERING,
    properties=(DELETION_VECTORS,),  # each refresh replaces the rows of the groups that changed
    incremental=Incremental.REPLACE_TOUCHED_GROUPS,
    replay_rows=ASSIGNMENTS,
)
