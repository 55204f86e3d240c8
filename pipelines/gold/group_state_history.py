"""gold.group_state_history: the states a group went through, as its records show them.

The table's whole definition: ``TABLE`` (schema, key, clustering, properties) and its incremental strategy. Its
rows are the replay's ``states`` rows (``history.classic`` for classic groups, ``history.consumer`` for KIP-848
ones: what each column means is decided there once), written by ``pipelines/gold/refresh.py``: a refresh replays
each group that gained records from all of its records and replaces that group's rows in one commit.
"""

from __future__ import annotations

from pyspark.sql import types as T

from history import STATES
from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

TABLE = TableSpec(
    name="gold.group_state_history",
    description=(
        "State sequence per group: Empty, CompletingRebalance, Stable, Dead. PreparingRebalance is never "
        "persisted and does not appear; CompletingRebalance only for generations that reached Stable. KIP-848 "
        "groups (group_type 'consumer'): Empty, Assigning, Reconciling, Stable, Dead, derived from the group, "
        "assignment and member epochs after every write (Kafka's ConsumerGroup.maybeUpdateGroupState). Share "
        "groups (group_type 'share'): Empty, Stable, Dead (ShareGroup.maybeUpdateGroupState: Stable with any "
        "member). Streams groups (group_type 'streams'): Empty, NotReady, Assigning, Reconciling, Stable, Dead "
        "(StreamsGroup.maybeUpdateGroupState: NotReady while the topology is missing or not validated)."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("state", T.StringType(),
               "Empty | CompletingRebalance | Stable | Dead; KIP-848: Empty | Assigning | Reconciling | Stable | "
               "Dead", False),
        column("at", T.TimestampType(), "when the group entered the state", False),
        column("until", T.TimestampType(), "when it entered the next recorded state; null while current"),
        column("generation", T.IntegerType(), "generation of the record, KIP-848 the group epoch (null for Dead)"),
        column("evidence", T.StringType(),
               "'current_state_timestamp' (Empty, CompletingRebalance: the record's field), 'record_time' "
               "(Stable: the assignment record's append time), 'tombstone' (Dead); KIP-848: 'no_members' "
               "(Empty), 'group_epoch_above_assignment_epoch' (Assigning), 'member_not_reconciled' (Reconciling: "
               "a member below the assignment epoch or not in member state STABLE), 'members_reconciled' "
               "(Stable), 'tombstone' (Dead); share groups: 'no_members', 'has_members'; streams groups: also "
               "'topology_not_validated' (NotReady); the time is the append time of the write that made it so",
               False),
        column("group_type", T.StringType(),
               "'classic' (GroupMetadata records), 'consumer' (KIP-848, group.protocol=consumer: group epochs), "
               "'share' (KIP-932 share groups) or 'streams' (KIP-1071 streams groups)", False),
        column("assignment_epoch", T.IntegerType(), "KIP-848: the target assignment epoch then; null for classic"),
    ]),
    key=("cluster_name", "group", "at", "state"),
    cluster_by=GROUP_CLUSTERING,
    properties=(DELETION_VECTORS,),  # each refresh replaces the rows of the groups that changed
    incremental=Incremental.REPLACE_TOUCHED_GROUPS,
    replay_rows=STATES,
)
