"""gold.rebalance_events: completed rebalances (and static restarts without one) from consecutive records.

A rebalance is visible as a new generation in a GroupMetadata record; what changed is the
difference between the last record before it and the first record of the new generation. When
a rebalance began is not persisted (PreparingRebalance never is), so only bounds are given, and
each bound is only as tight as the records make it (issue 12, item 3):

* the new generation's ``current_state_timestamp`` is when its join phase completed: every member
  that stopped for the rebalance had stopped by then (an eager member revokes before it rejoins,
  ``ConsumerCoordinator.onJoinPrepare``; a departed member was removed before);
* a member's last offset commit before that moment is a moment it was still working: its partitions'
  commits carry the broker's ``commitTimestamp``, and a commit from a removed member is refused
  (UNKNOWN_MEMBER_ID), so nothing it did for this rebalance came earlier;
* the previous record: the group was Stable (or Empty) when it was appended;
* the members' rebalance timeouts (member metadata) cap how long a join phase lasts
  (``GroupMetadataManager.prepareRebalance`` schedules the join to complete within
  ``ClassicGroup.rebalanceTimeoutMs``), and the departed members' session timeouts how long before
  the rebalance a member that vanished can have stopped: no bound reaches back to a previous
  record written long before the group went quiet.

The table's whole definition (issue 14, item 7): ``TABLE`` (schema, key, clustering, properties), the build steps
(``transitions`` over the record summaries of ``group_history``, then ``rebalance_events``; KIP-848 groups' rows come
from ``consumer_groups``) and the incremental strategy (``Incremental.REPLACE_TOUCHED_GROUPS``: pipelines/gold/
refresh.py recomputes each group with new records from all of its records and replaces its rows in one commit).
Tested on hand-built rows in tests/pipelines/gold/test_rebalance_events.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import types as T

from conf.settings import Settings
from pipelines.gold.group_history import RECORD_KEY
from schemas.table_spec import DELETION_VECTORS, GROUP_CLUSTERING, Incremental, TableSpec, column

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


STRINGS = T.ArrayType(T.StringType(), False)

TABLE = TableSpec(
    name="gold.rebalance_events",
    description=(
        "Completed rebalances of classic groups (a new recorded generation) and static member restarts that "
        "kept the generation. Causes are inferred from the records before and after, and are likely causes. "
        "KIP-848 groups (group_type 'consumer'): one row per group epoch at which the group settled (Stable, "
        "or Empty), measured against the previous settled epoch (epoch 0, no members, for a new group)."
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
               "subscription_changed, metadata_changed (the subscribed topics' MetadataHash changed), unknown"),
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
               "'classic' (GroupMetadata records) or 'consumer' (KIP-848, group.protocol=consumer: group epochs)",
               False),
        column("started_at", T.TimestampType(),
               "KIP-848: append time of the first epoch bump after the last settled epoch; null for classic"),
    ]),
    key=("cluster_name", "group", "stable_at", "event_type", "to_generation"),
    cluster_by=GROUP_CLUSTERING,
    properties=(DELETION_VECTORS,),  # each refresh replaces the rows of the groups that changed
    incremental=Incremental.REPLACE_TOUCHED_GROUPS,
)

# Assignors whose protocol is COOPERATIVE (ConsumerPartitionAssignor.supportedProtocols()).
COOPERATIVE = ("cooperative-sticky",)
EAGER = ("range", "roundrobin", "sticky")


def transitions(summaries: DataFrame, commits: DataFrame | None = None) -> DataFrame:
    """Each non-first, non-tombstone record beside its predecessor (``prev_*`` columns), with the diff.

    ``summaries`` is ``group_history.record_summaries``; ``commits`` is silver.offset_commits (at least
    the summaries' groups'), the evidence of when members were last at work (``last_commits``); without
    it the bounds and causes use the GroupMetadata records alone. Records following a tombstone start a
    new incarnation of the group and are not transitions.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from pipelines.gold.group_history import _group_window

    w = _group_window()
    handovers = partition_handovers(summaries)
    carried = ("is_tombstone", "generation", "record_timestamp", "current_state_timestamp", "member_count",
               "member_ids", "identities", "subscriptions", "owned", "tps", "session_timeouts",
               "identity_members", "max_rebalance_timeout_ms")
    # Identities seen in any earlier record of this incarnation: a static member coming back after
    # its session expired (or it was removed) is one of them (KIP-345: same group.instance.id).
    earlier = Window.partitionBy("cluster_name", "group", "incarnation").orderBy(
        "record_timestamp", "source_partition", "source_offset").rowsBetween(Window.unboundedPreceding, -1)
    frame = summaries.select("*", *[F.lag(c).over(w).alias(f"prev_{c}") for c in carried],
                             F.max(F.size("tps")).over(w.rowsBetween(-(1 << 30), -1)).alias("most_tps_before"),
                             F.array_distinct(F.flatten(F.collect_list("identities").over(earlier)))
                             .alias("identities_before"))
    # Members that stayed but lost partitions nobody owns now: what the first round of a cooperative
    # rebalance does (KIP-429); each of them rejoins at once, which starts the follow-up rebalance.
    unowned_now = F.array_except(F.coalesce("prev_tps", F.array().cast("array<string>")), "tps")
    revoked_from = F.array_distinct(F.transform(
        F.filter(F.coalesce("prev_owned", F.array().cast("array<string>")),
                 lambda o: F.array_contains(unowned_now, owned_partition(o))
                 & F.array_contains(F.col("identities"), owner_identity(o))),
        owner_identity))
    frame = frame.withColumn("revoked_from", revoked_from)
    frame = frame.withColumn("prev_revoked_from", F.lag("revoked_from").over(w))
    frame = frame.filter(~F.col("is_tombstone") & F.col("prev_is_tombstone").isNotNull()
                         & ~F.col("prev_is_tombstone"))
    static_ids = lambda col: F.filter(col, lambda i: i.startswith("i:"))  # noqa: E731
    both_static = F.array_intersect(static_ids(F.col("identities")), static_ids(F.col("prev_identities")))
    restarted = F.filter(both_static, lambda i: F.col("identity_members")[i] != F.col("prev_identity_members")[i])
    joined = F.array_except("identities", "prev_identities")
    left = F.array_except("prev_identities", "identities")
    frame = frame.join(handovers, list(RECORD_KEY), "left")
    frame = frame.join(last_commits(frame, commits), list(RECORD_KEY), "left").withColumn(
        "last_commits", F.coalesce("last_commits", F.create_map().cast("map<string,timestamp>")))
    frame = frame.select(
        "*",
        F.transform(joined, lambda i: F.col("identity_members")[i]).alias("members_joined"),
        F.transform(left, lambda i: F.col("prev_identity_members")[i]).alias("members_left"),
        F.size(F.array_intersect("identities", "prev_identities")).alias("members_kept"),
        F.transform(restarted, lambda i: F.substring(i, 3, 1 << 20)).alias("static_restarts"),
        F.filter(joined, lambda i: i.startswith("i:") & F.array_contains("identities_before", i))
        .alias("returned"),
        F.forall(left, lambda i: (join_completed_ms() - F.unix_millis(F.greatest(
            F.coalesce("prev_current_state_timestamp", "prev_record_timestamp"), F.col("last_commits")[i])))
            < F.col("prev_session_timeouts")[i]).alias("none_expired"),
        F.aggregate(left, F.lit(None).cast("long"),
                    lambda acc, i: F.greatest(acc, F.col("prev_session_timeouts")[i].cast("long")))
        .alias("left_max_session_ms"),
        F.coalesce("kept", F.lit(0)).alias("partitions_kept"),
        F.coalesce("moved", F.lit(0)).alias("partitions_moved"),
    )
    frame = frame.drop("kept", "moved").withColumn("likely_cause", likely_cause())
    return frame.select("*", *stop_bounds())


def owned_partition(owned: Column) -> Column:
    """"topic/partition" of an ``owned`` entry "topic/partition@identity" (``record_summaries``);
    topic names have no "@" (Kafka's legal characters: [a-zA-Z0-9._-])."""
    from pyspark.sql import functions as F

    return F.substring_index(owned, "@", 1)


def owner_identity(owned: Column) -> Column:
    """The identity of an ``owned`` entry: everything after its first "@"."""
    from pyspark.sql import functions as F

    return F.regexp_extract(owned, "^[^@]*@(.*)$", 1)


def partition_handovers(summaries: DataFrame) -> DataFrame:
    """Per record (``RECORD_KEY``): ``moved``, partitions whose owner differs from their last owner before
    this record, and ``kept``, partitions still with their last owner.

    "Last owner" skips records in which the partition had none: a cooperative rebalance (KIP-429) first
    revokes a partition (the new generation's record shows it unowned) and hands it to its new owner
    in the follow-up rebalance, so comparing each record with the one before alone never sees it move.
    Ownership does not carry across a record with no members (the group went Empty) or a tombstone
    (``incarnation``): a partition handed out after that had no owner to move from. Owners are
    identities (``record_summaries``), so a static member's new member id does not move anything.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from pipelines.gold.group_history import _group_window

    emptied = F.sum(F.when(F.size("member_ids") == 0, 1).otherwise(0)).over(
        _group_window().rowsBetween(Window.unboundedPreceding, 0))
    # Counted over every record before ``explode`` drops those that own nothing (the Empty ones).
    owned = summaries.select(*RECORD_KEY, "group", "incarnation", "record_timestamp", "owned",
                             emptied.alias("emptied"))
    owned = owned.select(*RECORD_KEY, "group", "incarnation", "record_timestamp", "emptied",
                         F.explode("owned").alias("owned"))
    owned = owned.select("*", owned_partition(F.col("owned")).alias("tp"),
                         owner_identity(F.col("owned")).alias("owner"))
    w = Window.partitionBy("cluster_name", "group", "incarnation", "tp").orderBy(
        "record_timestamp", "source_partition", "source_offset")
    owned = owned.select(*RECORD_KEY, "owner", "emptied", F.lag("owner").over(w).alias("last_owner"),
                         F.lag("emptied").over(w).alias("last_emptied"))
    comparable = F.col("last_owner").isNotNull() & (F.col("last_emptied") == F.col("emptied"))
    same = F.col("last_owner") == F.col("owner")
    return owned.groupBy(*RECORD_KEY).agg(
        F.sum(F.when(comparable & ~same, 1).otherwise(0)).cast("int").alias("moved"),
        F.sum(F.when(comparable & same, 1).otherwise(0)).cast("int").alias("kept"),
    )


def join_completed_ms() -> Column:
    """When the new generation's join phase completed (its ``current_state_timestamp``; the record's
    append time where the record has none, value v0/v1), in epoch milliseconds."""
    from pyspark.sql import functions as F

    return F.unix_millis(F.coalesce("current_state_timestamp", "record_timestamp"))


def last_commits(frame: DataFrame, commits: DataFrame | None) -> DataFrame:
    """Per transition (``RECORD_KEY``): ``last_commits``, identity -> the latest commit on a partition that
    identity owned in the previous record, after that record and up to the new generation's join
    completion (``current_state_timestamp``).

    Why it is evidence: a classic member commits with its member id and generation, which the
    coordinator checks (``ClassicGroup.validateOffsetCommit``: UNKNOWN_MEMBER_ID once removed,
    REBALANCE_IN_PROGRESS while CompletingRebalance), and a commit keeps the member's session alive
    (``OffsetMetadataManager.commitOffset`` reschedules its heartbeat in Stable and PreparingRebalance).
    So the owner of a partition committed at that moment: it was at work then, and its session cannot
    expire sooner than ``session.timeout.ms`` later. The record does not say who committed; the
    partition's owner in the previous record is taken as the committer (clients commit what they own).
    Empty when ``commits`` is None.
    """
    from pyspark.sql import functions as F

    spark = frame.sparkSession
    if commits is None:
        return spark.createDataFrame([], "cluster_name string, source_topic string, source_partition int, "
                                         "source_offset long, last_commits map<string,timestamp>")
    owned = frame.select(
        *RECORD_KEY, "group", F.col("prev_record_timestamp").alias("after"),
        F.coalesce("current_state_timestamp", "record_timestamp").alias("until"),
        F.explode(F.coalesce("prev_owned", F.array().cast("array<string>"))).alias("entry"))
    owned = owned.select("*", owned_partition(F.col("entry")).alias("tp"), owner_identity(F.col("entry"))
                         .alias("identity"))
    made = commits.filter(~F.col("is_tombstone") & F.col("commit_timestamp").isNotNull()).select(
        F.col("cluster_name").alias("c_cluster"), F.col("group").alias("c_group"),
        F.concat("topic", F.lit("/"), F.col("partition").cast("string")).alias("c_tp"), "commit_timestamp")
    hits = owned.join(made, (owned["cluster_name"] == made["c_cluster"]) & (owned["group"] == made["c_group"])
                      & (owned["tp"] == made["c_tp"]) & (made["commit_timestamp"] > owned["after"])
                      & (made["commit_timestamp"] <= owned["until"]))
    per_identity = hits.groupBy(*RECORD_KEY, "identity").agg(F.max("commit_timestamp").alias("last_commit"))
    return per_identity.groupBy(*RECORD_KEY).agg(
        F.map_from_entries(F.collect_list(F.struct("identity", "last_commit"))).alias("last_commits"))


#: At most this many time ranges in ``commits_in_windows``' predicate (nearest ones merged beyond it).
MAX_WINDOWS = 200


def commits_in_windows(commits: DataFrame, metadata: DataFrame) -> DataFrame:
    """``commits`` narrowed to those ``last_commits`` can use for the GroupMetadata records ``metadata``
    (silver.group_metadata rows of whole groups): commit times after a record and up to its successor's join
    completion (``current_state_timestamp``, else its append time), over all of the groups' records.

    Why: a refresh recomputes the groups with new records from their whole history, and their commits span
    all of it; without a time bound every file of silver.offset_commits is read for the few commits that fall
    within a rebalance (bench/gold.py at 10M commits, +100k in 50 groups, 2026-11-28 17:05: 6.0 s of the
    group step's 11.7 s). The windows go into the filter as literal time ranges, which Delta checks against
    each file's ``commit_timestamp`` statistics, so files outside them are not read. A superset of what any
    transition needs (every pair of consecutive records gives a range, tombstones too; beyond ``MAX_WINDOWS``
    the nearest ranges are merged), so ``last_commits`` is the same as over all commits.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy("cluster_name", "group").orderBy("record_timestamp", "source_partition", "source_offset")
    pairs = metadata.select(F.unix_micros(F.lag("record_timestamp").over(w)).alias("after"),
                            F.unix_micros(F.coalesce("current_state_timestamp", "record_timestamp")).alias("until"))
    merged = merged_ranges([(r["after"], r["until"]) for r in pairs.filter(
        F.col("after").isNotNull() & (F.col("until") > F.col("after"))).collect()], MAX_WINDOWS)
    if not merged:
        return commits.limit(0)
    ts = F.col("commit_timestamp")
    within = [(ts > F.timestamp_micros(F.lit(after))) & (ts <= F.timestamp_micros(F.lit(until)))
              for after, until in merged]
    predicate = within[0]
    for clause in within[1:]:
        predicate = predicate | clause
    return commits.filter(predicate)


def merged_ranges(ranges: list[tuple[int, int]], most: int) -> list[tuple[int, int]]:
    """The union of the half-open ranges ``(after, until]``, as at most ``most`` ranges in time order: overlapping
    ones joined, then, while there are too many, the ranges across the smallest gaps (a superset of the union)."""
    merged: list[tuple[int, int]] = []
    for after, until in sorted(ranges):
        if merged and after <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], until))
        else:
            merged.append((after, until))
    if len(merged) <= most:
        return merged
    # Keep the ``most - 1`` widest gaps; every other gap is closed.
    widest = sorted(range(len(merged) - 1), key=lambda k: merged[k + 1][0] - merged[k][1], reverse=True)
    gaps = sorted(widest[:most - 1])
    kept, start = [], 0
    for k in gaps:
        kept.append((merged[start][0], merged[k][1]))
        start = k + 1
    kept.append((merged[start][0], merged[-1][1]))
    return kept


def likely_cause() -> Column:
    """The most likely trigger of the rebalance, from what changed between the two records.

    Kafka rebalances a Stable group when a member joins, leaves (LeaveGroup) or its session
    expires, a member's subscription changes, or the leader rejoins (it does so when it sees
    new partitions or topics at a metadata refresh, and in cooperative rebalancing to hand out
    revoked partitions) -- ``ClassicGroup``/``GroupMetadataManager`` rebalance reasons.

    Departures (issue 12, item 4): the coordinator removes a member whose session expired no sooner
    than ``session.timeout.ms`` (its member metadata) after its last sign of life: its join (the
    previous generation's ``current_state_timestamp``) or its last commit (``last_commits``; a commit
    reschedules the session, ``OffsetMetadataManager.commitOffset``). When every departed member was
    gone sooner than that -- the join phase completed within its session timeout of its last sign of
    life -- none expired: each sent a LeaveGroup (``close()``, or librdkafka/Java on
    ``max.poll.interval.ms``) or was dropped for not rejoining in time: ``member_left``. Otherwise an
    expiry is possible, but so is a LeaveGroup from a member that had been idle (no commits) for a
    session timeout: the records cannot tell, and the label stays ``member_left_or_vanished``.

    A static member (``group.instance.id``) that joins again after it had been removed (its session
    expired, KIP-345: static members send no LeaveGroup on close) is ``static_member_returned``, not a
    new member: the same instance id is in an earlier record of this incarnation.
    """
    from pyspark.sql import functions as F

    joined, left = F.size("members_joined") > 0, F.size("members_left") > 0
    follow_up = cooperative_follow_up()
    return (
        F.when(~F.col("new_generation"), F.when(F.size("static_restarts") > 0, F.lit("static_member_restart")))
        .when(joined & left, "members_joined_and_left")
        .when(joined & (F.size("returned") == F.size("members_joined")), "static_member_returned")
        .when(joined, "member_joined")
        .when(left & F.col("none_expired"), "member_left")
        .when(left, "member_left_or_vanished")
        .when(follow_up, "cooperative_follow_up")
        .when(F.size("static_restarts") > 0, "static_member_rejoined")
        .when(F.col("subscriptions") != F.col("prev_subscriptions"), "subscription_changed")
        .when(F.size("tps") > F.coalesce("most_tps_before", F.lit(0)), "metadata_changed")
        .otherwise("leader_rejoined")
    )


def stop_bounds() -> list[Column]:
    """``stopped_at_lower_bound`` and ``stopped_at_upper_bound``: every member of the previous generation
    that stopped working for this rebalance (revoked its partitions, left, or died) did so in between.

    Upper: the new generation's join completion (``current_state_timestamp``): a member that stayed
    had rejoined by then, and revokes before rejoining (eager; cooperative members revoke only what
    moves, also before rejoining -- KIP-429); one that left had been removed by then.

    Lower, the latest of:
    * the previous record's append time (members got that generation's assignment no sooner);
    * the earliest of the members' last commits before join completion (``last_commits``; each member
      worked until at least its own), when every member of the previous record made one; with one
      silent member, nothing is known of its work after the previous record;
    * join completion minus the longest join phases the members' rebalance timeouts allow (one
      PreparingRebalance per generation the rebalance went through, and a CompletingRebalance for each
      generation cut short before its record: ``2 * generations - 1`` rebalance timeouts), minus the
      longest session timeout among the departed members (one that vanished stopped at most that long
      before the coordinator removed it). This caps the bound at what the group's own timeouts allow,
      however long ago the previous record was written.

    Null for a static member restart (no rebalance) and when the previous record had no members
    (nobody was working).
    """
    from pyspark.sql import functions as F

    completed = F.coalesce("current_state_timestamp", "record_timestamp")
    commits = F.array_min(F.transform("prev_identities", lambda i: F.coalesce(
        F.col("last_commits")[i], F.col("prev_record_timestamp"))))
    generations = (F.col("generation") - F.col("prev_generation")).cast("long")
    rebalance_timeout = F.greatest("prev_max_rebalance_timeout_ms", "max_rebalance_timeout_ms").cast("long")
    cap_ms = (F.lit(2) * generations - 1) * rebalance_timeout + F.coalesce("left_max_session_ms", F.lit(0))
    capped = F.timestamp_millis(join_completed_ms() - cap_ms)  # null when no rebalance timeout is known
    applies = F.col("new_generation") & (F.coalesce("prev_member_count", F.lit(0)) > 0)
    lower = F.least(F.greatest("prev_record_timestamp", commits, capped), completed)
    return [F.when(applies, lower).alias("stopped_at_lower_bound"),
            F.when(applies, completed).alias("stopped_at_upper_bound")]


def cooperative_follow_up() -> Column:
    """A cooperative group's new generation right after one that revoked partitions from members
    who stayed (``prev_revoked_from``): KIP-429's second round, started when one of those members
    rejoined -- the leader or not (the broker logs "Updating metadata for member ... during Stable"
    for a non-leader; ``ClassicGroup``/``GroupMetadataManager``)."""
    from pyspark.sql import functions as F

    return (F.col("new_generation") & F.col("protocol").isin(*COOPERATIVE)
            & (F.size(F.coalesce("prev_revoked_from", F.array())) > 0))


def triggered_by() -> Column:
    """Member ids whose rejoin may have triggered the rebalance, as far as the records tell: for a
    cooperative follow-up, the members the previous round revoked partitions from (each rejoins at
    once; the first to do so started it, which no record shows, so with several all are listed);
    null for every other cause (the records name no trigger)."""
    from pyspark.sql import functions as F

    return F.when(F.col("likely_cause") == "cooperative_follow_up",
                  F.transform("prev_revoked_from", lambda i: F.col("prev_identity_members")[i]))


def rebalance_events(transition_rows: DataFrame, settings: Settings, others: DataFrame | None = None
                     ) -> DataFrame:
    """Classic groups' events from ``transition_rows``, plus ``others`` (KIP-848 events: every column but the
    storm ones), with the storm flag computed over both."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    events = transition_rows.filter(F.col("new_generation") | (F.size("static_restarts") > 0)).select(
        "cluster_name", "group",
        F.when(F.col("new_generation"), "rebalance").otherwise("static_member_restart").alias("event_type"),
        F.col("prev_generation").alias("from_generation"), F.col("generation").alias("to_generation"),
        F.col("prev_record_timestamp").alias("last_stable_at"),
        F.when(F.col("new_generation"), F.col("current_state_timestamp")).alias("join_completed_at"),
        F.col("record_timestamp").alias("stable_at"),
        "stopped_at_lower_bound", "stopped_at_upper_bound",
        (F.unix_millis("record_timestamp") - F.unix_millis("stopped_at_upper_bound")).alias("stopped_ms_lower_bound"),
        (F.unix_millis("record_timestamp") - F.unix_millis("stopped_at_lower_bound")).alias("stopped_ms_upper_bound"),
        F.coalesce("prev_member_count", F.lit(0)).alias("members_before"),
        F.coalesce("member_count", F.lit(0)).alias("members_after"),
        "members_joined", "members_left", "members_kept", "static_restarts", "partitions_moved", "partitions_kept",
        "likely_cause", triggered_by().alias("triggered_by"), "protocol",
        F.when(F.col("protocol").isin(*COOPERATIVE), "cooperative").when(F.col("protocol").isin(*EAGER), "eager")
        .alias("rebalance_protocol"), F.lit("classic").alias("group_type"),
        F.lit(None).cast("timestamp").alias("started_at"),
    )
    if others is not None:
        events = events.unionByName(others.drop("rebalances_in_window", "is_storm"))
    window_ms = settings.gold.storm_window_minutes * 60_000
    storm_window = Window.partitionBy("cluster_name", "group", "event_type").orderBy(
        F.unix_millis("stable_at")).rangeBetween(-window_ms + 1, 0)
    in_window = F.when(F.col("event_type") == "rebalance", F.count(F.lit(1)).over(storm_window).cast("int"))
    events = events.withColumn("rebalances_in_window", in_window)
    events = events.withColumn("is_storm", F.when(F.col("event_type") == "rebalance",
                                                  F.col("rebalances_in_window") >= settings.gold.storm_rebalances))
    return events.select(*TABLE.schema.fieldNames())
