"""The main job as one long-running Spark application (``offsetlake run``): ingest, gold, lag and snapshots.

One application keeps the whole warehouse current: three
Structured Streaming queries, one per layer, each with its own checkpoint, run one after the other in a
thread of the application. The ingest's query reads Kafka on a processing-time trigger (Kafka -> bronze,
a plain copy, exactly once, ``pipelines/ingest.py``); each of its micro-batches, once in bronze, runs
silver's query over bronze to what bronze holds (``pipelines.silver.derive_silver``: the decode), then
gold's query over silver's change data feeds to what silver holds (``refresh_gold_tables``,
``pipelines.gold.silver_changes``: the cost follows what is new; its checkpoint is gold's bookkeeping),
before the ingest plans its next batch. On a timer a thread of its own takes an end-offset snapshot in
the same JVM instead of a scheduler starting one per minute, and then refreshes ``gold.consumer_lag``,
which only a snapshot the ingest has passed extends (``pipelines.end_offsets``: one still pending is refreshed
after the batches that follow). The snapshot (a ListOffsets of every partition, then a Delta append) runs
beside the batches, not between them: with thousands of partitions it takes tens of seconds, and every batch's
gold refresh waited for it; only the lag refresh after it takes its turn with the batches. On another timer
(``maintenance.every_minutes``) each table is compacted and vacuumed in turn, between two batches. Each cycle is
reported as one line (``CycleReport.line``): records, rows per layer, and freshness -- how old the newest source
record now visible in gold is.

The group tables are replayed per touched group from silver (``pipelines.gold.group_history`` over the pure
replay in ``history/``); Burrow's window for lag is kept in Spark's state store (``pipelines.gold.consumer_lag``).

Why gold is refreshed after each batch, in the ingest's thread, and not beside the ingest: on two cores the two
fought for the CPU when they ran side by side, and a record waited for its batch, then for the refresh already
running, then for the next one; one after the other, both latencies were lower and more records were absorbed
(the measurement is in CHANGELOG.md). Batches still absorb what arrived meanwhile: a trigger that is behind plans all
that is new, so gold's fixed cost is paid once per batch, however large. The price: bronze trails Kafka by
a refresh more, which ``__consumer_offsets``' retention (compaction keeps each key's last record) never
comes near. Exactly once is unchanged: a batch's Delta writes are idempotent per batch id, gold's refresh is
idempotent from silver, and a kill between the two leaves the refresh to the next batch or run. A failed
refresh ends the job after that batch (the batch stays committed; the next run refreshes from where gold
is). A stop (SIGTERM) ends the ingest after its batch and refresh; what was committed stays. A run begins
with a refresh of its own, before its first batch: a batch left unrefreshed by a stop is absorbed even if
no record follows.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from conf.settings import Settings
from pipelines.freshness import Visibility
from pipelines.ingest import BatchReport, IngestOptions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from pipelines.maintenance import TableMaintenance

#: Where a failed maintenance of a table is logged (the CLI sends logging to its debug log).
MAINTENANCE_LOGGER = "offsetlake.maintenance"
#: How often the main thread looks at the stop flag.
POLL_SECONDS = 0.5


@dataclass(frozen=True)
class MainJobOptions:
    ingest: IngestOptions
    snapshot_every: float | None = 60.0  # seconds between end-offset snapshots; None: take none
    # Seconds between rounds of OPTIMIZE and VACUUM over every table (maintenance.every_minutes); None: none.
    maintain_every: float | None = None


@dataclass(frozen=True)
class CycleReport:
    """One cycle of the loop: the micro-batches gold absorbed, what each layer holds, and how fresh gold is."""

    batches: tuple[BatchReport, ...]
    gold_written: tuple[str, ...] | None  # the gold tables the refresh wrote; None: gold not refreshed
    lag_rows: int | None  # rows the lag refresh appended; None: not refreshed (no new snapshot)
    snapshot: str | None  # "taken" / the reason one failed / None: none due
    seconds: float  # the cycle's gold, lag and snapshot work
    newest_visible: dt.datetime | None  # the newest source record's time now visible in gold (naive, as Spark gives it)
    freshness: float | None = field(default=None)  # seconds from that record's time to the cycle's end
    # When the cycle ended and how far into the source topic gold then reached (pipelines/freshness.py).
    visibility: Visibility | None = None
    # For a cycle that read no record: when the ingest last found the topic's end reached (aware, UTC;
    # ``caught_up_at``), None when not known to be. Gold holds every record the topic had then.
    current_as_of: dt.datetime | None = None
    lag_pending: str | None = None  # snapshots the ingest has not passed yet (PendingSnapshots.line); None: none

    def line(self) -> str:
        """The cycle's line: ``run: batches 3-5: 1,200 records -> bronze 1,200, silver 1,180 (..), gold ...``."""
        records = self.records
        silver: dict[str, int] = {}
        for batch in self.batches:
            for table, rows in batch.rows_per_table.items():
                if table != "group_records":  # the sum of group_metadata and consumer_group_records
                    silver[table] = silver.get(table, 0) + rows
        ids = [b.batch_id for b in self.batches]
        which = "no new batch" if not ids else (f"batch {ids[0]}" if len(ids) == 1 else f"batches {ids[0]}-{ids[-1]}")
        per_table = ", ".join(f"{table} {n:,}" for table, n in sorted(silver.items()) if n)
        parts = [f"run: {which}: {records:,} records -> bronze {records:,}, silver {sum(silver.values()):,}"
                 + (f" ({per_table})" if per_table else "")]
        if self.gold_written is not None:
            parts.append(f"gold {len(self.gold_written)} tables written"
                         + (f" ({', '.join(name.removeprefix('gold.') for name in self.gold_written)})"
                            if self.gold_written else ""))
        if self.lag_rows is not None:
            parts.append(f"lag +{self.lag_rows:,} rows")
        if self.snapshot is not None:
            parts.append(f"snapshot {self.snapshot}")
        if self.lag_pending is not None:
            parts.append(self.lag_pending)
        return ", ".join(parts) + f" in {self.seconds:.1f}s; {self.freshness_text()}"

    @property
    def records(self) -> int:
        return sum(b.records for b in self.batches)

    def freshness_text(self) -> str:
        """How fresh gold is: the age of its newest record for a cycle that carried records; for one that read
        none, "gold current as of <time>" when the ingest had reached the topic's end (an age would only grow while
        gold is complete), else the time of gold's newest record."""
        if self.records == 0 and self.current_as_of is not None:
            return f"gold current as of {iso_utc(self.current_as_of)}"
        if self.records == 0 and self.newest_visible is not None:
            return f"no new record (the newest in gold from {iso_utc(self.newest_visible)})"
        return "freshness unknown (no record in gold yet)" if self.freshness is None else \
            f"freshness {self.freshness:,.1f}s"

    def fields(self) -> dict[str, object]:
        """The line's figures, for a log shipper (``offsetlake run --log-format json``)."""
        silver: dict[str, int] = {}
        for batch in self.batches:
            for table, rows in batch.rows_per_table.items():
                if table != "group_records":
                    silver[table] = silver.get(table, 0) + rows
        return {
            "batches": [b.batch_id for b in self.batches],
            "records": self.records,
            "rows": {"bronze": self.records, "silver": silver,
                     "gold_tables_written": list(self.gold_written) if self.gold_written is not None else None,
                     "lag": self.lag_rows},
            "snapshot": self.snapshot,
            "lag_pending": self.lag_pending,
            "seconds": round(self.seconds, 3),
            "freshness_seconds": round(self.freshness, 3) if self.records and self.freshness is not None else None,
            "gold_current_as_of": iso_utc(self.current_as_of) if not self.records and self.current_as_of else None,
        }


def iso_utc(moment: dt.datetime) -> str:
    """``2026-11-27T10:00:00Z``: an aware time in UTC; a naive one (as Spark gives timestamps) is the local clock's."""
    aware = moment if moment.tzinfo is not None else moment.astimezone()
    return aware.astimezone(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def caught_up_at(progress: dict | None) -> dt.datetime | None:
    """When a streaming query last found nothing left to read (aware, UTC): its progress (Spark's
    ``StreamingQueryProgress`` as a dict) whose every source's ``endOffset`` is that source's ``latestOffset``;
    the progress' ``timestamp`` is when that trigger asked the source for its latest offsets. An idle query
    reports such a progress every ``spark.sql.streaming.noDataProgressEventInterval``. None otherwise."""
    import json

    if not progress or not progress.get("sources") or not progress.get("timestamp"):
        return None

    def offsets(value: object) -> object:
        if not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except ValueError:  # PySpark's SourceProgress holds str() of the parsed offsets: equal when they are
            return value

    for source in progress["sources"]:
        latest = offsets(source.get("latestOffset"))
        if latest is None or offsets(source.get("endOffset")) != latest:
            return None
    return dt.datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).astimezone(dt.UTC)


def ingest_progress(spark: SparkSession, settings: Settings, topic: str) -> dict | None:
    """The running ingest query's last progress, None when it is not running (yet) or has reported none."""
    from pipelines.ingest import query_name

    for query in spark.streams.active:
        if query.name == query_name(settings, topic):
            return query.lastProgress
    return None


def newest_record(batches: tuple[BatchReport, ...], before: dt.datetime | None) -> dt.datetime | None:
    """The latest record time among these batches and ``before`` (None where none is known)."""
    times = [t for t in (before, *(b.newest_record for b in batches)) if t is not None]
    return max(times) if times else None


def reached_offsets(reached: dict[int, int], batches: Sequence[BatchReport]) -> dict[int, int]:
    """Each partition's furthest end offset over ``reached`` and the batches' planned ends (a new dict)."""
    merged = dict(reached)
    for batch in batches:
        for partition, end in batch.end_offsets.items():
            merged[partition] = max(end, merged.get(partition, end))
    return merged


def stamp(into: dict[str, dt.datetime]) -> Callable[[tuple[str, ...]], None]:
    """A refresh's ``on_written``: the time (aware, UTC) each table was committed, kept in ``into``."""
    return lambda tables: into.update(dict.fromkeys(tables, dt.datetime.now(dt.UTC)))


def age_seconds(record_time: dt.datetime | None, now: float) -> float | None:
    """Seconds from a record time (naive, as Spark returns timestamps: the local clock) to ``now`` (epoch)."""
    return None if record_time is None else max(0.0, now - record_time.timestamp())


def run_main_job(spark: SparkSession, settings: Settings, options: MainJobOptions, *,
                 should_stop: Callable[[], bool], on_batch: Callable[[BatchReport], None],
                 on_cycle: Callable[[CycleReport], None],
                 on_restart: Callable[[str], None] = lambda reason: None,
                 take_snapshot: Callable[[SparkSession, Settings], object] | None = None,
                 on_maintained: Callable[[TableMaintenance], None] = lambda result: None) -> None:
    """Run until ``should_stop()`` or the ingest fails (its ``IngestError`` is raised here, after the loop).

    ``on_batch`` is called from the ingest's thread after each micro-batch's bronze and silver writes;
    ``on_cycle`` after each cycle: from the ingest's thread once the batch's gold refresh is done, from the
    snapshots' thread after a snapshot and its lag refresh. A failed snapshot is reported in the cycle (the
    cluster may be briefly unreachable; the next timer tries again); a failed gold or lag refresh stops the
    job with its exception (the next run refreshes from where gold is). ``take_snapshot`` (default
    ``snapshot_end_offsets``) takes and appends one snapshot. ``on_maintained`` is called from the maintenance
    thread after each table's OPTIMIZE and VACUUM (``options.maintain_every``).
    """
    from pipelines.end_offsets import snapshot_end_offsets
    from pipelines.gold.consumer_lag import refresh_consumer_lag
    from pipelines.gold.refresh import refresh_gold_tables
    from pipelines.ingest import ensure_tables, run_ingest
    from pipelines.offsets_topic_source import OFFSETS_TOPIC, check_source_topic
    from pipelines.source_faults import SourceState, StallWatch, run_through_faults, stall_seconds

    failures: list[BaseException] = []
    finished = threading.Event()
    stopping = threading.Event()
    # One cycle at a time, whichever thread runs it: the ingest's after a batch, this one for a snapshot.
    cycle_lock = threading.Lock()
    newest: dt.datetime | None = None
    reached: dict[int, int] = {}  # partition -> offset gold has read up to (the batches' end offsets)
    lag_waits = True  # a snapshot may be pending (from an earlier run too): refresh lag after batches as well

    snapshot_of = take_snapshot if take_snapshot is not None else snapshot_end_offsets

    def run_cycle(batches: tuple[BatchReport, ...], snapshot: str | None, catch_up: bool = False) -> None:
        """``snapshot``: "taken" / why one failed (taken before, outside the lock) / None: none this cycle."""
        nonlocal newest, reached, lag_waits
        with cycle_lock:
            started = time.monotonic()
            if not batches and snapshot is None and not catch_up:
                return
            # A batch can read nothing (Spark plans one when it first sees a partition): silver is unchanged.
            tables_at: dict[str, dt.datetime] = {}  # when the refresh committed each table it wrote
            written = (refresh_gold_tables(spark, settings, on_written=stamp(tables_at))
                       if catch_up or any(b.records for b in batches) else None)
            newest = newest_record(batches, newest)
            reached = reached_offsets(reached, batches)
            # gold.consumer_lag is computed at snapshots the ingest has passed: a new one, or one still pending.
            lag = (refresh_consumer_lag(spark, settings, reached=reached if options.ingest.topic == OFFSETS_TOPIC
                                        else None)
                   if snapshot == "taken" or (lag_waits and batches) else None)
            lag_waits = lag_waits if lag is None else bool(lag.pending.pending)
            ended = dt.datetime.now(dt.UTC)
            on_cycle(CycleReport(batches=batches, gold_written=written, snapshot=snapshot,
                                 seconds=time.monotonic() - started, newest_visible=newest,
                                 freshness=age_seconds(newest, ended.timestamp()),
                                 visibility=Visibility(ended, options.ingest.topic, dict(reached), tables_at),
                                 current_as_of=None if any(b.records for b in batches) else
                                 caught_up_at(ingest_progress(spark, settings, options.ingest.topic)),
                                 lag_rows=None if lag is None else lag.rows,
                                 lag_pending=None if lag is None else lag.pending.line()))

    def each_batch(report: BatchReport) -> None:
        """After the batch's bronze and silver writes, before Spark commits it: gold, in this (the ingest's) thread.
        A failed refresh stops the job once this batch is committed, and is raised after the loop."""
        on_batch(report)
        if stopping.is_set():
            return
        try:
            run_cycle((report,), None)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, raised there
            failures.append(exc)
            stopping.set()

    def ingest() -> None:
        """The ingest's query, started again from its checkpoint after a transient fault of the cluster
        (``pipelines.source_faults``: one line per change of state through ``on_restart``, backoff); a fatal one
        ends the job."""
        stop = lambda: stopping.is_set() or should_stop()  # noqa: E731
        state = SourceState(on_restart, settings)
        probe = lambda: check_source_topic(settings, options.ingest.topic)  # noqa: E731
        watch = StallWatch(probe, state, stall_seconds=stall_seconds(settings))
        try:
            run_through_faults(
                lambda: run_ingest(spark, settings, options.ingest, on_batch=each_batch, should_stop=stop,
                                   on_restart=on_restart, on_wait=lambda query: watch(query.lastProgress)),
                probe=probe, should_stop=stop, state=state)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, raised there
            failures.append(exc)
        finally:
            finished.set()

    # First what an earlier run wrote to silver but did not take into gold (stopped between a batch's writes and
    # its refresh, or an `ingest` without `gold`): the ingest's batches refresh gold only when they read records,
    # and on a quiet cluster none may come for a long time.
    # The silver tables' change data feeds (gold's query reads them) on a warehouse from an older offsetlake,
    # before any writer runs: a property change conflicts with a concurrent append.
    def maintenance(every: float) -> None:
        """Every ``every`` seconds, OPTIMIZE then VACUUM (``pipelines.maintenance.maintain``) each table in turn, each
        under the cycle lock: an OPTIMIZE beside a gold MERGE would remove files the MERGE read (Delta's conflict
        check fails one of them), and a VACUUM between two cycles never removes a file a running refresh reads.
        ``maintenance.vacuum_retention_hours`` applies as in ``maintain``: gold, refreshed after each batch, never
        lags that far behind silver's change data feed. A failed table is logged; the next round tries again."""
        from pipelines.maintenance import MaintenanceError, maintain, maintained_tables

        while not stopping.wait(every):
            for spec in maintained_tables():
                if stopping.is_set():
                    return
                with cycle_lock:
                    try:
                        maintain(spark, settings, [spec], on_table=on_maintained)
                    except Exception as exc:  # noqa: BLE001 - ingest and gold go on; the next round tries again
                        logging.getLogger(MAINTENANCE_LOGGER).warning(
                            "%s", exc if isinstance(exc, MaintenanceError) else f"maintenance of {spec.name}: {exc}")

    def snapshots(every: float) -> None:
        """A snapshot now and then every ``every`` seconds, outside the cycle lock; its lag refresh in a cycle."""
        while not stopping.is_set():
            started = time.monotonic()
            try:
                snapshot_of(spark, settings)
                snapshot = "taken"
            except Exception as exc:  # noqa: BLE001 - reported; the next timer tries again
                snapshot = f"failed ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
            if stopping.is_set():
                return
            try:
                run_cycle((), snapshot)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, raised there
                failures.append(exc)
                stopping.set()
                return
            stopping.wait(max(0.0, started + every - time.monotonic()))

    if options.maintain_every:
        from pipelines.maintenance import retention_hours

        retention_hours(settings)  # a retention the settings refuse is refused before the first batch
    ensure_tables(spark, settings)
    run_cycle((), None, catch_up=True)
    thread = threading.Thread(target=ingest, name="offsetlake-ingest", daemon=True)
    thread.start()
    workers = [thread]
    if options.snapshot_every:
        workers.append(threading.Thread(target=snapshots, args=(options.snapshot_every,),
                                        name="offsetlake-snapshots", daemon=True))
        workers[-1].start()
    if options.maintain_every:
        workers.append(threading.Thread(target=maintenance, args=(options.maintain_every,),
                                        name="offsetlake-maintenance", daemon=True))
        workers[-1].start()
    try:
        while not should_stop() and not finished.is_set() and not stopping.is_set():
            finished.wait(POLL_SECONDS)
    finally:
        stopping.set()
        for worker in workers:
            worker.join()
    if failures:
        raise failures[0]
