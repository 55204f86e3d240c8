"""The group tables from the replay (``history/``): each group's silver records in, its rows out.

Spark only moves rows here. A group's records (silver.group_metadata with its silver.group_members rows, its
KIP-848, share-group or streams-group records in silver.consumer_group_records) and, as evidence of when classic
members were last at work, the latest of its offset commits on each partition between two of its records, go to
one Python call per group
(``applyInPandas`` keyed by cluster and group), which replays them (``history.group.group_rows``) and returns
every row of the group for each table as JSON; :func:`group_tables` parses them back into the tables' schemas.
KIP-848 topic ids keep the names the group's own records give (else null): readers join the others at read
(``pipelines/sql_views/topic_names.sql``). A rebuild replays every group; a refresh (``pipelines/gold/refresh.py``)
the groups that gained records, which then replace those groups' rows.

The records cross into Python as JSON text (``value``): nested arrays of structs cross the Arrow boundary more
simply as text, and the parsers here read them back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from history import KINDS, classic, consumer, share, streams
from history.group import StormRule, group_rows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from conf.settings import Settings
    from schemas.table_spec import TableSpec

RECORD_KEY = ("cluster_name", "source_topic", "source_partition", "source_offset")
CLASSIC, CONSUMER, SHARE, STREAMS, COMMIT = "classic", "consumer", "share", "streams", "commit"
#: silver.consumer_group_records types of each protocol that writes them, by the replay input's ``source``.
MODERN_TYPES = {CONSUMER: consumer.RECORD_TYPES, SHARE: share.RECORD_TYPES, STREAMS: streams.RECORD_TYPES}
INPUT_COLUMNS = ("cluster_name", "group", "source", "at_ms", "source_partition", "source_offset", "type",
                 "member_id", "is_tombstone", "value")
ROWS_SCHEMA = "cluster_name string, group string, kind string, row string"


# ------------------------------------------------------------------------------ into the replay

def classic_records(metadata: DataFrame, members: DataFrame) -> DataFrame:
    """silver.group_metadata rows with their silver.group_members rows, as the replay's input rows."""
    from pyspark.sql import functions as F

    listed = members.groupBy(*RECORD_KEY).agg(F.collect_list(F.struct(
        "member_id", "group_instance_id", "client_id", "client_host", "session_timeout_ms", "rebalance_timeout_ms",
        "subscribed_topics", "assigned_partitions")).alias("members"))
    value = F.to_json(F.struct("generation", "protocol_type", "protocol", "leader", "member_count",
                               F.unix_millis("current_state_timestamp").alias("current_state_ms"), "members"))
    return metadata.join(listed, list(RECORD_KEY), "left").select(
        "cluster_name", "group", F.lit(CLASSIC).alias("source"), F.unix_millis("record_timestamp").alias("at_ms"),
        "source_partition", "source_offset", F.lit(None).cast("string").alias("type"),
        F.lit(None).cast("string").alias("member_id"), "is_tombstone",
        F.when(~F.col("is_tombstone"), value).alias("value"))


def consumer_records(records: DataFrame) -> DataFrame:
    """silver.consumer_group_records rows of KIP-848 consumer, share and streams groups, as the replay's input rows
    (``source`` the protocol, the record's typed value as JSON)."""
    from pyspark.sql import functions as F

    types = [name for names in MODERN_TYPES.values() for name in names]
    value = F.coalesce(*[F.when(F.col("type") == name, F.to_json(F.col(f"{name}.value"))) for name in types])
    source = F.when(F.col("type").isin(*consumer.RECORD_TYPES), F.lit(CONSUMER))
    for name in (SHARE, STREAMS):
        source = source.when(F.col("type").isin(*MODERN_TYPES[name]), F.lit(name))
    return records.filter(F.col("type").isin(*types)).select(
        "cluster_name", F.col("group_id").alias("group"), source.alias("source"),
        F.unix_millis("record_timestamp").alias("at_ms"), "source_partition", "source_offset", "type", "member_id",
        "is_tombstone", F.when(~F.col("is_tombstone"), value).alias("value"))


def commit_evidence(metadata: DataFrame, commits: DataFrame) -> DataFrame:
    """The offset commits the classic replay can use, as its input rows: per group, partition and gap between two of
    the group's records, the latest commit after the earlier record and up to the later one's join completion
    (``currentStateTimestamp``), all ``history.classic.stop_bounds`` and ``likely_cause`` look at.

    Why not every commit: a group commits far more often than it rebalances (bench/gold.py: 10M commits, 20,000
    records), and each commit would cross into Python. Commits and records are ordered together per group (a
    commit stamped at the same millisecond as a record goes before it), each commit tied to the next record.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    marks = metadata.select("cluster_name", "group", F.unix_millis("record_timestamp").alias("t"),
                            F.lit(1).alias("mark"),
                            F.unix_millis(F.coalesce("current_state_timestamp", "record_timestamp")).alias("formed"),
                            F.lit(None).cast("string").alias("topic"), F.lit(None).cast("int").alias("partition"))
    made = commits.filter(~F.col("is_tombstone") & F.col("commit_timestamp").isNotNull()).select(
        "cluster_name", "group", F.unix_millis("commit_timestamp").alias("t"), F.lit(0).alias("mark"),
        F.lit(None).cast("long").alias("formed"), "topic", "partition")
    w = Window.partitionBy("cluster_name", "group").orderBy("t", "mark")
    record = F.col("mark") == 1
    placed = marks.unionByName(made).select(
        "*", F.last(F.when(record, F.col("t")), ignorenulls=True).over(
            w.rowsBetween(Window.unboundedPreceding, 0)).alias("after"),
        F.first(F.when(record, F.struct(F.col("t").alias("t"), "formed")), ignorenulls=True).over(
            w.rowsBetween(0, Window.unboundedFollowing)).alias("next"))
    usable = placed.filter(~record & F.col("after").isNotNull() & F.col("next").isNotNull()
                           & (F.col("t") <= F.col("next.formed")))
    latest = usable.groupBy("cluster_name", "group", F.col("next.t").alias("gap"), "topic", "partition").agg(
        F.max("t").alias("at_ms"))
    return latest.select(
        "cluster_name", "group", F.lit(COMMIT).alias("source"), "at_ms", F.lit(None).cast("int").alias(
            "source_partition"), F.lit(None).cast("long").alias("source_offset"),
        F.lit(None).cast("string").alias("type"), F.lit(None).cast("string").alias("member_id"),
        F.lit(False).alias("is_tombstone"), F.to_json(F.struct("topic", "partition")).alias("value"))


#: At most this many time ranges in ``commits_in_windows``' predicate (nearest ones merged beyond it).
MAX_WINDOWS = 200


def commits_in_windows(commits: DataFrame, metadata: DataFrame) -> DataFrame:
    """``commits`` narrowed to those :func:`commit_evidence` can use for the GroupMetadata records ``metadata``
    (silver.group_metadata rows of whole groups): commit times after a record and up to its successor's join
    completion (``current_state_timestamp``, else its append time), over all of the groups' records.

    Why: a refresh replays the groups with new records from their whole history, and their commits span all of
    it; without a time bound every file of silver.offset_commits is read for the few commits that fall within a
    rebalance (at bench/gold.py's 10M commits, half of the group step). The windows go into the filter as literal
    time ranges, which Delta checks against each file's ``commit_timestamp`` statistics, so files outside them are
    not read. A superset of what any transition needs (every pair of consecutive records gives a range, tombstones
    too; beyond ``MAX_WINDOWS`` the nearest ranges are merged), so :func:`commit_evidence` is the same as over all
    commits.
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


def classic_record_from_row(row: dict[str, Any]) -> classic.GroupMetadataRecord:
    """A :class:`history.classic.GroupMetadataRecord` from an input row of :func:`classic_records`."""
    position = (int(row["source_partition"]), int(row["source_offset"]))
    if row["is_tombstone"] or row.get("value") is None:
        return classic.GroupMetadataRecord(at_ms=int(row["at_ms"]), position=position, is_tombstone=True)
    value = json.loads(row["value"])
    members = tuple(classic.ClassicMember(
        member_id=m["member_id"], group_instance_id=m.get("group_instance_id"), client_id=m.get("client_id"),
        client_host=m.get("client_host"), session_timeout_ms=m.get("session_timeout_ms"),
        rebalance_timeout_ms=m.get("rebalance_timeout_ms"),
        subscribed_topics=tuple(m["subscribed_topics"]) if m.get("subscribed_topics") is not None else None,
        assigned=tuple((tp["topic"], tuple(tp["partitions"])) for tp in m.get("assigned_partitions") or ()),
    ) for m in value.get("members") or ())
    return classic.GroupMetadataRecord(
        at_ms=int(row["at_ms"]), position=position, generation=value.get("generation"),
        protocol_type=value.get("protocol_type"), protocol=value.get("protocol"), leader=value.get("leader"),
        current_state_ms=value.get("current_state_ms"), member_count=value.get("member_count"), members=members)


def _partitions(value: Any) -> consumer.Partitions:
    """``[{"topic_id": ..., "partitions": [...]}, ...]`` (JSON text or parsed) as a set of pairs."""
    if isinstance(value, str):
        value = json.loads(value)
    return frozenset((tp["topic_id"], int(p)) for tp in value or () for p in tp.get("partitions") or ())


def _record_parts(row: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """What every KIP-848-style record of an input row of :func:`consumer_records` has (type, log position,
    member, tombstone) and its decoded value (None for a tombstone)."""
    kind, tombstone = row["type"], bool(row["is_tombstone"])
    base = {"at_ms": int(row["at_ms"]), "position": (int(row["source_partition"]), int(row["source_offset"])),
            "type": kind, "member_id": row.get("member_id"), "is_tombstone": tombstone}
    return kind, base, None if tombstone or row.get("value") is None else json.loads(row["value"])


def consumer_record_from_row(row: dict[str, Any]) -> consumer.GroupRecord:
    """A :class:`history.consumer.GroupRecord` from an input row of :func:`consumer_records`."""
    kind, base, value = _record_parts(row)
    if value is None:
        return consumer.GroupRecord(**base)
    if kind == consumer.GROUP_METADATA:
        return consumer.GroupRecord(**base, epoch=value.get("epoch"), metadata_hash=value.get("metadata_hash"))
    if kind == consumer.TARGET_METADATA:
        return consumer.GroupRecord(**base, epoch=value.get("assignment_epoch"))
    if kind == consumer.PARTITION_METADATA:
        names = tuple((t["topic_id"], t["topic_name"]) for t in value.get("topics") or () if t.get("topic_name"))
        return consumer.GroupRecord(**base, topic_names=names)
    if kind == consumer.MEMBER_METADATA:
        classic = value.get("classic_member_metadata") or {}
        return consumer.GroupRecord(**base, member=consumer.MemberInfo(
            client_id=value.get("client_id"), client_host=value.get("client_host"),
            instance_id=value.get("instance_id"), rack_id=value.get("rack_id"),
            subscribed_topics=tuple(value.get("subscribed_topic_names") or ()),
            subscribed_topic_regex=value.get("subscribed_topic_regex") or None,
            rebalance_timeout_ms=value.get("rebalance_timeout_ms"), server_assignor=value.get("server_assignor"),
            session_timeout_ms=classic.get("session_timeout_ms")))
    if kind == consumer.TARGET_MEMBER:
        return consumer.GroupRecord(**base, target=_partitions(value.get("topic_partitions")))
    if kind == consumer.CURRENT_ASSIGNMENT:
        return consumer.GroupRecord(**base, current=consumer.CurrentAssignment(
            member_epoch=value["member_epoch"], previous_member_epoch=value.get("previous_member_epoch", 0),
            state=value.get("state", consumer.STABLE_MEMBER), assigned=_partitions(value.get("assigned_partitions")),
            pending_revocation=_partitions(value.get("partitions_pending_revocation"))))
    return consumer.GroupRecord(**base)


def share_record_from_row(row: dict[str, Any]) -> consumer.GroupRecord:
    """A share group's record (:mod:`history.share`) from an input row of :func:`consumer_records`."""
    kind, base, value = _record_parts(row)
    if value is None:
        return consumer.GroupRecord(**base)
    if kind == share.GROUP_METADATA:
        return consumer.GroupRecord(**base, epoch=value.get("epoch"), metadata_hash=value.get("metadata_hash"))
    if kind == share.TARGET_METADATA:
        return consumer.GroupRecord(**base, epoch=value.get("assignment_epoch"))
    if kind in (share.PARTITION_METADATA, share.STATE_PARTITION_METADATA):
        topics = [t for part in ("topics", "initializing_topics", "initialized_topics", "deleting_topics")
                  for t in value.get(part) or ()]
        initialized = value.get("initialized_topics") if kind == share.STATE_PARTITION_METADATA else value.get("topics")
        return consumer.GroupRecord(**base, topic_names=tuple(
            (t["topic_id"], t["topic_name"]) for t in topics if t.get("topic_name")),
            initialized_topics=tuple(t["topic_id"] for t in initialized or ()))
    if kind == share.MEMBER_METADATA:
        return consumer.GroupRecord(**base, member=consumer.MemberInfo(
            client_id=value.get("client_id"), client_host=value.get("client_host"),
            rack_id=value.get("rack_id") or None, subscribed_topics=tuple(value.get("subscribed_topic_names") or ())))
    if kind == share.TARGET_MEMBER:
        return consumer.GroupRecord(**base, target=_partitions(value.get("topic_partitions")))
    if kind == share.CURRENT_ASSIGNMENT:
        return consumer.GroupRecord(**base, current=consumer.CurrentAssignment(
            member_epoch=value["member_epoch"], previous_member_epoch=value.get("previous_member_epoch", 0),
            state=value.get("state", consumer.STABLE_MEMBER), assigned=_partitions(value.get("assigned_partitions"))))
    return consumer.GroupRecord(**base)


def _tasks(value: dict[str, Any], field: str = "{}_tasks") -> consumer.Units:
    """Every task of a streams assignment value: its active, standby and warm-up task lists (``field`` names them,
    e.g. ``{}_tasks_pending_revocation``) as ``(task role, subtopology id, partition)``."""
    return frozenset().union(*[streams.tasks(role, ((t["subtopology_id"], t.get("partitions") or ())
                                                    for t in value.get(field.format(role)) or ()))
                               for role in streams.TASK_ROLES])


def _topic_info(topic: dict[str, Any]) -> streams.TopicInfo:
    return streams.TopicInfo(topic["name"], topic.get("partitions"), topic.get("replication_factor"))


def streams_record_from_row(row: dict[str, Any]) -> streams.StreamsRecord:
    """A streams group's record (:mod:`history.streams`) from an input row of :func:`consumer_records`."""
    kind, base, value = _record_parts(row)
    if value is None:
        return streams.StreamsRecord(**base)
    if kind == streams.GROUP_METADATA:
        return streams.StreamsRecord(**base, epoch=value.get("epoch"), metadata_hash=value.get("metadata_hash"),
                                     validated_topology_epoch=value.get("validated_topology_epoch"))
    if kind == streams.TARGET_METADATA:
        return streams.StreamsRecord(**base, epoch=value.get("assignment_epoch"))
    if kind == streams.MEMBER_METADATA:
        endpoint = value.get("user_endpoint")
        return streams.StreamsRecord(**base, member=streams.StreamsMemberInfo(
            client_id=value.get("client_id"), client_host=value.get("client_host"),
            instance_id=value.get("instance_id") or None, rack_id=value.get("rack_id") or None,
            rebalance_timeout_ms=value.get("rebalance_timeout_ms"), process_id=value.get("process_id"),
            topology_epoch=value.get("topology_epoch"),
            user_endpoint=f"{endpoint['host']}:{endpoint['port']}" if endpoint else None,
            client_tags=tuple((t["key"], t["value"]) for t in value.get("client_tags") or ())))
    if kind == streams.TARGET_MEMBER:
        return streams.StreamsRecord(**base, target=_tasks(value))
    if kind == streams.CURRENT_ASSIGNMENT:
        return streams.StreamsRecord(**base, current=consumer.CurrentAssignment(
            member_epoch=value["member_epoch"], previous_member_epoch=value.get("previous_member_epoch", 0),
            state=value.get("state", streams.STABLE_MEMBER), assigned=_tasks(value),
            pending_revocation=_tasks(value, "{}_tasks_pending_revocation")))
    if kind == streams.TOPOLOGY_RECORD:
        return streams.StreamsRecord(**base, topology=streams.Topology(value["epoch"], tuple(streams.Subtopology(
            subtopology_id=sub["subtopology_id"], source_topics=tuple(sub.get("source_topics") or ()),
            source_topic_regex=tuple(sub.get("source_topic_regex") or ()),
            repartition_sink_topics=tuple(sub.get("repartition_sink_topics") or ()),
            repartition_source_topics=tuple(map(_topic_info, sub.get("repartition_source_topics") or ())),
            state_changelog_topics=tuple(map(_topic_info, sub.get("state_changelog_topics") or ())),
        ) for sub in value.get("subtopologies") or ())))
    return streams.StreamsRecord(**base)


def replay_group(frame: Any, storm: StormRule) -> Any:  # pandas in (INPUT_COLUMNS), pandas out (ROWS_SCHEMA)
    """One group's input rows replayed: every row of the group, per kind, as JSON."""
    import pandas as pd

    if frame.empty:
        return pd.DataFrame(columns=["cluster_name", "group", "kind", "row"])
    cluster, group = frame["cluster_name"].iloc[0], frame["group"].iloc[0]
    rows = frame.to_dict("records")
    commits = []
    for r in rows:
        if r["source"] == COMMIT:
            made = json.loads(r["value"])
            commits.append(classic.Commit(int(r["at_ms"]), made["topic"], int(made["partition"])))
    found = group_rows(classic_records=[classic_record_from_row(r) for r in rows if r["source"] == CLASSIC],
                       commits=commits,
                       consumer_records=[consumer_record_from_row(r) for r in rows if r["source"] == CONSUMER],
                       storm=storm,
                       share_records=[share_record_from_row(r) for r in rows if r["source"] == SHARE],
                       streams_records=[streams_record_from_row(r) for r in rows if r["source"] == STREAMS])
    out = [(cluster, group, kind, json.dumps(row)) for kind in KINDS for row in found.rows[kind]]
    return pd.DataFrame(out, columns=["cluster_name", "group", "kind", "row"])


def replayed_rows(inputs: DataFrame, settings: Settings) -> DataFrame:
    """(cluster_name, group, kind, row JSON) of every row of each group in ``inputs`` (the union of
    :func:`classic_records`, :func:`consumer_records` and :func:`commit_evidence`), computed per group on the
    executors."""
    storm = StormRule(settings.gold.storm_rebalances, settings.gold.storm_window_minutes)
    return inputs.select(*INPUT_COLUMNS).groupBy("cluster_name", "group").applyInPandas(
        lambda frame: replay_group(frame, storm), ROWS_SCHEMA)


# ----------------------------------------------------------------------------- out of the replay

def table_frame(rows: DataFrame, kind: str, columns: Sequence[Any]) -> DataFrame:
    """The rows of ``kind`` parsed back into ``columns`` (StructFields); timestamps travel as epoch ms."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    wire = T.StructType([T.StructField(f.name, T.LongType() if isinstance(f.dataType, T.TimestampType)
                                       else f.dataType, True) for f in columns])
    parsed = rows.filter(F.col("kind") == kind).select("cluster_name", "group", F.from_json("row", wire).alias("r"))
    return parsed.select("cluster_name", "group", *[
        (F.timestamp_millis(F.col(f"r.{f.name}")) if isinstance(f.dataType, T.TimestampType)
         else F.col(f"r.{f.name}")).alias(f.name) for f in columns])


def group_tables(metadata: DataFrame, members: DataFrame, records: DataFrame, commits: DataFrame,
                 settings: Settings, tables: Sequence[TableSpec]) -> dict[str, DataFrame]:
    """Each of ``tables`` (the group tables, each naming its ``replay_rows``) for the groups of the given silver rows:
    silver.group_metadata, silver.group_members, silver.consumer_group_records (consumer, share and streams groups)
    and silver.offset_commits, all of
    each group's (a refresh filters them to the groups it replays)."""
    inputs = classic_records(metadata, members).unionByName(consumer_records(records)).unionByName(
        commit_evidence(metadata, commits))
    # Checkpointed: each table parses its rows from it, and the replay runs once.
    rows = replayed_rows(inputs, settings).localCheckpoint()
    frames = {}
    for spec in tables:
        columns = [f for f in spec.schema.fields if f.name not in ("cluster_name", "group")]
        frames[spec.name] = table_frame(rows, spec.replay_rows, columns).select(*spec.schema.fieldNames())
    return frames
