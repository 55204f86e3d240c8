"""gold.rebalance_events: completed rebalances (and static restarts without one) from consecutive records.

A rebalance is visible as a new generation in a GroupMetadata record; what changed is the
difference between the last record before it and the first record of the new generation. When
a rebalance began is not persisted (PreparingRebalance never is), so only bounds are given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.gold.group_history import RECORD_KEY
from schemas.rebalance_events import TABLE

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

# Assignors whose protocol is COOPERATIVE (ConsumerPartitionAssignor.supportedProtocols()).
COOPERATIVE = ("cooperative-sticky",)
EAGER = ("range", "roundrobin", "sticky")


def transitions(summaries: DataFrame) -> DataFrame:
    """Each non-first, non-tombstone record beside its predecessor (``prev_*`` columns), with the diff.

    ``summaries`` is ``group_history.record_summaries``. Records following a tombstone start a new
    incarnation of the group and are not transitions.
    """
    from pyspark.sql import functions as F

    from pipelines.gold.group_history import _group_window

    w = _group_window()
    handovers = partition_handovers(summaries)
    carried = ("is_tombstone", "generation", "record_timestamp", "current_state_timestamp", "member_count",
               "member_ids", "identities", "subscriptions", "owned", "tps", "session_timeouts",
               "identity_members")
    frame = summaries.select("*", *[F.lag(c).over(w).alias(f"prev_{c}") for c in carried],
                             F.max(F.size("tps")).over(w.rowsBetween(-(1 << 30), -1)).alias("most_tps_before"))
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
    frame = frame.select(
        "*",
        F.transform(joined, lambda i: F.col("identity_members")[i]).alias("members_joined"),
        F.transform(left, lambda i: F.col("prev_identity_members")[i]).alias("members_left"),
        F.size(F.array_intersect("identities", "prev_identities")).alias("members_kept"),
        F.transform(restarted, lambda i: F.substring(i, 3, 1 << 20)).alias("static_restarts"),
        F.coalesce("kept", F.lit(0)).alias("partitions_kept"),
        F.coalesce("moved", F.lit(0)).alias("partitions_moved"),
        F.aggregate(left, F.lit(None).cast("long"),
                    lambda acc, i: F.least(acc, F.col("prev_session_timeouts")[i].cast("long")))
        .alias("left_min_session_ms"),
    )
    return frame.drop("kept", "moved").withColumn("likely_cause", likely_cause())


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


def likely_cause() -> Column:
    """The most likely trigger of the rebalance, from what changed between the two records.

    Kafka rebalances a Stable group when a member joins, leaves (LeaveGroup) or its session
    expires, a member's subscription changes, or the leader rejoins (it does so when it sees
    new partitions or topics at a metadata refresh, and in cooperative rebalancing to hand out
    revoked partitions) -- ``ClassicGroup``/``GroupMetadataManager`` rebalance reasons.
    """
    from pyspark.sql import functions as F

    joined, left = F.size("members_joined") > 0, F.size("members_left") > 0
    formed_after_ms = F.unix_millis(F.coalesce("current_state_timestamp", "record_timestamp")) \
        - F.unix_millis(F.coalesce("prev_current_state_timestamp", "prev_record_timestamp"))
    # Every member of a generation had just joined when it formed (prev currentStateTimestamp); its
    # session cannot have expired before that plus its session timeout. A next generation formed
    # earlier than that means it was no session expiry: a LeaveGroup (also sent on poll timeout), or
    # the coordinator dropping it for not rejoining or syncing within the rebalance timeout.
    surely_left = F.col("left_min_session_ms").isNotNull() & (formed_after_ms < F.col("left_min_session_ms"))
    follow_up = cooperative_follow_up()
    return (
        F.when(~F.col("new_generation"), F.when(F.size("static_restarts") > 0, F.lit("static_member_restart")))
        .when(joined & left, "members_joined_and_left")
        .when(joined, "member_joined")
        .when(left & surely_left, "member_left")
        .when(left, "member_left_or_vanished")
        .when(follow_up, "cooperative_follow_up")
        .when(F.size("static_restarts") > 0, "static_member_rejoined")
        .when(F.col("subscriptions") != F.col("prev_subscriptions"), "subscription_changed")
        .when(F.size("tps") > F.coalesce("most_tps_before", F.lit(0)), "metadata_changed")
        .otherwise("leader_rejoined")
    )


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
        (F.unix_millis("record_timestamp") - F.unix_millis("prev_record_timestamp")).alias("duration_upper_bound_ms"),
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
