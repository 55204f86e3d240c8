"""gold.group_generations: one row per recorded generation of a classic group, per group epoch of a KIP-848 group.

The table's whole definition: ``TABLE`` (schema, key, clustering, properties) and its incremental strategy. Its
rows are the replay's ``generations`` rows (``history.classic`` for classic groups, ``history.consumer`` for KIP-848
ones: what each column means is decided there once), written by ``pipelines/gold/refresh.py``: a refresh replays
each group that gained records from all of its records and replaces that group's rows in one commit.
"""

from __future__ import annotations

from pyspark.sql import types as T

from history import GENERATIONS
from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

TABLE = TableSpec(
    name="gold.group_generations",
    description=(
        "One row per generation of a classic group seen in a GroupMetadata record. The broker persists a "
        "generation only when its assignment is stored (Stable) or the group is Empty, so a generation cut "
        "short in CompletingRebalance leaves no row (a gap in the numbers). For KIP-848 consumer groups "
        "(group_type 'consumer') one row per group epoch of a ConsumerGroupMetadata record; share and streams "
        "groups (group_type 'share', 'streams') likewise, from ShareGroupMetadata and StreamsGroupMetadata "
        "records. A share group's epoch is stable_at when every member is at its target (the group state "
        "says Stable as soon as it has members)."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("incarnation", T.IntegerType(),
               "0 for the group's first life; +1 after each group tombstone (deleted or expired, then re-created)",
               False),
        column("generation", T.IntegerType(), "generation id; for KIP-848 groups the group epoch", False),
        column("protocol_type", T.StringType(), "'consumer', 'connect', ...; null when the record has none ('')"),
        column("protocol", T.StringType(),
               "selected protocol, i.e. the assignor; null without members. KIP-848: the server assignor most "
               "members ask for (group.remote.assignor); null when none does (the broker's default, first of "
               "group.consumer.assignors, is in no record)"),
        column("leader", T.StringType(),
               "member id of the leader when the generation was first recorded; null for KIP-848 (no leader)"),
        column("member_count", T.IntegerType(),
               "members when the generation was first recorded (KIP-848: after the epoch bump); 0 = Empty"),
        column("started_at", T.TimestampType(),
               "currentStateTimestamp of its first record: entry into CompletingRebalance (Empty for none). "
               "KIP-848: append time of the ConsumerGroupMetadata record that bumped the epoch"),
        column("stable_at", T.TimestampType(),
               "append time of its first record, when the assignment was stored (null for an Empty generation). "
               "KIP-848: when every member had reconciled to this epoch's target (state Stable); null if never"),
        column("ended_at", T.TimestampType(),
               "start of the next recorded generation, or the group tombstone; null while current. An upper "
               "bound when a generation was cut short in between"),
        column("end_reason", T.StringType(),
               "LIKELY cause, inferred from the next record (see gold.rebalance_events.likely_cause); "
               "'group_removed' for a tombstone (deletion and expiry look the same in records)"),
        column("records", T.IntegerType(),
               "GroupMetadata records of the generation (>1: static member swaps or leader changes); KIP-848: "
               "the group's records written while this epoch was current, its bump included", False),
        column("group_type", T.StringType(),
               "'classic' (GroupMetadata records), 'consumer' (KIP-848, group.protocol=consumer: group epochs), "
               "'share' (KIP-932 share groups) or 'streams' (KIP-1071 streams groups)", False),
    ]),
    key=("cluster_name", "group", "incarnation", "generation"),
    cluster_by=GROUP_CLUSTERING,
    properties=(DELETION_VECTORS,),  # each refresh replaces the rows of the groups that changed
    incremental=Incremental.REPLACE_TOUCHED_GROUPS,
    replay_rows=GENERATIONS,
)
