"""pipelines/gold/consumer_lag.py: lag and Burrow status from real snapshots and really ingested commits."""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
import uuid

import pytest

from broker.workload import create_topic, delete_group, run_members
from cli.lag import print_status
from conf.settings import LagSettings
from pipelines.delta_tables import read_table
from pipelines.end_offsets import snapshot_end_offsets
from pipelines.gold.consumer_lag import (
    TABLE,
    Commit,
    Snapshot,
    consumer_lag_frame,
    latest_status,
    partition_rows,
    refresh_consumer_lag,
)
from pipelines.ingest import IngestOptions, run_ingest
from tests.ingest_scope import from_now_on
from tests.pipelines.test_end_offsets import commit, delete_records_before, produce

# The broker and spark marks come from the fixtures each test uses (tests/conftest.py); the
# partition_rows tests below need neither.


# -- partition_rows, on hand-built commits (pure Python) ---------------------------------------------------

def _snapshots(*times: int) -> list[Snapshot]:
    return [Snapshot(t, earliest=0, latest=10, last_stable=10, message_ms={}) for t in times]


def _lag(commits: list[Commit]) -> list[tuple[int, int | None, int]]:
    """(snapshot, committed offset, commits in Burrow's window) of group g's rows on t/0."""
    return [(r["snapshot_id"], r["committed_offset"], r["window_commits"])
            for r in partition_rows("c", "t", 0, _snapshots(1000, 3000, 5000), commits, LagSettings())]


def test_a_deleted_group_has_no_row_after_its_tombstones_and_resumes_with_its_new_commits() -> None:
    # DeleteGroups: the offset tombstone, then the group tombstone, in one append (time 2000).
    deleted = [Commit("g", 5, 500), Commit("g", None, 2000), Commit("g", None, 2000, group_removed=True)]
    assert _lag(deleted) == [(1000, 5, 1)]
    # Re-created under the same name: its lag resumes from the new commit, with a window of its own.
    assert _lag([*deleted, Commit("g", 7, 4000)]) == [(1000, 5, 1), (5000, 7, 1)]


def test_an_offset_deleted_from_a_group_that_lives_on_keeps_a_row_with_no_offset() -> None:
    assert _lag([Commit("g", 5, 500), Commit("g", None, 2000)]) == [(1000, 5, 1), (3000, None, 0), (5000, None, 0)]


def test_a_group_tombstone_that_leaves_the_offset_in_place_ends_nothing() -> None:
    # A group converted between the classic and the consumer protocol: the old type's tombstone, offsets kept.
    assert _lag([Commit("g", 5, 500), Commit("g", None, 2000, group_removed=True)]) == [
        (1000, 5, 1), (3000, 5, 1), (5000, 5, 1)]


def test_a_group_deleted_before_it_ever_committed_here_is_not_affected_later() -> None:
    assert _lag([Commit("g", None, 200, group_removed=True), Commit("g", 5, 500)]) == [
        (1000, 5, 1), (3000, 5, 1), (5000, 5, 1)]


# -- advance_partition: the replay kept in the state store, on hand-built histories (pure Python) -------------

def _history(falls_back: bool = False) -> tuple[list[Snapshot], list[Commit]]:
    """Twelve snapshots a second apart whose log start moves up 300 messages a second (retention) and whose high
    watermark rises 500 a second (or, ``falls_back``, drops once: a topic deleted and re-created); and the offset
    records of three groups: a busy one committing every 300 ms, one whose offset is deleted and re-committed,
    and one that commits once long before."""
    snapshots = [Snapshot(1_000 * i, earliest=300 * i, latest=500 * i + 200, last_stable=500 * i + 200,
                          message_ms={}) for i in range(1, 13)]
    if falls_back:
        snapshots[6] = dataclasses.replace(snapshots[6], earliest=0, latest=100, last_stable=100)
    position = iter(range(10_000))
    commits = [Commit("busy", 150 * i, 300 * i + 7, position=(0, next(position))) for i in range(1, 41)]
    commits += [Commit("reset", 400, 2_500, position=(1, next(position))),
                Commit("reset", None, 5_500, position=(1, next(position))),
                Commit("reset", 3_000, 8_200, position=(1, next(position)))]
    commits += [Commit("quiet", 100, 900, position=(2, next(position)))]
    return snapshots, sorted(commits, key=lambda c: (c.time_ms, c.position))


@pytest.mark.parametrize("falls_back", [False, True], ids=["rising", "falls-back"])
def test_a_replay_advanced_snapshot_by_snapshot_from_its_tail_gives_the_rows_of_a_replay_of_everything(
        falls_back: bool) -> None:
    from pipelines.gold.consumer_lag import PartitionTail, advance_partition

    lag = LagSettings(intervals=3)
    snapshots, commits = _history(falls_back)
    # Two of busy's commits (at 2,107 and 2,407 ms) are ingested only after the snapshot at 4,000 ms.
    late = [c for c in commits if c.group == "busy" and c.time_ms in (2_107, 2_407)]
    tail, rows, seen = PartitionTail(), [], 0
    for index, snapshot in enumerate(snapshots):
        arrived = [c for c in commits[seen:] if c.time_ms <= snapshot.snapshot_id]
        seen += len(arrived)
        arrived = [c for c in arrived if c not in late] + (late if snapshot.snapshot_id == 5_000 else [])
        new_rows, tail = advance_partition("c", "t", 0, tail, [snapshot], arrived, lag)
        # A replay of everything ingested by then: the late commits count from the snapshot after their arrival.
        ingested = [c for c in commits if c.time_ms <= snapshot.snapshot_id
                    and (c not in late or snapshot.snapshot_id >= 5_000)]
        assert new_rows == [r for r in partition_rows("c", "t", 0, snapshots[:index + 1], ingested, lag)
                            if r["snapshot_id"] == snapshot.snapshot_id]
        rows += new_rows
    assert {r["group"] for r in rows if r["snapshot_id"] == 12_000} == {"busy", "reset", "quiet"}

    # What the tail keeps: per group its last 3 records up to the newest snapshot; the high watermarks from the
    # last one at or below the newest log start (3,600: the snapshot at 6,000 ms, latest 3,200) on, or, once the
    # watermark fell back (at 7,000 ms), every one from then on (those up to 2,000 ms were dropped at 6,000 ms).
    assert tail.computed == 12_000
    assert [(c.group, c.time_ms) for c in tail.records] == [
        ("quiet", 900), ("reset", 2_500), ("reset", 5_500), ("reset", 8_200),
        ("busy", 11_107), ("busy", 11_407), ("busy", 11_707)]
    assert [t for t, _ in tail.watermarks] == (list(range(3_000, 13_000, 1_000)) if falls_back
                                               else list(range(6_000, 13_000, 1_000)))
    assert PartitionTail.from_json(tail.to_json()) == tail


# -- consumer_lag_frame on hand-built silver tables (Spark, no broker) ---------------------------------------

T0 = 1_700_000_000_000  # epoch ms of the first snapshot


def _at(ms: int) -> dt.datetime:
    return dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)


def _silver_history(settings) -> dict:  # type: ignore[no-untyped-def]
    """20 snapshots a second apart of t/0 and t/1, and the offset records of six groups around them: the rows of
    each silver table, by table spec."""
    from schemas import group_metadata, offset_commits, partition_end_offsets

    position = iter(range(1_000_000))

    def record(group: str, partition: int, ms: int, offset: int | None) -> dict:
        return {"cluster_name": settings.cluster_name, "source_topic": "__consumer_offsets", "source_partition": 0,
                "source_offset": next(position), "record_timestamp": _at(ms), "group": group, "topic": "t",
                "partition": partition, "offset": offset, "leader_epoch": None, "metadata": None,
                "commit_timestamp": None if offset is None else _at(ms), "expire_timestamp": None, "topic_id": None,
                "is_tombstone": offset is None, "record_type": 1, "value_version": 4, "commit_date": _at(ms).date()}

    rows = []
    for partition in (0, 1):
        rows += [record("busy", partition, T0 - 500 + 150 * i, 10 * i) for i in range(130)]  # ~7 a snapshot
        rows += [record("quiet", partition, T0 - 900, 3), record("quiet", partition, T0 + 400, 4)]  # long ago
        rows += [record("steady", partition, T0 + 2_000 * i + 5, 50 * i) for i in range(10)]  # every other one
        rows += [record("reset", partition, T0 + 1_000 * i + 10, 20 * i) for i in range(12)]
        rows += [record("reset", partition, T0 + 12_500, None), record("reset", partition, T0 + 16_000, 500)]
        rows += [record("gone", partition, T0 + 1_000 * i + 20, 30 * i) for i in range(9)]
        rows += [record("gone", partition, T0 + 9_000, None)]  # DeleteGroups: the offset tombstones, ...
    rows += [record("late", 0, T0 + 15_500 + i, 40 + i) for i in range(5)]  # a group that starts late
    gone = {**{k: v for k, v in record("gone", 0, T0 + 9_000, None).items()
               if k in group_metadata.TABLE.schema.fieldNames()}, "is_tombstone": True}  # ... then the group's
    return {
        offset_commits.TABLE: rows,
        group_metadata.TABLE: [{name: gone.get(name) for name in group_metadata.TABLE.schema.fieldNames()}],
        partition_end_offsets.TABLE: [{
            "cluster_name": settings.cluster_name, "snapshot_id": T0 + 1_000 * i, "snapshot_time": _at(T0 + 1_000 * i),
            "topic": "t", "partition": partition, "earliest_offset": 0, "latest_offset": 100 + 60 * i,
            "last_stable_offset": 100 + 60 * i, "committed_messages": [], "snapshot_date": _at(T0 + 1_000 * i).date(),
            "topic_id": None} for i in range(20) for partition in (0, 1)],
    }


def _append(spark, settings, tables: dict) -> None:  # type: ignore[no-untyped-def]
    from pipelines.delta_tables import ensure_table, table_path
    from schemas import consumer_group_records

    ensure_table(spark, settings, consumer_group_records.TABLE)  # no KIP-848 group here
    for spec, table_rows in tables.items():
        ensure_table(spark, settings, spec)
        if table_rows:
            spark.createDataFrame(table_rows, spec.schema).write.format("delta").mode("append").save(
                table_path(settings, spec))


def _time(row: dict) -> int:
    """When a silver row happened, in epoch ms: a snapshot's id, a record's timestamp."""
    if "snapshot_id" in row:
        return row["snapshot_id"]
    return int(row["record_timestamp"].timestamp() * 1000)


@pytest.mark.long  # ~25 s: make test-long (the Makefile says why); advance_partition's tests above stay in make test
def test_refreshes_from_the_state_store_give_the_rows_of_a_replay_of_all_of_silver_and_a_full_one_the_same(
        spark, warehouse_settings) -> None:  # type: ignore[no-untyped-def]
    from pipelines.gold.consumer_lag import consumer_lag_frame

    # Burrow's window of 3: the state keeps 3 records per group and partition from before each refresh.
    settings = warehouse_settings.model_copy(update={"lag": LagSettings(intervals=3)})
    history = _silver_history(settings)
    # Silver grows in two steps: the records and snapshots up to 9,000 ms, then the rest. (Records ingested after
    # newer snapshots were computed: the advance_partition tests above.)
    refreshed = []
    for after, until in ((-(2**62), T0 + 9_000), (T0 + 9_000, T0 + 19_000)):
        _append(spark, settings, {spec: [r for r in rows if after < _time(r) <= until]
                                  for spec, rows in history.items()})
        report = refresh_consumer_lag(spark, settings)
        assert report.newest_snapshot_id == until
        refreshed.append(report.snapshots)
    assert refreshed == [10, 10]
    assert refresh_consumer_lag(spark, settings).snapshots == 0  # nothing new: nothing computed
    table = [r.asDict() for r in read_table(spark, settings, TABLE).collect()]
    replay = [r.asDict() for r in consumer_lag_frame(spark, settings).collect()]
    assert sorted(table, key=repr) == sorted(replay, key=repr)

    # Every group is in the comparison, in the states that matter: a window full of commits (busy), a window
    # taken from before a refresh (steady), an offset committed long before (quiet), a window emptied by an offset
    # tombstone (reset), a group deleted (gone: no row after its tombstone) and one that starts late (late).
    def on_t0(snapshot: int) -> dict[str, dict]:
        return {r["group"]: r for r in table if r["snapshot_id"] == snapshot and r["partition"] == 0}

    groups = on_t0(T0 + 19_000)
    assert set(groups) == {"busy", "steady", "quiet", "reset", "late"}
    assert "gone" in on_t0(T0 + 8_000) and "gone" not in on_t0(T0 + 9_000)
    assert on_t0(T0 + 12_000)["steady"]["window_commits"] == 3  # its commits at 6,005, 8,005 and 10,005 ms
    assert (groups["quiet"]["committed_offset"], groups["reset"]["committed_offset"]) == (4, 500)
    assert on_t0(T0 + 14_000)["reset"]["committed_offset"] is None  # its offset deleted at 12,500 ms
    assert groups["busy"]["window_commits"] == 3

    # A full refresh recomputes every snapshot from all of silver, with a new state.
    assert refresh_consumer_lag(spark, settings, full=True).snapshots == 20
    rebuilt = [r.asDict() for r in read_table(spark, settings, TABLE).collect()]
    assert sorted(rebuilt, key=repr) == sorted(replay, key=repr)


# -- on the embedded broker --------------------------------------------------------------------------------


@pytest.mark.long  # ~20 s each on the broker: in `make test-long` (Makefile says why)
def test_lag_at_a_snapshot_is_what_was_produced_minus_what_was_committed(spark, settings_for, tmp_path) -> None:
    settings = from_now_on(settings_for())  # this test's groups, not every earlier test's
    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:8]
    topic = f"lag-{suffix}"
    full, partial, gone = f"full-{suffix}", f"partial-{suffix}", f"gone-{suffix}"
    create_topic(client, topic, partitions=2)
    base = int(time.time() * 1000) - 120_000
    stamp = {p: [base + 1000 * i + 500 * p for i in range(20)] for p in (0, 1)}  # message i of partition p

    s0 = snapshot_end_offsets(spark, settings, [topic]).snapshot  # empty topic: ends 0
    produce(client, topic, {p: stamp[p][:15] for p in (0, 1)})
    s1 = snapshot_end_offsets(spark, settings, [topic]).snapshot  # ends 15
    run_members(client, topic, full, 30, members=1)  # reads everything: commits 15 and 15
    commit(client, partial, topic, {0: 5, 1: 25})  # 25 is past the end: Kafka accepts it
    commit(client, gone, topic, {0: 3, 1: 3})
    delete_group(client, gone)  # DeleteGroups: its offsets' tombstones and its own, before s2
    produce(client, topic, {p: stamp[p][15:] for p in (0, 1)})  # ends 20
    delete_records_before(client, topic, 0, 8)  # partition 0 now starts at 8, above partial's commit
    s2 = snapshot_end_offsets(spark, settings, [topic]).snapshot

    run_ingest(spark, settings, IngestOptions(once=True))
    report = refresh_consumer_lag(spark, settings)
    assert report.snapshots == 1  # s2: s0 and s1 were taken before any group committed, they have no row

    rows = {(r.snapshot_id, r.group, r.partition): r for r in read_table(spark, settings, TABLE).collect()}
    # Every commit came after s1, so only s2 has rows; the group deleted before s2 has none (its lag ended).
    assert {k[0] for k in rows} == {s2.snapshot_id}
    assert sorted((g, p) for _, g, p in rows) == sorted((g, p) for g in (full, partial) for p in (0, 1))

    t0, t1, t2 = s0.snapshot_id, s1.snapshot_id, s2.snapshot_id
    expected = {
        # group, partition: committed, lag, ahead, below log start, interpolated s, message-timestamp s
        # full read 15 of 20: the message at 15 arrived after s1 (end 15) -> interpolated time t1.
        (full, 0): (15, 5, False, False, (t2 - t1) / 1000, (t2 - stamp[0][15]) / 1000),
        (full, 1): (15, 5, False, False, (t2 - t1) / 1000, (t2 - stamp[1][15]) / 1000),
        # partial committed 5 but the log starts at 8: 20 - 8 messages left, the oldest at 8, which the end
        # offset reached 8/15 of the way from s0 (0) to s1 (15); the snapshot read the message at 8.
        (partial, 0): (5, 12, False, True, (t2 - (t0 + 8 / 15 * (t1 - t0))) / 1000, (t2 - stamp[0][8]) / 1000),
        (partial, 1): (25, 0, True, False, 0.0, 0.0),
    }
    for (group, partition), (committed, lag, ahead, below, interpolated, by_message) in expected.items():
        row = rows[(t2, group, partition)]
        assert (row.committed_offset, row.lag, row.commit_ahead_of_snapshot, row.committed_below_log_start) == (
            committed, lag, ahead, below), (group, partition)
        assert row.lag_seconds_interpolated == pytest.approx(interpolated), (group, partition)
        assert row.lag_seconds_message_timestamp == pytest.approx(by_message), (group, partition)
        assert (row.earliest_offset, row.latest_offset, row.last_stable_offset) == (8 if partition == 0 else 0, 20, 20)

    # Burrow (caching.go), broker offsets [0, 15, 20] at s2:
    # full: its last commit had lag 0 against s1 (Rule 1) and 0 <= 15 spares it STOP -> OK, group OK.
    # partial/0: one commit, lag 10 against s1; broker offset 0 <= 5 spares STOP; never zero lag; the window's
    #   offsets never change (Rule 4) -> STALL. partial/1: current lag 0 -> OK. Group: STALL shown as ERR.
    statuses = {(g, p): (r.partition_status, r.group_status) for (_, g, p), r in rows.items()}
    assert statuses == {
        (full, 0): ("OK", "OK"), (full, 1): ("OK", "OK"),
        (partial, 0): ("STALL", "ERR"), (partial, 1): ("OK", "ERR"),
    }
    assert {g: r.group_lag for (_, g, _), r in rows.items()} == {full: 10, partial: 12}

    # Re-running computes nothing; a new snapshot is computed alone, on top of the older ones' history.
    assert refresh_consumer_lag(spark, settings).snapshots == 0
    s3 = snapshot_end_offsets(spark, settings, [topic], message_timestamps=False).snapshot
    assert refresh_consumer_lag(spark, settings).snapshots == 1
    after = read_table(spark, settings, TABLE).collect()
    assert sorted(r.snapshot_id for r in after) == [t2] * 4 + [s3.snapshot_id] * 4
    assert {(r.group, r.partition): r.lag for r in after if r.snapshot_id == s3.snapshot_id} == {
        (full, 0): 5, (full, 1): 5, (partial, 0): 12, (partial, 1): 0}

    # The dashboard at s3, taken without message timestamps: partial's partition 0 lags 12 with no
    # message-time estimate, its partition 1 has caught up (0 s). The group's message-time lag is
    # unknown, not the 0 s of its caught-up partition (issue 12, item 8); interpolation ages it.
    # (The page's status table is dashboards.consumer_status_now, asked here of these rows by the embedded engine.)
    from dashboard.data import Filters, status_rows
    from tests.dashboard.status_view import consumer_status_view

    at_s3 = [r.asDict() for r in after if r.snapshot_id == s3.snapshot_id and r.group == partial]
    (status,) = status_rows(consumer_status_view(tmp_path / "status_view", lag=at_s3), Filters())
    assert (status["max_lag_seconds_message_timestamp"], status["lag_seconds_unknown_message_timestamp"]) == (None, 1)
    assert status["max_lag_seconds_interpolated"] > 0 and status["lag_seconds_unknown_interpolated"] == 0


@pytest.mark.long
def test_a_group_deleted_after_a_snapshot_keeps_that_lag_only_and_a_recreated_one_resumes(
        spark, settings_for, capsys) -> None:  # type: ignore[no-untyped-def]
    settings = from_now_on(settings_for())
    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:8]
    topic, deleted, reborn = f"lag-{suffix}", f"deleted-{suffix}", f"reborn-{suffix}"
    create_topic(client, topic, partitions=2)
    produce(client, topic, {p: [int(time.time() * 1000)] * 10 for p in (0, 1)})
    commit(client, deleted, topic, {0: 3, 1: 3})
    commit(client, reborn, topic, {0: 2, 1: 2})
    s1 = snapshot_end_offsets(spark, settings, [topic], message_timestamps=False).snapshot
    delete_group(client, deleted)
    delete_group(client, reborn)
    s2 = snapshot_end_offsets(spark, settings, [topic], message_timestamps=False).snapshot
    commit(client, reborn, topic, {0: 4})  # the same group id again: a new group, on partition 0 only
    s3 = snapshot_end_offsets(spark, settings, [topic], message_timestamps=False).snapshot

    run_ingest(spark, settings, IngestOptions(once=True))
    assert refresh_consumer_lag(spark, settings).snapshots == 2  # s1 and s3: s2 has no row, both groups deleted
    rows = sorted((r.snapshot_id, r.group, r.partition, r.committed_offset, r.lag, r.window_commits)
                  for r in read_table(spark, settings, TABLE).collect())
    t1, t3 = s1.snapshot_id, s3.snapshot_id
    assert s1.snapshot_id < s2.snapshot_id < s3.snapshot_id
    assert rows == sorted([
        (t1, deleted, 0, 3, 7, 1), (t1, deleted, 1, 3, 7, 1), (t1, reborn, 0, 2, 8, 1), (t1, reborn, 1, 2, 8, 1),
        (t3, reborn, 0, 4, 6, 1),  # nothing at s2; after the re-creation only its new commit counts
    ])

    # `offsetlake lag` prints what each group's partitions show at their newest snapshot: not the deleted group.
    print_status(latest_status(spark, settings))
    printed = capsys.readouterr().out
    assert [line.split(":")[0] for line in printed.splitlines() if line and not line.startswith(" ")] == [reborn]
    assert "no commit" not in printed
    assert [(r["group"], r["partition"], r["committed_offset"]) for r in latest_status(spark, settings)] == [
        (reborn, 0, 4)]


# -- a snapshot waits for the ingest to pass it ---------------------------------------------------------------

def _client_committed(client: dict[str, str], group: str, topic: str, partitions: int) -> dict[int, int]:
    """What the broker answers the group's own client (OffsetFetch): the committed offsets, as Kafka keeps them."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({**client, "group.id": group, "enable.auto.commit": False})
    try:
        return {tp.partition: tp.offset for tp in consumer.committed(
            [TopicPartition(topic, p) for p in range(partitions)], timeout=30)}
    finally:
        consumer.close()


def _gold_rows(spark, settings) -> list[tuple]:  # type: ignore[no-untyped-def]
    return sorted(tuple(r) for r in read_table(spark, settings, TABLE).collect())


def test_commits_just_before_a_snapshot_taken_while_the_ingest_is_behind_count_once_it_passes_as_lag_full_has_them(
        spark, settings_for) -> None:  # type: ignore[no-untyped-def]
    settings = from_now_on(settings_for())
    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"lag-{suffix}", f"readers-{suffix}"
    create_topic(client, topic, partitions=2)
    now = int(time.time() * 1000)
    produce(client, topic, {0: [now] * 200, 1: [now] * 50})
    run_ingest(spark, settings, IngestOptions(once=True))  # the ingest is where the topic ended: before the commits
    commit(client, group, topic, {0: 190, 1: 40})
    commit(client, group, topic, {0: 200, 1: 50})
    time.sleep(1.5)  # the clients committed 200 and 50 1.5 s before the snapshot
    snapshot = snapshot_end_offsets(spark, settings, [topic], message_timestamps=False).snapshot

    # The ingest has not read those commits: the snapshot is pending, not computed from what silver has.
    behind = refresh_consumer_lag(spark, settings)
    assert (behind.rows, behind.pending.pending) == (0, (snapshot.snapshot_id,))
    assert behind.pending.line() is not None and behind.pending.line().startswith(
        "lag: 1 snapshot pending until the ingest reaches __consumer_offsets ")
    assert _gold_rows(spark, settings) == []

    # Then the ingest passes the ends, and a session of its own refreshes: the pending snapshot was kept in the
    # warehouse, not in the process that took it.
    run_ingest(spark, settings, IngestOptions(once=True))
    fresh = spark.newSession()
    passed = refresh_consumer_lag(fresh, settings)
    assert (passed.snapshots, passed.pending.pending, passed.pending.line()) == (1, (), None)

    rows = {r.partition: r for r in read_table(fresh, settings, TABLE).filter(f"group = '{group}'").collect()}
    assert {p: r.committed_offset for p, r in rows.items()} == _client_committed(client, group, topic, 2) == {
        0: 200, 1: 50}
    assert {p: (r.snapshot_id, r.latest_offset, r.lag) for p, r in rows.items()} == {
        0: (snapshot.snapshot_id, 200, 0), 1: (snapshot.snapshot_id, 50, 0)}

    # The incremental rows are lag --full's, and the batch computation's.
    incremental = _gold_rows(fresh, settings)
    assert incremental == sorted(tuple(r) for r in consumer_lag_frame(fresh, settings).select(
        *TABLE.schema.fieldNames()).collect())
    refresh_consumer_lag(fresh, settings, full=True)
    assert _gold_rows(fresh, settings) == incremental
