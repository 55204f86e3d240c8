"""A classic group's GroupMetadata records as an ordered sequence: what every group gold table starts from.

What the records can tell (Kafka ``GroupMetadataManager.storeGroup`` / ``GroupCoordinatorRecordHelpers``):
a GroupMetadata record is written when a generation's assignment is stored (the leader's SyncGroup,
then Stable), when a static member swaps its member id in, and when the group becomes Empty; a
tombstone when the group is deleted or expires. PreparingRebalance, joins and departures are not
written, so times derived here are the times the *records* show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

RECORD_KEY = ("cluster_name", "source_topic", "source_partition", "source_offset")


def _group_window():  # type: ignore[no-untyped-def]
    from pyspark.sql import Window

    # One group's records all live in one __consumer_offsets partition, in append order.
    return Window.partitionBy("cluster_name", "group").orderBy("record_timestamp", "source_partition",
                                                               "source_offset")


def record_sequence(metadata: DataFrame) -> DataFrame:
    """silver.group_metadata rows numbered per group, with the time each record stands for.

    Columns added: ``seq`` (1, 2, ... per group), ``incarnation`` (tombstones before it),
    ``new_generation`` (first record of its generation), ``at`` (for the first record of a
    generation its currentStateTimestamp, i.e. when the generation formed; otherwise, and for
    tombstones, the record's append time), ``next_at`` (``at`` of the group's next record).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = _group_window()
    before = w.rowsBetween(Window.unboundedPreceding, -1)
    frame = metadata.withColumn("seq", F.row_number().over(w))
    frame = frame.withColumn("incarnation", F.coalesce(F.sum(F.col("is_tombstone").cast("int")).over(before),
                                                       F.lit(0)).cast("int"))
    previous_generation = F.lag("generation").over(w)
    previous_tombstone = F.lag("is_tombstone").over(w)
    frame = frame.withColumn("new_generation", ~F.col("is_tombstone") & (
        previous_generation.isNull() | F.coalesce(previous_tombstone, F.lit(False))
        | (F.col("generation") != previous_generation)))
    frame = frame.withColumn("at", F.when(F.col("new_generation"), F.coalesce("current_state_timestamp",
                                                                              "record_timestamp"))
                             .otherwise(F.col("record_timestamp")))
    return frame.withColumn("next_at", F.lead("at").over(w))


def member_sequence(sequence: DataFrame, members: DataFrame) -> DataFrame:
    """silver.group_members rows with their record's place in the sequence (``seq``, ``at``, ``next_at``...)."""
    positions = sequence.select(*RECORD_KEY, "seq", "incarnation", "new_generation", "at", "next_at")
    return members.join(positions, list(RECORD_KEY))


def record_summaries(sequence: DataFrame, members: DataFrame) -> DataFrame:
    """The sequence with each record's member set, as arrays, for comparing consecutive records.

    ``identities``: a member's ``group.instance.id`` (prefixed ``i:``) for static members, else its
    member id (``m:``), so that a static member restarting under a new member id is the same identity.
    ``max_rebalance_timeout_ms``: the largest rebalance timeout among the members (null for none):
    the coordinator ends a join phase at most that long after it began (``ClassicGroup.rebalanceTimeoutMs``).
    """
    from pyspark.sql import functions as F

    identity = F.when(F.col("group_instance_id").isNotNull(), F.concat(F.lit("i:"), "group_instance_id")) \
        .otherwise(F.concat(F.lit("m:"), "member_id"))
    per_member = members.select(
        *RECORD_KEY, "member_id", identity.alias("identity"), "group_instance_id", "session_timeout_ms",
        "rebalance_timeout_ms",
        F.array_join(F.array_sort(F.coalesce("subscribed_topics", F.array().cast("array<string>"))), ",")
        .alias("topics"),
        F.transform(F.flatten(F.transform(F.coalesce("assigned_partitions", F.array()),
                                          lambda tp: F.transform(tp["partitions"],
                                                                 lambda p: F.concat(tp["topic"], F.lit("/"),
                                                                                    p.cast("string"))))),
                    lambda tp: tp).alias("tps"),
    )
    per_record = per_member.groupBy(*RECORD_KEY).agg(
        F.array_sort(F.collect_list("member_id")).alias("member_ids"),
        F.array_sort(F.collect_list("identity")).alias("identities"),
        F.map_from_entries(F.collect_list(F.struct("identity", "session_timeout_ms"))).alias("session_timeouts"),
        F.map_from_entries(F.collect_list(F.struct("identity", "member_id"))).alias("identity_members"),
        F.max("rebalance_timeout_ms").alias("max_rebalance_timeout_ms"),
        F.array_sort(F.collect_list(F.concat("identity", F.lit("="), "topics"))).alias("subscriptions"),
        F.array_sort(F.flatten(F.collect_list(F.transform("tps", lambda tp: F.concat(tp, F.lit("@"),
                                                                                   F.col("identity"))))))
        .alias("owned"),
        F.array_sort(F.flatten(F.collect_list("tps"))).alias("tps"),
    )
    empty = F.array().cast("array<string>")
    joined = sequence.join(per_record, list(RECORD_KEY), "left")
    return joined.select(
        *sequence.columns,
        *[F.coalesce(c, empty).alias(c) for c in ("member_ids", "identities", "subscriptions", "owned", "tps")],
        F.coalesce("session_timeouts", F.create_map().cast("map<string,int>")).alias("session_timeouts"),
        F.coalesce("identity_members", F.create_map().cast("map<string,string>")).alias("identity_members"),
        "max_rebalance_timeout_ms",
    )
