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
