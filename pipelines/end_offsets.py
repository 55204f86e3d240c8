"""Snapshots of partition end offsets (silver.partition_end_offsets), and the lag arithmetic over them.

A snapshot asks the cluster, through confluent-kafka's AdminClient (ListOffsets,
KIP-396 in the admin API), for every partition of the chosen topics:

* EARLIEST: the log start offset;
* LATEST with READ_UNCOMMITTED: the high watermark, what a read_uncommitted consumer can reach;
* LATEST with READ_COMMITTED: the last stable offset (KIP-98), below the high
  watermark while a transaction is open on the partition.

With ``lag.message_timestamps`` it also reads, for each distinct offset that
some group had committed (OffsetFetch) below the high watermark, the
timestamp of the message there: that is what the message-timestamp lag
estimator needs, and it can only be read while the message is still in the
log, so it is taken with the snapshot and stored in the same row (one Delta
write per snapshot, not two).

Each row also carries the topic's id (KIP-516; Admin DescribeTopics, in Kafka's base64url text):
KIP-848 group records and newer offset commits name topics only by id, and readers name them from
the snapshots (through the dimension silver.topic_names and the view ``dashboards.topic_names``), so that a
refresh never asks the cluster and a rebuild from the warehouse gives the same rows.

Each snapshot is appended once: ``txnAppId = offsetlake-end-offsets:<cluster>``
and ``txnVersion = snapshot_id`` (its start time in ms), so writing the same
snapshot again is a no-op.

A snapshot is *pending* until the ingest has read everything written before it. With its own offsets it records
``__consumer_offsets``' ends for a read_committed consumer (the ingest's isolation), read last, after the
snapshot's time: every commit timestamped at or before the snapshot lies below them. It is appended to
silver.pending_end_offsets; the lag refresh (``promote_passed_snapshots``) moves each snapshot, oldest first, into
silver.partition_end_offsets once the ingest's planned end offsets (the newest committed batch's, from its
checkpoint, ``pipelines.ingest.committed_end_offsets``, or a running ingest's batch) reach those ends
(``unpassed_partitions``), and stops at the first that is not passed. Why a table of its own, not a readiness
marker in silver.partition_end_offsets: every reader of that table (the lag's streaming query and ``lag --full``,
the topic-name backfill) then reads passed snapshots only, unchanged, so the incremental and the full computation
see the same snapshots by construction; the pending table is small (what waits) and durable (a killed process
loses nothing: the next ``run`` or ``lag`` promotes it). Planned ends, not bronze's newest offset + 1: under
read_committed a transaction marker at a partition's end is never a record, so bronze never reaches the end,
while the planned end does. A snapshot that records no ends (no ``__consumer_offsets`` yet: no group ever
committed) waits for nothing and is appended to silver.partition_end_offsets at once.

The arithmetic (lag in messages, lag in seconds by interpolation) and the readiness rule are pure
Python, at the end of this module; gold.consumer_lag applies them.
"""

from __future__ import annotations

import bisect
import datetime as dt
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conf.settings import Settings
from schemas import partition_end_offsets, pending_end_offsets

if TYPE_CHECKING:
    from confluent_kafka.admin import ClusterMetadata
    from pyspark.sql import DataFrame, SparkSession

TABLE = partition_end_offsets.TABLE
PENDING = pending_end_offsets.TABLE
REQUEST_TIMEOUT = 30.0
LIST_OFFSETS_ATTEMPTS = 6


class EndOffsetsError(RuntimeError):
    """A snapshot could not be taken (unknown topic, a partition without a leader, a failed request)."""


@dataclass(frozen=True)
class CommittedMessage:
    offset: int  # the committed offset
    message_offset: int  # the message actually read there
    timestamp_ms: int
    timestamp_type: str  # create_time | log_append_time


@dataclass(frozen=True)
class PartitionEndOffsets:
    topic: str
    partition: int
    earliest_offset: int
    latest_offset: int
    last_stable_offset: int
    committed_messages: tuple[CommittedMessage, ...] = ()
    topic_id: str | None = None  # Kafka's text form; None when the cluster did not describe the topic


@dataclass(frozen=True)
class EndOffsetsSnapshot:
    cluster_name: str
    snapshot_id: int  # ms since the epoch when the requests were sent
    partitions: tuple[PartitionEndOffsets, ...]
    groups_read: int = 0  # groups whose committed offsets were fetched for message timestamps
    # __consumer_offsets partition -> its read_committed end, read after the snapshot: what the ingest must reach
    # before the snapshot's lag is computed (the module docstring); empty: nothing to wait for.
    offsets_topic_end: dict[int, int] = field(default_factory=dict)

    @property
    def snapshot_time(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.snapshot_id / 1000, dt.UTC)

    def by_partition(self) -> dict[tuple[str, int], PartitionEndOffsets]:
        return {(p.topic, p.partition): p for p in self.partitions}


@dataclass(frozen=True)
class SnapshotReport:
    snapshot: EndOffsetsSnapshot
    seconds: float
    topics: tuple[str, ...] = field(default_factory=tuple)


# --- taking a snapshot --------------------------------------------------------------------------

def select_topics(available: Sequence[str], requested: Sequence[str] | None, include_internal: bool = False
                  ) -> list[str]:
    """The topics to snapshot: the requested ones (all must exist), else every non-internal topic."""
    from pipelines.offsets_topic_source import is_internal_topic

    if requested:
        missing = sorted(set(requested) - set(available))
        if missing:
            raise EndOffsetsError(f"no such topic: {', '.join(missing)}")
        return sorted(set(requested))
    return sorted(t for t in available if include_internal or not is_internal_topic(t))


def check_topics(settings: Settings, topics: Sequence[str] | None = None, include_internal: bool = False
                 ) -> tuple[list[str], ClusterMetadata]:
    """The topics a snapshot of ``topics`` covers (``select_topics``) and the cluster's metadata, from one Metadata
    request for all topics (which creates none): the check ``snapshot-end-offsets`` makes before it starts Spark.
    ``ClusterUnreachable`` when the cluster does not answer within ``kafka.timeout_seconds``."""
    from pipelines.kafka_clients import cluster_metadata

    metadata = cluster_metadata(settings)
    try:
        return select_topics(list(metadata.topics), topics, include_internal), metadata
    except EndOffsetsError as exc:
        raise EndOffsetsError(f"{exc} on cluster {settings.cluster_name} ({settings.kafka.bootstrap_servers})") \
            from None


def take_snapshot(settings: Settings, topics: Sequence[str] | None = None, *, include_internal: bool = False,
                  message_timestamps: bool | None = None) -> EndOffsetsSnapshot:
    """ListOffsets for every partition of ``topics`` (default: all non-internal topics), nothing written."""
    from confluent_kafka import IsolationLevel, KafkaError, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    from pipelines.kafka_clients import client_config

    _TRANSIENT = {KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE,  # noqa: N806
                  KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError.FENCED_LEADER_EPOCH, KafkaError.UNKNOWN_LEADER_EPOCH,
                  KafkaError.OFFSET_NOT_AVAILABLE, KafkaError.REQUEST_TIMED_OUT, KafkaError._TIMED_OUT,
                  KafkaError._TRANSPORT}

    chosen, metadata = check_topics(settings, topics, include_internal)
    admin = AdminClient(client_config(settings))
    partitions: list[TopicPartition] = []
    for topic in chosen:
        meta = metadata.topics[topic]
        if meta.error is not None:
            raise EndOffsetsError(f"topic {topic} cannot be described: {meta.error}")
        partitions.extend(TopicPartition(topic, p) for p in sorted(meta.partitions))

    snapshot_id = time.time_ns() // 1_000_000
    if not partitions:
        return EndOffsetsSnapshot(settings.cluster_name, snapshot_id, ())

    def list_offsets(spec: Callable[[], OffsetSpec], isolation: IsolationLevel,
                     of: Sequence[TopicPartition] = tuple(partitions)) -> dict[tuple[str, int], int]:
        # A leader change, or a topic created a moment ago, answers NOT_LEADER_FOR_PARTITION and the
        # like: ask again, with backoff, once the client's metadata has caught up.
        out: dict[tuple[str, int], int] = {}
        todo = list(of)
        for attempt in range(LIST_OFFSETS_ATTEMPTS):
            futures = admin.list_offsets({TopicPartition(tp.topic, tp.partition): spec() for tp in todo},
                                         isolation_level=isolation, request_timeout=REQUEST_TIMEOUT)
            todo = []
            for tp, future in futures.items():
                try:
                    out[(tp.topic, tp.partition)] = future.result().offset
                except KafkaException as exc:
                    error = exc.args[0] if exc.args else exc
                    code = error.code() if isinstance(error, KafkaError) else None
                    if code in _TRANSIENT and attempt + 1 < LIST_OFFSETS_ATTEMPTS:
                        todo.append(tp)
                        continue
                    raise EndOffsetsError(f"ListOffsets failed for {tp.topic}-{tp.partition}: {error}") from exc
            if not todo:
                break
            time.sleep(0.2 * 2 ** attempt)
        return out

    # The high watermark first, then the LSO and the log start: the LSO is never above a high
    # watermark read before it, so a snapshot never shows last_stable_offset > latest_offset.
    latest = list_offsets(OffsetSpec.latest, IsolationLevel.READ_UNCOMMITTED)
    stable = list_offsets(OffsetSpec.latest, IsolationLevel.READ_COMMITTED)
    earliest = list_offsets(OffsetSpec.earliest, IsolationLevel.READ_UNCOMMITTED)
    topic_ids = describe_topic_ids(admin, chosen)

    fetch = settings.lag.message_timestamps if message_timestamps is None else message_timestamps
    committed_messages: dict[tuple[str, int], tuple[CommittedMessage, ...]] = {}
    groups_read = 0
    if fetch:
        committed, groups_read = committed_offsets(admin, set(chosen))
        wanted = {key: sorted(o for o in offsets if o < latest[key])
                  for key, offsets in committed.items() if key in latest}
        committed_messages = read_committed_messages(settings, {k: v for k, v in wanted.items() if v})

    # Last: the offsets topic's ends are then at least as new as every commit made before snapshot_id.
    from pipelines.offsets_topic_source import OFFSETS_TOPIC

    offsets_topic = metadata.topics.get(OFFSETS_TOPIC)
    offsets_topic_end: dict[int, int] = {}
    if offsets_topic is not None and offsets_topic.error is None and offsets_topic.partitions:
        ends = list_offsets(OffsetSpec.latest, IsolationLevel.READ_COMMITTED,
                            [TopicPartition(OFFSETS_TOPIC, p) for p in sorted(offsets_topic.partitions)])
        offsets_topic_end = {partition: end for (_, partition), end in ends.items()}

    rows = tuple(
        PartitionEndOffsets(
            topic=tp.topic, partition=tp.partition,
            earliest_offset=earliest[(tp.topic, tp.partition)],
            latest_offset=latest[(tp.topic, tp.partition)],
            # The LSO read after the high watermark may have moved past it; cap it to keep LSO <= HW.
            last_stable_offset=min(stable[(tp.topic, tp.partition)], latest[(tp.topic, tp.partition)]),
            committed_messages=committed_messages.get((tp.topic, tp.partition), ()),
            topic_id=topic_ids.get(tp.topic),
        )
        for tp in partitions
    )
    return EndOffsetsSnapshot(settings.cluster_name, snapshot_id, rows, groups_read, offsets_topic_end)


def describe_topic_ids(admin: object, topics: Sequence[str]) -> dict[str, str]:
    """topic -> its id (Admin DescribeTopics), in Kafka's text form; a topic the cluster does not describe
    (deleted meanwhile, no permission to describe) is left out: its rows get a null id, the snapshot goes on."""
    from confluent_kafka import TopicCollection

    if not topics:
        return {}
    try:
        futures = admin.describe_topics(TopicCollection(list(topics)),  # type: ignore[attr-defined]
                                        request_timeout=REQUEST_TIMEOUT)
    except Exception:  # noqa: BLE001 - ids are an enrichment of the snapshot, see above
        return {}
    found = {}
    for name, future in futures.items():
        try:
            found[name] = kafka_uuid_text(future.result().topic_id)
        except Exception:  # noqa: BLE001 - see above
            continue
    return found


def kafka_uuid_text(value: object) -> str:
    """A confluent-kafka ``Uuid`` in Kafka's text form (``Uuid.toString``), as the decoders print topic ids
    (``decoders.wire.Uuid``; librdkafka's own ``str()`` is plain base64)."""
    from decoders.wire import Uuid

    mask = (1 << 64) - 1
    raw = ((value.get_most_significant_bits() & mask) << 64  # type: ignore[attr-defined]
           | (value.get_least_significant_bits() & mask))  # type: ignore[attr-defined]
    return str(Uuid(raw.to_bytes(16, "big")))


def committed_offsets(admin: object, topics: set[str]) -> tuple[dict[tuple[str, int], set[int]], int]:
    """(topic, partition) -> offsets committed by any group (OffsetFetch per group), and the group count."""
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException

    listing = admin.list_consumer_groups(request_timeout=REQUEST_TIMEOUT).result()  # type: ignore[attr-defined]
    out: dict[tuple[str, int], set[int]] = {}
    groups = sorted(g.group_id for g in listing.valid)
    for group in groups:
        # confluent-kafka's OffsetFetch takes one group per request.
        futures = admin.list_consumer_group_offsets(  # type: ignore[attr-defined]
            [ConsumerGroupTopicPartitions(group)], request_timeout=REQUEST_TIMEOUT)
        try:
            result = futures[group].result()
        except KafkaException:
            continue  # the group went away between the listing and the fetch
        for tp in result.topic_partitions or []:
            if tp.topic in topics and tp.offset >= 0 and tp.error is None:
                out.setdefault((tp.topic, tp.partition), set()).add(tp.offset)
    return out, len(groups)


def read_committed_messages(settings: Settings, offsets: dict[tuple[str, int], list[int]],
                            timeout: float = REQUEST_TIMEOUT) -> dict[tuple[str, int], tuple[CommittedMessage, ...]]:
    """Read one message at each wanted offset and keep its timestamp.

    One consumer, assigned (never subscribed: it joins no group and commits
    nothing), reads the k-th wanted offset of every partition in round k.
    read_uncommitted, so an open transaction does not hide the message; a
    transaction marker or a compacted offset yields the next message, an offset
    below the log start the first one (auto.offset.reset=earliest).
    """
    from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, Consumer, KafkaError, TopicPartition

    if not offsets:
        return {}
    from pipelines.kafka_clients import client_config

    consumer = Consumer({
        **client_config(settings),
        "group.id": f"offsetlake-end-offsets-{settings.cluster_name}",
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        "isolation.level": "read_uncommitted",
        # An offset with only control records (transaction markers) after it has no message to read:
        # the end-of-partition event ends the wait for it.
        "enable.partition.eof": True,
    })
    found: dict[tuple[str, int], list[CommittedMessage]] = {}
    try:
        rounds = max(len(v) for v in offsets.values())
        for k in range(rounds):
            wanted = {key: offs[k] for key, offs in offsets.items() if len(offs) > k}
            assignment = [TopicPartition(t, p, o) for (t, p), o in wanted.items()]
            consumer.assign(assignment)
            deadline = time.monotonic() + timeout
            while wanted and time.monotonic() < deadline:
                for message in consumer.consume(num_messages=500, timeout=0.5):
                    key = (message.topic(), message.partition())
                    if key not in wanted:
                        continue
                    error = message.error()
                    if error is not None:
                        if error.code() == KafkaError._PARTITION_EOF:
                            wanted.pop(key)
                        continue
                    kind, ts = message.timestamp()
                    found.setdefault(key, []).append(CommittedMessage(
                        offset=wanted.pop(key), message_offset=message.offset(), timestamp_ms=ts,
                        timestamp_type="log_append_time" if kind == TIMESTAMP_LOG_APPEND_TIME else "create_time"))
                    consumer.pause([TopicPartition(*key)])  # one message is all this round needs from it
            consumer.resume(assignment)  # librdkafka keeps a partition's pause across assign()
            consumer.unassign()
    finally:
        consumer.close()
    return {key: tuple(messages) for key, messages in found.items()}


# --- writing it ---------------------------------------------------------------------------------

def app_id(settings: Settings) -> str:
    return f"offsetlake-end-offsets:{settings.cluster_name}"


def pending_app_id(settings: Settings) -> str:
    return f"offsetlake-end-offsets-pending:{settings.cluster_name}"


def snapshot_frame(spark: SparkSession, snapshot: EndOffsetsSnapshot) -> DataFrame:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    raw = T.StructType([
        T.StructField("topic", T.StringType(), False), T.StructField("partition", T.IntegerType(), False),
        T.StructField("earliest_offset", T.LongType(), False), T.StructField("latest_offset", T.LongType(), False),
        T.StructField("last_stable_offset", T.LongType(), False), T.StructField("topic_id", T.StringType()),
        T.StructField("messages", T.ArrayType(T.StructType([
            T.StructField("offset", T.LongType(), False), T.StructField("message_offset", T.LongType()),
            T.StructField("timestamp_ms", T.LongType()), T.StructField("timestamp_type", T.StringType()),
        ]), False)),
    ])
    rows = [(p.topic, p.partition, p.earliest_offset, p.latest_offset, p.last_stable_offset, p.topic_id,
             [(m.offset, m.message_offset, m.timestamp_ms, m.timestamp_type) for m in p.committed_messages])
            for p in snapshot.partitions]
    # Times go to Spark as epoch ms and become timestamps there: no local-time-zone conversion on the way.
    snapshot_time = F.timestamp_millis(F.lit(snapshot.snapshot_id))
    return spark.createDataFrame(rows, raw).select(
        F.lit(snapshot.cluster_name).alias("cluster_name"),
        F.lit(snapshot.snapshot_id).cast("long").alias("snapshot_id"),
        snapshot_time.alias("snapshot_time"),
        "topic", "partition", "earliest_offset", "latest_offset", "last_stable_offset",
        F.transform("messages", lambda m: F.struct(
            m["offset"].alias("offset"), m["message_offset"].alias("message_offset"),
            F.timestamp_millis(m["timestamp_ms"]).alias("message_timestamp"),
            m["timestamp_type"].alias("timestamp_type"),
        )).alias("committed_messages"),
        F.to_date(snapshot_time).alias("snapshot_date"), "topic_id",
    ).select(*TABLE.schema.fieldNames())


def append_snapshot(spark: SparkSession, settings: Settings, snapshot: EndOffsetsSnapshot) -> None:
    """Append the snapshot to silver.pending_end_offsets (silver.partition_end_offsets when it records no
    offsets-topic ends: nothing to wait for); a snapshot already there (same snapshot_id) is skipped by Delta.

    First the topic ids it named that silver.topic_names lacks (``pipelines.topic_names``): a crash in between
    loses no name, the next snapshot describes the topics again."""
    from pyspark.sql import functions as F

    from pipelines.delta_tables import ensure_current_table, ensure_table, idempotent_append
    from pipelines.topic_names import record_topic_names

    record_topic_names(spark, settings, snapshot)
    ensure_current_table(spark, settings, TABLE)  # a table from before gains topic_id and the change data feed
    if not snapshot.partitions:
        return
    frame = snapshot_frame(spark, snapshot)
    if not snapshot.offsets_topic_end:
        idempotent_append(frame, settings, TABLE, app_id(settings), snapshot.snapshot_id)
        return
    ensure_table(spark, settings, PENDING)
    ends = F.create_map(*[x for p, o in sorted(snapshot.offsets_topic_end.items())
                          for x in (F.lit(p).cast("int"), F.lit(o).cast("long"))])
    idempotent_append(frame.withColumn("offsets_topic_end", ends), settings, PENDING, pending_app_id(settings),
                      snapshot.snapshot_id)


@dataclass(frozen=True)
class PendingSnapshots:
    """What ``promote_passed_snapshots`` did: the snapshots it moved into silver.partition_end_offsets, those still
    waiting, and what the oldest waiting one waits for (``unpassed_partitions``)."""

    promoted: tuple[int, ...] = ()
    pending: tuple[int, ...] = ()
    waiting_for: dict[int, int] = field(default_factory=dict)  # __consumer_offsets partition -> end not reached

    def line(self) -> str | None:
        """``lag: 2 snapshots pending until the ingest reaches __consumer_offsets 3:1,234, 12:88``; None if none."""
        if not self.pending:
            return None
        from pipelines.offsets_topic_source import OFFSETS_TOPIC

        shown = sorted(self.waiting_for.items())[:4]
        more = len(self.waiting_for) - len(shown)
        where = ", ".join(f"{p}:{o:,}" for p, o in shown) + (f" and {more} more partitions" if more > 0 else "")
        count = f"{len(self.pending)} snapshot{'s' if len(self.pending) != 1 else ''}"
        return f"lag: {count} pending until the ingest reaches {OFFSETS_TOPIC} {where}"


def fed_from_another_topic(spark: SparkSession, settings: Settings) -> bool:
    """Whether this cluster's ingest has read only topics other than ``__consumer_offsets`` (copies of it, as
    benches and tests make): checkpoints ``_checkpoints/<cluster>/<topic>/ingest`` exist, none of the offsets
    topic's."""
    from pipelines.checkpoints import topic_checkpoint
    from pipelines.offsets_topic_source import OFFSETS_TOPIC
    from pipelines.storage import Storage, join

    storage = Storage(spark)
    if storage.exists(topic_checkpoint(settings, OFFSETS_TOPIC, "ingest")):
        return False
    topics = storage.list(join(settings.warehouse_uri, "_checkpoints", settings.cluster_name))
    return any(entry.is_dir and storage.exists(join(entry.uri, "ingest")) for entry in topics)


def promote_passed_snapshots(spark: SparkSession, settings: Settings, reached: Mapping[int, int] | None = None
                             ) -> PendingSnapshots:
    """Move the pending snapshots the ingest has passed into silver.partition_end_offsets, oldest first, stopping
    at the first it has not (the module docstring says why).

    What the ingest has passed: the newest committed batch's planned ends (``committed_end_offsets``), and
    ``reached`` (a running ingest's batch whose silver is written but which Spark has not committed yet).
    Exactly once: each snapshot is appended with its own ``txnVersion`` (as ``append_snapshot`` did), then the
    promoted rows leave the pending table; a crash in between leaves rows that the next call skips and removes.
    """
    from pyspark.sql import functions as F

    from pipelines.delta_tables import ensure_current_table, idempotent_append, read_table, table_exists, table_path
    from pipelines.ingest import committed_end_offsets

    if not table_exists(settings, PENDING):
        return PendingSnapshots()
    cluster = F.col("cluster_name") == settings.cluster_name
    newest = (read_table(spark, settings, TABLE).filter(cluster).agg(F.max("snapshot_id")).first()
              if table_exists(settings, TABLE) else None)
    newest_promoted = None if newest is None else newest[0]
    rows = read_table(spark, settings, PENDING).filter(cluster)
    waiting = rows if newest_promoted is None else rows.filter(F.col("snapshot_id") > newest_promoted)
    snapshots = [(int(r[0]), dict(r[1])) for r in waiting.groupBy("snapshot_id").agg(
        F.first("offsets_topic_end")).orderBy("snapshot_id").collect()]
    if not snapshots and newest_promoted is None:
        return PendingSnapshots()
    passed = dict(committed_end_offsets(spark, settings))
    for partition, end in (reached or {}).items():
        passed[partition] = max(end, passed.get(partition, end))
    # A warehouse fed from a copy of the offsets topic (`ingest --topic`) has no ingest of __consumer_offsets whose
    # position the recorded ends could be compared with: its snapshots count as passed, as before the rule.
    judged = bool(passed) or reached is not None or not fed_from_another_topic(spark, settings)
    promoted: list[int] = []
    missing: dict[int, int] = {}
    for snapshot_id, ends in snapshots:
        missing = unpassed_partitions(ends, passed) if judged else {}
        if missing:
            break
        if not promoted:
            ensure_current_table(spark, settings, TABLE)
        idempotent_append(rows.filter(F.col("snapshot_id") == snapshot_id), settings, TABLE, app_id(settings),
                          snapshot_id)
        promoted.append(snapshot_id)
    done = max([*promoted, *([newest_promoted] if newest_promoted is not None else [])], default=None)
    if done is not None and not rows.filter(F.col("snapshot_id") <= done).isEmpty():
        from delta.tables import DeltaTable

        DeltaTable.forPath(spark, table_path(settings, PENDING)).delete(cluster & (F.col("snapshot_id") <= done))
    return PendingSnapshots(tuple(promoted), tuple(s for s, _ in snapshots[len(promoted):]), missing)


def snapshot_end_offsets(spark: SparkSession, settings: Settings, topics: Sequence[str] | None = None, *,
                         include_internal: bool = False, message_timestamps: bool | None = None
                         ) -> SnapshotReport:
    """Take one snapshot and append it to silver.partition_end_offsets."""
    started = time.monotonic()
    snapshot = take_snapshot(settings, topics, include_internal=include_internal,
                             message_timestamps=message_timestamps)
    append_snapshot(spark, settings, snapshot)
    return SnapshotReport(snapshot, time.monotonic() - started,
                          tuple(sorted({p.topic for p in snapshot.partitions})))


# --- the arithmetic (pure) ----------------------------------------------------------------------

def unpassed_partitions(ends: Mapping[int, int], reached: Mapping[int, int]) -> dict[int, int]:
    """The ``__consumer_offsets`` partitions (-> end) whose end recorded with a snapshot the ingest has not reached;
    empty when the snapshot is passed and its lag can be computed from everything before it.

    ``reached`` must be the ingest's planned end offsets, not bronze's newest offset + 1: read_committed
    (KIP-98) skips control records, so a partition ending in a transaction marker (every transactional
    offset commit, TxnOffsetCommit, ends in one) has its end one past any record, which only the planned end
    reaches. A partition the ingest never planned counts as reached at 0 (an empty partition's end).
    """
    return {partition: end for partition, end in ends.items() if reached.get(partition, 0) < end}


@dataclass(frozen=True)
class LagInMessages:
    lag: int | None
    commit_ahead_of_snapshot: bool | None
    committed_below_log_start: bool | None


def lag_in_messages(committed: int | None, earliest: int, latest: int) -> LagInMessages:
    """Messages still to read at a snapshot.

    * nothing committed (no commit, or its offset deleted): lag and flags are null;
    * committed above the high watermark (a snapshot older than the commit, or an
      offset committed past the end): lag 0, flagged ``commit_ahead_of_snapshot``;
    * committed below the log start (retention or DeleteRecords removed messages
      the group never read): only the messages still in the log count,
      ``latest - earliest``, flagged ``committed_below_log_start``; the consumer
      cannot read the deleted ones and will jump to its auto.offset.reset position.
    """
    if committed is None:
        return LagInMessages(None, None, None)
    ahead = committed > latest
    below = committed < earliest
    return LagInMessages(max(0, latest - max(committed, earliest)), ahead, below)


def oldest_unread_offset(committed: int, earliest: int) -> int:
    """The offset of the oldest message the group has still to read (both lag-in-seconds estimators age it)."""
    return max(committed, earliest)


def interpolated_time_at_offset(history: Sequence[tuple[int, int]], offset: int) -> float | None:
    """When the high watermark reached ``offset``, in ms, from ``(time_ms, latest_offset)`` snapshots.

    ``history`` is the partition's snapshots, oldest first. The bracket is the
    last snapshot whose high watermark was at or below ``offset`` and the first
    later one above it; between them the high watermark is taken to grow
    linearly. None when no snapshot is at or below ``offset`` (it was reached
    before the history starts) or none after is above it (not reached yet).
    """
    below = None
    for i, (_, latest) in enumerate(history):
        if latest <= offset:
            below = i
    if below is None:
        return None
    t0, o0 = history[below]
    for t1, o1 in history[below + 1:]:
        if o1 > offset:
            return t0 + (offset - o0) * (t1 - t0) / (o1 - o0)
    return None


@dataclass(frozen=True)
class WatermarkHistory:
    """A partition's ``(time_ms, latest_offset)`` snapshots, oldest first, read up to ``end`` (exclusive).

    ``interpolated_time_at_offset`` for every lag row of a partition, without its two linear passes: where the
    high watermark never went down (``rising``: the usual case; a deleted and re-created topic is not) the last
    snapshot at or below an offset is a binary search and the bracket's upper end the snapshot after it. Why:
    gold.consumer_lag asks it for each row of each new snapshot over the partition's whole history, so its cost
    grew with the number of snapshots ever taken (1,440 a day at the default minute), per row. ``upto`` gives a
    prefix without copying it. Anything not rising is handed to ``interpolated_time_at_offset`` unchanged.
    """

    times: Sequence[int]
    latest: Sequence[int]
    rising: bool
    end: int

    @classmethod
    def of(cls, history: Sequence[tuple[int, int]]) -> WatermarkHistory:
        times = [t for t, _ in history]
        latest = [o for _, o in history]
        return cls(times, latest, all(a <= b for a, b in zip(latest, latest[1:], strict=False)), len(latest))

    def upto(self, end: int) -> WatermarkHistory:
        """The first ``end`` snapshots (a view: the lists are shared)."""
        return WatermarkHistory(self.times, self.latest, self.rising, end)

    def time_at_offset(self, offset: int) -> float | None:
        """``interpolated_time_at_offset`` of these snapshots: the same value, in O(log n) when ``rising``."""
        if not self.rising:
            prefix = list(zip(self.times[:self.end], self.latest[:self.end], strict=True))
            return interpolated_time_at_offset(prefix, offset)
        below = bisect.bisect_right(self.latest, offset, 0, self.end) - 1
        if below < 0 or below + 1 >= self.end:
            return None  # reached before the history starts, or not reached yet
        t0, o0, t1, o1 = self.times[below], self.latest[below], self.times[below + 1], self.latest[below + 1]
        return t0 + (offset - o0) * (t1 - t0) / (o1 - o0)


def lag_seconds_interpolated(history: WatermarkHistory, now_ms: int, committed: int | None, earliest: int,
                             lag: int | None) -> float | None:
    """Estimator 1: seconds since the high watermark reached the oldest unread offset (interpolated)."""
    if committed is None or lag is None:
        return None
    if lag == 0:
        return 0.0
    reached = history.time_at_offset(oldest_unread_offset(committed, earliest))
    return None if reached is None else max(0.0, (now_ms - reached) / 1000.0)


def lag_seconds_from_message(now_ms: int, message_timestamp_ms: int | None, lag: int | None) -> float | None:
    """Estimator 2: seconds since the timestamp of the message at the committed offset.

    The timestamp is the producer's (CreateTime) unless the topic uses
    LogAppendTime; a producer clock or a replayed old message can make it
    differ from when the message reached the log, hence two estimators.
    """
    if lag is None:
        return None
    if lag == 0:
        return 0.0
    if message_timestamp_ms is None:
        return None
    return max(0.0, (now_ms - message_timestamp_ms) / 1000.0)
