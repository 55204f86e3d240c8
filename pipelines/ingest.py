"""Ingest ``__consumer_offsets`` into bronze, then silver, exactly once.

One Structured Streaming query per (cluster, source topic) reads Kafka, with its checkpoint
at ``<warehouse>/_checkpoints/<cluster>/<topic>/ingest``. Each micro-batch is
written by ``foreachBatch`` (``write_batch``):

1. bronze: every record as read, a plain copy;
2. silver: silver's own streaming query over bronze runs to what bronze holds
   (``pipelines.silver.derive_silver``: the decode, then offset commits, group metadata and its
   members, the newer group protocols' records, quarantine), so that silver can be derived again
   from bronze and is current when the batch ends;
3. an audit row per source partition (planned range, records read, records lost
   to retention), from the checkpoint's own offset log.

Exactly once: Spark writes a batch's offset range to the checkpoint before
running it and replays the same range after a crash; every bronze and audit write carries
``txnAppId = offsetlake-ingest:<cluster>:<topic>`` and ``txnVersion = batch id``,
so a replayed batch skips the tables it had already written and writes the rest; silver's
query has its own checkpoint and transactions.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.checkpoints import topic_checkpoint
from pipelines.decode import record_type_column
from pipelines.delta_tables import ensure_current_table, ensure_table, idempotent_append
from pipelines.offsets_topic_source import OFFSETS_TOPIC, check_source_topic, read_offsets_topic_stream
from pipelines.storage import Storage, join
from schemas import (
    ingest_batches,
    offsets_topic_records,
)
from schemas.catalog import BRONZE, SILVER

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery


@dataclass(frozen=True)
class IngestOptions:
    topic: str = OFFSETS_TOPIC
    once: bool = False  # Trigger.AvailableNow: drain what is there, then stop
    trigger_interval: str = "30 seconds"
    max_offsets_per_trigger: int | None = None


@dataclass(frozen=True)
class BatchReport:
    """What one micro-batch did (printed by the CLI, returned by tests)."""

    batch_id: int
    records: int
    rows_per_table: dict[str, int]
    lost_records: int
    seconds: float
    end_offsets: dict[int, int] = field(default_factory=dict)
    # The latest record timestamp (Kafka's, UTC, naive as Spark returns it) of the batch; None if it read none.
    newest_record: dt.datetime | None = None


def query_name(settings: Settings, topic: str) -> str:
    """The ingest's streaming query, by name (``spark.streams.active``)."""
    return f"offsetlake-ingest-{settings.cluster_name}-{topic}"


def checkpoint_path(settings: Settings, topic: str) -> str:
    return topic_checkpoint(settings, topic, "ingest")


def app_id(settings: Settings, topic: str) -> str:
    return f"offsetlake-ingest:{settings.cluster_name}:{topic}"


def ensure_tables(spark: SparkSession, settings: Settings) -> None:
    """Create the tables; give those with table properties (the change data feed of the silver tables gold reads)
    what a warehouse from an older offsetlake lacks. Here, not in the gold refresh: a property change conflicts
    with a concurrent append, and the ingest is the tables' only writer."""
    for spec in (BRONZE, *SILVER):
        if spec.properties:
            ensure_current_table(spark, settings, spec)
        else:
            ensure_table(spark, settings, spec)


def planned_ranges(storage: Storage, checkpoint: str, topic: str, batch_id: int) -> dict[int, tuple[int, int]]:
    """partition -> (start, end) offsets Spark planned for ``batch_id``, from the checkpoint's offset log.

    The offset log is written before a batch runs (it is the write-ahead log that
    makes replays exact), so it is there while foreachBatch executes. Read through Hadoop's
    FileSystem (``pipelines.storage``): the checkpoint is under the warehouse, on any URI.
    """

    def offsets_in(uri: str) -> dict[int, int]:
        text = storage.read_text(uri)
        for line in reversed((text or "").splitlines()):
            line = line.strip().lstrip("\x00")
            if line.startswith("{") and topic in line:
                return {int(p): int(o) for p, o in json.loads(line)[topic].items()}
        return {}

    end = offsets_in(join(checkpoint, "offsets", str(batch_id)))
    previous = join(checkpoint, "offsets", str(batch_id - 1))
    start = offsets_in(previous) if batch_id > 0 else offsets_in(join(checkpoint, "sources", "0", "0"))
    return {p: (start.get(p, e), e) for p, e in end.items()}


def committed_end_offsets(spark: SparkSession, settings: Settings, topic: str = OFFSETS_TOPIC) -> dict[int, int]:
    """partition -> end offset of the newest batch Spark committed for the topic's ingest: what silver holds of the
    topic, for any process (the lag's readiness rule, ``pipelines.end_offsets.unpassed_partitions``).

    The batch is the newest in the checkpoint's commit log (Spark writes ``commits/<id>`` once a batch's sink is
    done; only the names are looked at), its ends are what Spark planned for it (``planned_ranges``): under
    read_committed a planned end counts the control records (transaction markers) below it, which bronze's
    records never reach. Empty when no batch was committed.
    """
    storage = Storage(spark)
    checkpoint = checkpoint_path(settings, topic)
    batches = [int(entry.name) for entry in storage.list(join(checkpoint, "commits")) if entry.name.isdigit()]
    if not batches:
        return {}
    return {partition: end for partition, (_, end) in planned_ranges(storage, checkpoint, topic, max(batches)).items()}


def log_start_offsets(settings: Settings, topic: str, partitions: list[int]) -> dict[int, int]:
    """Each partition's current log start offset (ListOffsets EARLIEST)."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    from pipelines.kafka_clients import admin_client

    if not partitions:
        return {}
    with admin_client(settings) as (admin, _):
        futures = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.earliest() for p in partitions},
                                     request_timeout=settings.kafka.timeout_seconds)
        return {tp.partition: future.result().offset for tp, future in futures.items()}


def write_batch(spark: SparkSession, settings: Settings, topic: str, batch: DataFrame, batch_id: int
                ) -> BatchReport:
    """Write one micro-batch to bronze (at most once per batch id), then bring silver up to bronze
    (``pipelines.silver.derive_silver``: silver's own query over bronze), then write the batch's audit rows."""
    from pyspark.sql import functions as F

    from pipelines.silver import derive_silver

    started = time.monotonic()
    txn = app_id(settings, topic)
    raw = batch.persist()
    try:
        idempotent_append(bronze_rows(raw, settings, batch_id), settings, offsets_topic_records.TABLE, txn, batch_id)
        # Records per source partition and the newest record time (``offsetlake run``'s freshness): one
        # aggregate over the cached batch.
        per_partition: dict[int, int] = {}
        newest: dt.datetime | None = None
        for row in raw.groupBy("partition").agg(F.count(F.lit(1)).alias("records"),
                                                F.max("timestamp").alias("newest")).collect():
            per_partition[row["partition"]] = row["records"]
            newest = row["newest"] if newest is None or (row["newest"] and row["newest"] > newest) else newest
    finally:
        raw.unpersist()

    rows = derive_silver(spark, settings, topic)
    # Then the batch's audit rows: each write is idempotent per batch id, so a batch killed with silver written and
    # not the audit completes it when run again.
    ranges = planned_ranges(Storage(spark), checkpoint_path(settings, topic), topic, batch_id)
    audit, lost = _audit_rows(settings, topic, batch_id, per_partition, ranges)
    if audit:
        idempotent_append(spark.createDataFrame(audit, ingest_batches.TABLE.schema), settings, ingest_batches.TABLE,
                          txn, batch_id)
    records = sum(per_partition.values())
    # Every partition the batch planned, including those with nothing new (they get no audit row):
    # the CLI's "records behind the topic's end" compares these with the topic's ends per partition,
    # and a partition missing here would count as wholly behind.
    ends = {partition: end for partition, (_, end) in ranges.items()}
    return BatchReport(batch_id=batch_id, records=records, rows_per_table=rows, lost_records=lost,
                       seconds=time.monotonic() - started, end_offsets=ends, newest_record=newest)


def bronze_rows(raw: DataFrame, settings: Settings, batch_id: int) -> DataFrame:
    """bronze.offsets_topic_records' rows of a batch of Spark's Kafka source (key, value, topic, partition,
    offset, timestamp): each record as read, with its source position and the batch that read it."""
    from pyspark.sql import functions as F

    return raw.select(
        F.lit(settings.cluster_name).alias("cluster_name"), F.col("topic").alias("source_topic"),
        F.col("partition").alias("source_partition"), F.col("offset").alias("source_offset"),
        F.col("timestamp").alias("record_timestamp"), "key", "value",
        record_type_column(F.col("key")).alias("record_type"), F.current_timestamp().alias("ingested_at"),
        F.lit(batch_id).cast("long").alias("ingest_batch_id"), F.to_date("timestamp").alias("record_date"),
    )


def _audit_rows(settings: Settings, topic: str, batch_id: int, per_partition: dict[int, int],
                ranges: dict[int, tuple[int, int]]) -> tuple[list[dict], int]:
    partitions = sorted(set(ranges) | set(per_partition))
    try:
        starts = log_start_offsets(settings, topic, partitions)
    except Exception:  # noqa: BLE001 - an unreachable admin API must not fail the batch
        starts = {}
    now = dt.datetime.now(dt.UTC)
    rows, lost_total = [], 0
    for partition in partitions:
        start, end = ranges.get(partition, (None, None))
        log_start = starts.get(partition)
        lost = 0
        if start is not None and end is not None and log_start is not None and log_start > start:
            lost = min(end, log_start) - start
        lost_total += lost
        if start == end and not per_partition.get(partition):
            continue  # nothing planned, nothing read: no row
        rows.append({
            "cluster_name": settings.cluster_name, "source_topic": topic, "batch_id": batch_id,
            "source_partition": partition, "start_offset": start, "end_offset": end,
            "records": per_partition.get(partition, 0), "log_start_offset": log_start, "lost_records": lost,
            "ingested_at": now,
        })
    return rows, lost_total


def start_ingest(spark: SparkSession, settings: Settings, options: IngestOptions,
                 on_batch: Callable[[BatchReport], None] = lambda report: None) -> StreamingQuery:
    """Start the streaming query; the caller waits on it (see ``run_ingest``). A topic that does not exist is
    ``SourceTopicError`` before any table is made."""
    check_source_topic(settings, options.topic)
    ensure_tables(spark, settings)
    stream = read_offsets_topic_stream(spark, settings, options.topic, options.max_offsets_per_trigger)

    def each_batch(batch: DataFrame, batch_id: int) -> None:
        on_batch(write_batch(spark, settings, options.topic, batch, batch_id))

    writer = stream.writeStream.foreachBatch(each_batch).option(
        "checkpointLocation", checkpoint_path(settings, options.topic)
    ).queryName(query_name(settings, options.topic))
    writer = writer.trigger(availableNow=True) if options.once else writer.trigger(
        processingTime=options.trigger_interval)
    return writer.start()


# Spark 4.1.1's Kafka source fails *after* committing a batch that was replayed from
# the offset log on restart: KafkaMicroBatchStream.metrics dereferences the latest
# partition offsets, which are only set when the batch was planned in this run
# (NullPointerException "... because the return value of "scala.Option.get()" is null").
# The batch is already committed when this happens, so starting the query again
# simply continues with the next batch. Seen with kill -9 recovery in the tests.
_REPLAY_METRICS_BUG = 'because the return value of "scala.Option.get()" is null'
MAX_RESTARTS = 5


def run_ingest(spark: SparkSession, settings: Settings, options: IngestOptions,
               on_batch: Callable[[BatchReport], None] = lambda report: None,
               should_stop: Callable[[], bool] = lambda: False,
               on_restart: Callable[[str], None] = lambda reason: None,
               on_wait: Callable[[StreamingQuery], None] = lambda query: None) -> list[BatchReport]:
    """Run until the query ends (``once``) or ``should_stop()`` turns true; return the batch reports. ``on_wait``
    is called with the running query about twice a second (``pipelines.source_faults.StallWatch``)."""
    reports: list[BatchReport] = []

    def record(report: BatchReport) -> None:
        reports.append(report)
        on_batch(report)

    for attempt in range(MAX_RESTARTS + 1):
        query = start_ingest(spark, settings, options, record)
        try:
            while query.isActive and not should_stop():
                try:
                    query.awaitTermination(0.5)
                except Exception:  # noqa: BLE001 - the failure is read from query.exception() below
                    break
                if query.isActive:
                    on_wait(query)
        finally:
            if query.isActive:
                query.stop()
        failure = query.exception()
        if failure is None:
            return reports
        message = str(failure)
        if _REPLAY_METRICS_BUG in message and attempt < MAX_RESTARTS and not should_stop():
            on_restart("Spark's Kafka source failed reporting metrics after a replayed batch; restarting")
            continue
        raise IngestError(message.splitlines()[0]) from failure
    return reports


class IngestError(RuntimeError):
    """The streaming query failed; the message is its first line."""
