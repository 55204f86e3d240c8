"""gold.rebalance_events: completed rebalances (and static restarts without one), with causes and bounds.

The table's whole definition: ``TABLE`` (schema, key, clustering, properties) and its incremental strategy. Its
rows are the replay's ``rebalances`` rows (``history.classic`` for classic groups, ``history.consumer`` for KIP-848
ones: what each column means is decided there once), written by ``pipelines/gold/refresh.py``: a refresh replays
each group that gained records from all of its records and replaces that group's rows in one commit.
"""

from __future__ import annotations

from pyspark.sql import types as T

from history import REBALANCES
from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

STRINGS = T.ArrayType(T.StringType(), False)


TABLE = TableSpec(
    name="gold.rebalance_events",
    description=(
        "Completed rebalances of classic groups (a new recorded generation) and static member restarts that "
        "kept the generation. Causes are inferred from the records before and after, and are likely causes. "
        "KIP-848 groups (group_type 'consumer'): one row per group epoch at which the group settled (Stable, "
        "or Empty), measured against the previous settled epoch (epoch 0, no members, for a new group). Share "
        "and streams groups (group_type 'share', 'streams') the same: a share group settles when every member "
        "is at the target of the epoch; a streams group's partitions_moved and partitions_kept count active "
        "tasks, and a changed member topology epoch is 'topology_changed'."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "the cluster", False),
        column("group", T.StringType(), "consumer group id", False),
        column("event_type", T.StringType(),
               "'rebalance' (a new generation was recorded) or 'static_member_restart' (a static member rejoined "
               "with a new member id and kept its assignment, same generation: no rebalance)", False),
        column("from_generation", T.IntegerType(), "the last recorded generation before", False),
        column("to_generation", T.IntegerType(), "the generation after (skips generations cut short)", False),
        column("last_stable_at", T.TimestampType(),
               "append time of the last record before: the group was known Stable (or Empty) then; KIP-848: "
               "when it settled at from_generation (null for a new group)"),
        column("join_completed_at", T.TimestampType(),
               "currentStateTimestamp of the new generation; KIP-848: when the target assignment of the last "
               "epoch was installed (null when it settled Empty)"),
        column("stable_at", T.TimestampType(), "append time of the record after: Stable (or Empty) again", False),
        column("stopped_at_lower_bound", T.TimestampType(),
               "every member of from_generation that stopped working for this rebalance (revoked, left or "
               "died) did so at or after this: the latest of last_stable_at, the earliest of the members' last "
               "commits before join_completed_at (when each made one), and join_completed_at minus what the "
               "members' rebalance timeouts and the departed members' session timeouts allow; KIP-848: "
               "started_at; null for a static restart and when from_generation had no members"),
        column("stopped_at_upper_bound", T.TimestampType(),
               "... and at or before this: join_completed_at (members revoke before rejoining; departed ones were "
               "removed before the join completed); KIP-848: stable_at; null as stopped_at_lower_bound"),
        column("stopped_ms_lower_bound", T.LongType(),
               "stable_at - stopped_at_upper_bound: every member that stopped stayed stopped at least this long "
               "(no assignment is handed out before stable_at)"),
        column("stopped_ms_upper_bound", T.LongType(),
               "stable_at - stopped_at_lower_bound: the group was Stable (or Empty) again at most this long after "
               "the first member stopped"),
        column("members_before", T.IntegerType(), "members in the last record before", False),
        column("members_after", T.IntegerType(), "members in the record after", False),
        column("members_joined", STRINGS, "member ids new in the record after (static restarts excluded)", False),
        column("members_left", STRINGS, "member ids gone from the record after (static restarts excluded)", False),
        column("members_kept", T.IntegerType(), "members (by static id or member id) in both", False),
        column("static_restarts", STRINGS, "group.instance.ids that came back with a new member id", False),
        column("partitions_moved", T.IntegerType(),
               "partitions now owned by someone other than their last owner before (a cooperative rebalance's "
               "revoking round moves nothing; its follow-up moves what was revoked; nothing moves from before "
               "the group went Empty)", False),
        column("partitions_kept", T.IntegerType(), "partitions still with their last owner", False),
        column("likely_cause", T.StringType(),
               "LIKELY cause, from the records: member_joined; static_member_returned (a static member whose "
               "group.instance.id an earlier record had joined again after it was removed, e.g. its session "
               "expired); member_left (not a session expiry: the join completed sooner than each departed member's "
               "session timeout after its last sign of life -- its join or its last commit -- so a LeaveGroup, "
               "also sent on poll timeout, or a drop for not rejoining/syncing in time); "
               "member_left_or_vanished (a session expiry is possible, and so is a LeaveGroup after a session "
               "timeout without commits: the records cannot tell them apart); "
               "members_joined_and_left; static_member_rejoined; subscription_changed; metadata_changed (more "
               "partitions assigned than ever before: partitions added); cooperative_follow_up (cooperative-sticky: "
               "the generation before revoked partitions from members who stayed, and one of them rejoined: "
               "KIP-429's second round, see triggered_by); leader_rejoined (same members and subscriptions, "
               "no revocation before); static_member_restart (no rebalance). KIP-848: "
               "member_joined, member_left_or_vanished (leave and fencing look alike), members_joined_and_left, "
               "subscription_changed, metadata_changed (the subscribed topics' MetadataHash changed), unknown; "
               "streams groups also topology_changed (a member runs another topology epoch); share groups "
               "also share_partitions_initialized (a topic's share-partition state became ready)"),
        column("triggered_by", STRINGS,
               "member ids whose rejoin may have triggered it, as far as the records tell: for a "
               "cooperative_follow_up the members the previous round revoked partitions from (the first of "
               "them to rejoin started it; no record says which, so with several all are listed); null for "
               "every other cause, where the records name no trigger"),
        column("protocol", T.StringType(), "assignor after the rebalance"),
        column("rebalance_protocol", T.StringType(),
               "'cooperative' (cooperative-sticky, and every KIP-848 group: partitions are revoked before they are "
               "reassigned, member by member) or 'eager' (range, roundrobin, sticky); null for others"),
        column("rebalances_in_window", T.IntegerType(),
               "rebalances of the group completed within gold.storm_window_minutes up to this one (itself "
               "included); null for restarts"),
        column("is_storm", T.BooleanType(), "rebalances_in_window >= gold.storm_rebalances"),
        column("group_type", T.StringType(),
               "'classic' (GroupMetadata records), 'consumer' (KIP-848, group.protocol=consumer: group epochs), "
               "'share' (KIP-932 share groups) or 'streams' (KIP-1071 streams groups)", False),
        column("started_at", T.TimestampType(),
               "KIP-848: append time of the first epoch bump after the last settled epoch; null for classic"),
    ]),
    key=("cluster_name", "group", "stable_at", "event_type", "to_generation"),
    cluster_by=GROUP_CLUSTERING,
    properties=(DELETION_VECTORS,),  # each refresh replaces the rows of the groups that changed
    incremental=Incremental.REPLACE_TOUCHED_GROUPS,
    replay_rows=REBALANCES,
)
