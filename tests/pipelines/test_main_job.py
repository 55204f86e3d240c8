"""The main job's cycle line (pipelines/main_job.py): records, rows per layer and freshness, from plain reports;
and its start on a warehouse whose silver is ahead of gold.

The loop itself runs in a real ``offsetlake run`` process in tests/pipelines/test_ingest.py's kill test.
"""

from __future__ import annotations

import datetime as dt

from pipelines.end_offsets import PendingSnapshots
from pipelines.ingest import BatchReport
from pipelines.main_job import CycleReport, age_seconds, caught_up_at, newest_record, reached_offsets, stamp

T0 = dt.datetime(2026, 11, 27, 10, 0, 0)


def batch(batch_id: int, commits: int, group_records: int, newest: dt.datetime | None) -> BatchReport:
    rows = {"offset_commits": commits, "group_metadata": group_records, "group_members": 0,
            "consumer_group_records": 0, "quarantine": 0, "group_records": group_records}
    return BatchReport(batch_id=batch_id, records=commits + group_records, rows_per_table=rows, lost_records=0,
                       seconds=1.0, newest_record=newest)


def test_a_cycle_over_three_batches_names_them_and_sums_each_layer_once() -> None:
    report = CycleReport(batches=(batch(3, 100, 2, T0), batch(4, 0, 0, None), batch(5, 50, 1, T0)),
                         gold_written=("gold.committed_offsets", "gold.offset_commit_rate"), lag_rows=12,
                         snapshot="taken", seconds=4.25, newest_visible=T0, freshness=6.04)
    assert report.line() == (
        "run: batches 3-5: 153 records -> bronze 153, silver 153 (group_metadata 3, offset_commits 150), "
        "gold 2 tables written (committed_offsets, offset_commit_rate), lag +12 rows, snapshot taken in 4.2s; "
        "freshness 6.0s")


def test_a_cycle_whose_snapshots_wait_for_the_ingest_says_how_many_and_until_where_in_one_part() -> None:
    waiting = PendingSnapshots(pending=(1_000, 61_000), waiting_for={12: 88, 3: 1_234})
    report = CycleReport(batches=(), gold_written=None, lag_rows=0, snapshot="taken", seconds=1.0,
                         newest_visible=None, lag_pending=waiting.line())
    assert report.line() == (
        "run: no new batch: 0 records -> bronze 0, silver 0, lag +0 rows, snapshot taken, "
        "lag: 2 snapshots pending until the ingest reaches __consumer_offsets 3:1,234, 12:88 in 1.0s; "
        "freshness unknown (no record in gold yet)")


def test_a_snapshot_waiting_on_many_partitions_names_four_and_counts_the_rest() -> None:
    waiting = PendingSnapshots(pending=(1_000,), waiting_for={p: 10 * p for p in range(1, 8)})
    assert waiting.line() == ("lag: 1 snapshot pending until the ingest reaches __consumer_offsets "
                              "1:10, 2:20, 3:30, 4:40 and 3 more partitions")
    assert PendingSnapshots(promoted=(1_000,)).line() is None


def test_a_failed_snapshot_cycle_names_neither_gold_nor_lag_and_freshness_is_unknown_before_any_record() -> None:
    report = CycleReport(batches=(), gold_written=None, lag_rows=None, snapshot="failed (broker down)", seconds=0.5,
                         newest_visible=None, freshness=None)
    assert report.line() == ("run: no new batch: 0 records -> bronze 0, silver 0, snapshot failed (broker down) "
                             "in 0.5s; freshness unknown (no record in gold yet)")


def test_the_newest_visible_record_is_kept_across_cycles_without_records() -> None:
    later = T0 + dt.timedelta(seconds=30)
    assert newest_record((batch(1, 5, 0, T0),), None) == T0
    assert newest_record((batch(2, 0, 0, None),), T0) == T0
    assert newest_record((batch(3, 5, 0, later), batch(4, 5, 0, T0)), T0) == later
    assert newest_record((), None) is None


def test_freshness_is_the_records_age_on_the_local_clock_and_never_negative() -> None:
    assert age_seconds(T0, T0.timestamp() + 7.5) == 7.5
    assert age_seconds(T0, T0.timestamp() - 2.0) == 0.0  # a producer's clock ahead of ours
    assert age_seconds(None, 0.0) is None


def test_gold_reaches_each_partitions_furthest_planned_end_and_keeps_partitions_no_batch_planned() -> None:
    def ends(offsets: dict[int, int]) -> BatchReport:
        return BatchReport(batch_id=0, records=0, rows_per_table={}, lost_records=0, seconds=0.0, end_offsets=offsets)

    before = {0: 10, 2: 7}
    assert reached_offsets(before, [ends({0: 12, 1: 3}), ends({0: 11, 1: 5})]) == {0: 12, 1: 5, 2: 7}
    assert before == {0: 10, 2: 7}  # not changed in place


def test_a_refresh_step_stamps_each_table_it_committed_with_the_time_in_utc() -> None:
    stamped: dict[str, dt.datetime] = {"gold.x": T0}
    before = dt.datetime.now(dt.UTC)
    stamp(stamped)(("gold.a", "gold.b"))
    after = dt.datetime.now(dt.UTC)
    assert stamped["gold.x"] == T0 and set(stamped) == {"gold.x", "gold.a", "gold.b"}
    assert before <= stamped["gold.a"] == stamped["gold.b"] <= after


def test_a_run_first_takes_into_gold_what_silver_holds_beyond_it_though_no_record_follows(
        spark, settings_for) -> None:  # type: ignore[no-untyped-def]
    """A stop between a batch's silver writes and its gold refresh (or an ``ingest`` without ``gold``) leaves
    silver ahead of gold; the next run's batches refresh gold only when they read records, and on a quiet
    cluster none may come: the run refreshes once before its first batch."""
    import time
    import uuid

    from broker.workload import create_topic
    from decoders import encode_record
    from pipelines.delta_tables import read_table
    from pipelines.gold import committed_offsets
    from pipelines.ingest import IngestOptions, ensure_tables, write_batch
    from pipelines.main_job import MainJobOptions, run_main_job

    settings = settings_for()
    topic = f"quiet-after-ingest-{uuid.uuid4().hex[:8]}"
    create_topic(settings.kafka.librdkafka_config(), topic, partitions=1)  # and nothing produced to it
    records = [(*encode_record("offset_commit", {"group": "g", "topic": "t", "partition": p},
                               {"offset": 10 + p, "metadata": "", "commit_timestamp": 1}, 3), topic, 0, p,
                dt.datetime(2026, 11, 27)) for p in range(3)]
    ensure_tables(spark, settings)
    write_batch(spark, settings, topic, spark.createDataFrame(  # a batch's bronze and silver, no gold refresh
        records, "key binary, value binary, topic string, partition int, offset long, timestamp timestamp"), 0)

    cycles: list[CycleReport] = []
    deadline = time.monotonic() + 120
    run_main_job(spark, settings, MainJobOptions(IngestOptions(topic=topic, trigger_interval="1 second"),
                                                 snapshot_every=None),
                 should_stop=lambda: bool(cycles) or time.monotonic() > deadline, on_batch=lambda report: None,
                 on_cycle=cycles.append)
    assert cycles and cycles[0].batches == ()
    rows = read_table(spark, settings, committed_offsets.TABLE).select("partition", "offset").collect()
    assert sorted((r["partition"], r["offset"]) for r in rows) == [(0, 10), (1, 11), (2, 12)]


def test_an_idle_cycle_says_since_when_gold_is_current_instead_of_a_growing_age() -> None:
    caught_up = dt.datetime(2026, 11, 27, 10, 5, 0, tzinfo=dt.UTC)
    idle = CycleReport(batches=(), gold_written=None, lag_rows=3, snapshot="taken", seconds=1.25, newest_visible=T0,
                       freshness=300.0, current_as_of=caught_up)
    assert idle.line() == ("run: no new batch: 0 records -> bronze 0, silver 0, lag +3 rows, snapshot taken in 1.2s; "
                           "gold current as of 2026-11-27T10:05:00Z")
    assert idle.fields()["gold_current_as_of"] == "2026-11-27T10:05:00Z" and idle.fields()["freshness_seconds"] is None
    # Not known to be at the topic's end (the ingest has not reported since it started): no age either.
    unknown = CycleReport(batches=(), gold_written=None, lag_rows=None, snapshot="taken", seconds=0.5,
                          newest_visible=dt.datetime(2026, 11, 27, 10, 0, 0, tzinfo=dt.UTC), freshness=300.0)
    assert unknown.line().endswith("; no new record (the newest in gold from 2026-11-27T10:00:00Z)")


def test_a_cycle_that_carried_records_gives_their_freshness_and_its_figures_for_a_log_shipper() -> None:
    report = CycleReport(batches=(batch(7, 10, 2, T0),), gold_written=("gold.committed_offsets",), lag_rows=None,
                         snapshot=None, seconds=2.0, newest_visible=T0, freshness=1.5,
                         current_as_of=dt.datetime(2026, 11, 27, 10, 5, 0, tzinfo=dt.UTC))
    assert report.line().endswith("in 2.0s; freshness 1.5s")
    assert report.fields() == {
        "batches": [7], "records": 12, "seconds": 2.0, "snapshot": None, "freshness_seconds": 1.5,
        "gold_current_as_of": None, "lag_pending": None,
        "rows": {"bronze": 12, "silver": {"offset_commits": 10, "group_metadata": 2, "group_members": 0,
                                          "consumer_group_records": 0, "quarantine": 0},
                 "gold_tables_written": ["gold.committed_offsets"], "lag": None}}


#: A streaming query's progress as Spark reports it (StreamingQueryProgress.json, trimmed to what is read).
IDLE_PROGRESS = {
    "id": "3f1c2d4e-0b6a-4c55-9a51-6f0e8d2b7c10", "runId": "9a2e7b1f-5c3d-4e8a-b6f2-1d4c7e9a0b35",
    "name": "offsetlake-ingest-local-__consumer_offsets",
    "timestamp": "2026-11-27T10:05:00.125Z", "batchId": 12, "numInputRows": 0,
    "sources": [{"description": "KafkaV2[Assign[__consumer_offsets-0, __consumer_offsets-1]]",
                 "startOffset": {"__consumer_offsets": {"0": 40, "1": 12}},
                 "endOffset": {"__consumer_offsets": {"0": 40, "1": 12}},
                 "latestOffset": {"__consumer_offsets": {"0": 40, "1": 12}}, "numInputRows": 0}],
}


def test_the_ingest_is_caught_up_when_its_last_progress_read_to_the_latest_offsets() -> None:
    from pyspark.sql.streaming.listener import StreamingQueryProgress

    assert caught_up_at(IDLE_PROGRESS) == dt.datetime(2026, 11, 27, 10, 5, 0, 125000, tzinfo=dt.UTC)
    # As StreamingQuery.lastProgress gives it: PySpark's object, whose offsets are str() of the parsed JSON.
    full = {**IDLE_PROGRESS, "durationMs": {}, "eventTime": {}, "stateOperators": [], "observedMetrics": {},
            "inputRowsPerSecond": 0.0, "processedRowsPerSecond": 0.0, "batchDuration": 0,
            "sink": {"description": "ForeachBatchSink", "numOutputRows": -1},
            "sources": [{**IDLE_PROGRESS["sources"][0], "inputRowsPerSecond": 0.0,  # type: ignore[dict-item]
                         "processedRowsPerSecond": 0.0}]}
    assert caught_up_at(StreamingQueryProgress.fromJson(full)) == caught_up_at(IDLE_PROGRESS)
    behind = {**IDLE_PROGRESS, "sources": [{**IDLE_PROGRESS["sources"][0],  # type: ignore[dict-item]
                                            "latestOffset": {"__consumer_offsets": {"0": 41, "1": 12}}}]}
    assert caught_up_at(behind) is None  # a capped batch, or records arrived meanwhile
    assert caught_up_at(None) is None and caught_up_at({**IDLE_PROGRESS, "sources": []}) is None


class CommitProducer:
    """Offset commit records produced into ``topic`` (the ingest's source) every ``every`` seconds, in a thread:
    what the coordinator appends for a group that commits, for a run to take batch after batch."""

    def __init__(self, settings, topic: str, every: float = 0.5) -> None:  # type: ignore[no-untyped-def]
        import threading

        from confluent_kafka import Producer

        self.producer = Producer(settings.kafka.librdkafka_config())
        self.topic, self.every, self.produced = topic, every, 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, name="test-commit-producer", daemon=True)

    def run(self) -> None:
        from decoders import encode_record

        while not self.stopped.wait(self.every):
            key, value = encode_record("offset_commit", {"group": "g", "topic": "t", "partition": 0},
                                       {"offset": self.produced, "metadata": "", "commit_timestamp": 1}, 3)
            self.producer.produce(self.topic, key=key, value=value, partition=0)
            self.producer.flush(10)
            self.produced += 1

    def __enter__(self) -> CommitProducer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join()


def test_a_batch_is_taken_into_gold_while_a_snapshot_is_still_being_taken(spark, settings_for) -> None:  # type: ignore[no-untyped-def]
    """The snapshot runs beside the batches, outside the cycle lock: one held up (here until a batch's cycle is
    done; on a real cluster, thousands of partitions' ListOffsets) delays no batch's gold refresh. Its lag
    refresh follows in a cycle of its own."""
    import threading
    import time
    import uuid

    from broker.workload import create_topic
    from pipelines.end_offsets import snapshot_end_offsets
    from pipelines.ingest import IngestOptions
    from pipelines.main_job import MainJobOptions, run_main_job

    settings = settings_for()
    topic = f"slow-snapshot-{uuid.uuid4().hex[:8]}"
    create_topic(settings.kafka.librdkafka_config(), topic, partitions=1)
    snapshot_started, batch_done = threading.Event(), threading.Event()

    def held_up_snapshot(spark, settings):  # type: ignore[no-untyped-def]
        snapshot_started.set()
        batch_done.wait(180)  # the real cluster call follows, once a batch went through meanwhile (or never)
        return snapshot_end_offsets(spark, settings)

    cycles: list[CycleReport] = []
    during_snapshot: list[CycleReport] = []
    last_seen = [time.monotonic()]  # when a batch's writes or a cycle last ended
    in_batch = threading.Event()  # between a batch's silver writes and the end of its cycle

    def on_batch(report: object) -> None:
        in_batch.set()
        last_seen[0] = time.monotonic()

    def on_cycle(cycle: CycleReport) -> None:
        cycles.append(cycle)
        last_seen[0] = time.monotonic()
        if cycle.batches:
            in_batch.clear()
        if snapshot_started.is_set() and not batch_done.is_set() and cycle.gold_written is not None \
                and any(b.records for b in cycle.batches):
            during_snapshot.append(cycle)
            batch_done.set()

    def quiet() -> bool:
        """The snapshot's cycle is done and no record came for a while: the stop (query.stop()) interrupts no batch."""
        if any(c.snapshot for c in cycles):
            producer.stopped.set()
            return not in_batch.is_set() and time.monotonic() - last_seen[0] > 10
        return False

    deadline = time.monotonic() + 400
    with CommitProducer(settings, topic) as producer:
        run_main_job(spark, settings, MainJobOptions(IngestOptions(topic=topic, trigger_interval="1 second"),
                                                     snapshot_every=600),
                     should_stop=lambda: quiet() or time.monotonic() > deadline,
                     on_batch=on_batch, on_cycle=on_cycle,
                     take_snapshot=held_up_snapshot)
    assert during_snapshot and during_snapshot[0].snapshot is None
    snapshot_cycles = [c for c in cycles if c.snapshot]
    assert [c.snapshot for c in snapshot_cycles] == ["taken"]
    assert cycles.index(snapshot_cycles[0]) > cycles.index(during_snapshot[0])
    assert snapshot_cycles[0].lag_rows is not None  # the lag refresh after it ran in its cycle


def test_a_run_ends_its_cycles_with_as_many_threads_as_after_its_first_ones(spark, settings_for) -> None:  # type: ignore[no-untyped-def]
    """Every batch runs silver's and gold's queries, every snapshot the lag query, each on a JVM thread of its
    own that calls back into Python: a thread left behind per query grows with the running time."""
    import threading
    import time
    import uuid

    from broker.workload import create_topic
    from pipelines.ingest import IngestOptions
    from pipelines.main_job import MainJobOptions, run_main_job

    settings = settings_for()
    topic = f"threads-{uuid.uuid4().hex[:8]}"
    create_topic(settings.kafka.librdkafka_config(), topic, partitions=1)
    counts: list[int] = []  # threads of this process after each cycle that read records

    def on_cycle(cycle: CycleReport) -> None:
        if any(b.records for b in cycle.batches):
            counts.append(threading.active_count())

    deadline = time.monotonic() + 600
    with CommitProducer(settings, topic):
        run_main_job(spark, settings, MainJobOptions(IngestOptions(topic=topic, trigger_interval="1 second"),
                                                     snapshot_every=5),
                     should_stop=lambda: len(counts) >= 7 or time.monotonic() > deadline,
                     on_batch=lambda report: None, on_cycle=on_cycle)
    assert len(counts) >= 7
    assert max(counts[2:]) <= counts[1] + 2, counts  # before the fix: about two more per batch


def test_a_run_compacts_and_vacuums_its_tables_while_it_runs(spark, settings_for) -> None:  # type: ignore[no-untyped-def]
    """Each batch appends a file or more to bronze and to each silver table it writes: without maintenance inside
    the run their files grow with the running time, and so do the files a compaction or a gold refresh replaced."""
    import threading
    import time
    import uuid

    from deltalake import DeltaTable

    from broker.workload import create_topic
    from conf.settings import MaintenanceSettings
    from pipelines.delta_tables import table_path
    from pipelines.ingest import IngestOptions
    from pipelines.main_job import MainJobOptions, run_main_job
    from pipelines.maintenance import TableMaintenance
    from schemas import offset_commits, offsets_topic_records

    # Delta's default retention: a shorter one deletes compacted-away silver files whose versions a gold refresh
    # has still to read (a batch's silver appends land outside the cycle lock; pipelines/maintenance.py says why).
    settings = settings_for().model_copy(update={"maintenance": MaintenanceSettings()})
    topic = f"maintained-{uuid.uuid4().hex[:8]}"
    create_topic(settings.kafka.librdkafka_config(), topic, partitions=1)
    batches: list[CycleReport] = []
    maintained: dict[str, TableMaintenance] = {}
    live_after: dict[str, int] = {}  # delta-rs's count of a table's files right after its maintenance
    watched = {spec.name: spec for spec in (offsets_topic_records.TABLE, offset_commits.TABLE)}

    last_seen = [time.monotonic()]  # when a batch's writes or a cycle last ended
    in_batch = threading.Event()  # between a batch's silver writes and the end of its cycle

    def on_batch(report: object) -> None:
        in_batch.set()
        last_seen[0] = time.monotonic()

    def on_cycle(cycle: CycleReport) -> None:
        last_seen[0] = time.monotonic()
        if cycle.batches:
            in_batch.clear()
        if any(b.records for b in cycle.batches):
            batches.append(cycle)

    def quiet() -> bool:
        """Both tables maintained and no record came for a while: the stop (query.stop()) interrupts no batch."""
        if set(live_after) == set(watched):
            producer.stopped.set()
            return not in_batch.is_set() and time.monotonic() - last_seen[0] > 10
        return False

    def on_maintained(result: TableMaintenance) -> None:  # a batch's bronze and silver appends may land meanwhile
        # A round that found a single file had nothing to compact (batches are slow on a loaded machine): the next.
        if result.table in watched and result.live_files_before >= 2 and result.table not in maintained:
            maintained[result.table] = result
            live_after[result.table] = len(DeltaTable(table_path(settings, watched[result.table])).file_uris())

    deadline = time.monotonic() + 600
    with CommitProducer(settings, topic) as producer:
        run_main_job(spark, settings, MainJobOptions(IngestOptions(topic=topic, trigger_interval="1 second"),
                                                     snapshot_every=None, maintain_every=40),
                     should_stop=lambda: quiet() or time.monotonic() > deadline,
                     on_batch=on_batch, on_cycle=on_cycle, on_maintained=on_maintained)
    assert set(live_after) == set(watched) and batches
    for name in watched:
        report = maintained[name]
        assert report.live_files_before >= 2 and report.live_files_after == 1  # compacted into one
        # As delta-rs reads it afterwards: the one file, or that and a batch's appended since (the batches go on).
        assert live_after[name] <= report.live_files_after + 1
        assert report.files_on_disk_after >= report.live_files_before  # kept for the retention, not vacuumed yet
