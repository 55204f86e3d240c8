"""gold.streams_task_assignments: SCD2 rows of which streams-group member held which task in each epoch.

The table's whole definition: ``TABLE`` (schema, key, clustering, properties) and its incremental strategy. Its
rows are the replay's ``tasks`` rows (``history.streams``: what each column means is decided there once), written
by ``pipelines/gold/refresh.py`` like the other group tables: a refresh replays each group that gained records from
all of its records and replaces that group's rows in one commit. Tasks are no partitions (a task is a subtopology
and a partition number, and may read several topics), so they are not in gold.partition_assignments.
"""

from __future__ import annotations

from pyspark.sql import types as T

from history import TASKS
from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

TABLE = TableSpec(
    name="gold.streams_task_assignments",
    description=(
        "Streams groups only (KIP-1071, group_type 'streams'): which member held which task, epoch by epoch, "
        "from StreamsGroupTargetAssignmentMember and StreamsGroupCurrentMemberAssignment records. Three task "
        "kinds (active, standby, warm-up) and three kinds of rows, as for KIP-848 partitions: what a member "
        "holds ('current', by member epoch), what the assignor wants it to hold ('target', by assignment "
        "epoch) and what it still has to give up ('pending_revocation')."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "streams group id (application.id)", False),
        column("subtopology_id", T.StringType(), "the task's subtopology (gold.streams_topology)", False),
        column("partition", T.IntegerType(), "the task's partition number within its subtopology", False),
        column("task_kind", T.StringType(),
               "'active' (processes the partition), 'standby' (replicates its state stores) or 'warmup' (a "
               "standby catching up before it takes the active task over)", False),
        column("member_id", T.StringType(), "member holding it", False),
        column("process_id", T.StringType(), "the member's Kafka Streams process (several members may share one)"),
        column("client_id", T.StringType(), "the member's client.id"),
        column("group_instance_id", T.StringType(), "the member's static membership id, if any"),
        column("generation", T.IntegerType(),
               "the member epoch ('current', 'pending_revocation') or the assignment epoch ('target')", False),
        column("assignment_kind", T.StringType(), "'current', 'target' or 'pending_revocation'", False),
        column("valid_from", T.TimestampType(), "append time of the first record of the group with it", False),
        column("valid_to", T.TimestampType(), "the first later record of the group without it; null while current"),
        column("group_type", T.StringType(), "'streams' (the only group type with tasks)", False),
    ]),
    key=("cluster_name", "group", "generation", "member_id", "assignment_kind", "task_kind", "subtopology_id",
         "partition"),
    cluster_by=GROUP_CLUSTERING,
    properties=(DELETION_VECTORS,),  # each refresh replaces the rows of the groups that changed
    incremental=Incremental.REPLACE_TOUCHED_GROUPS,
    replay_rows=TASKS,
)
