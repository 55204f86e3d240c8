"""metrics/run.py: the main job's health is what its cycle reports said."""

from __future__ import annotations

import datetime as dt

from metrics import catalog as C
from metrics.run import RunHealth
from pipelines.freshness import Visibility
from pipelines.ingest import BatchReport
from pipelines.main_job import CycleReport

ENDED = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


def batch(batch_id: int, records: int, ends: dict[int, int]) -> BatchReport:
    return BatchReport(batch_id=batch_id, records=records, rows_per_table={}, lost_records=0, seconds=1.0,
                       end_offsets=ends)


def cycle(batches: tuple[BatchReport, ...], reached: dict[int, int], *, snapshot: str | None = None,
          freshness: float | None = None, ended: dt.datetime = ENDED) -> CycleReport:
    return CycleReport(batches=batches, gold_written=(), lag_rows=None, snapshot=snapshot, seconds=0.5,
                       newest_visible=None, freshness=freshness,
                       visibility=Visibility(ended, "__consumer_offsets", reached))


def values(health: RunHealth) -> dict[str, dict[tuple[str, ...], float]]:
    out: dict[str, dict[tuple[str, ...], float]] = {}
    for family in health.collect():
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sample.labels.values())] = sample.value
    return out


def test_counters_and_gauges_follow_the_cycles_the_job_reported() -> None:
    ends = {0: 900, 1: 1_000}
    health = RunHealth("c1", "__consumer_offsets", topic_ends=lambda: ends)
    first = batch(7, 120, {0: 500, 1: 600})
    second = batch(8, 80, {0: 700})  # a batch plans only the partitions that gained records

    health.observe(cycle((first,), first.end_offsets, freshness=4.0))
    health.observe(cycle((), first.end_offsets, snapshot="taken"))
    health.observe(cycle((), first.end_offsets, snapshot="failed (broker down)"))
    health.observe(cycle((second,), {0: 700, 1: 600}, freshness=2.5, ended=ENDED + dt.timedelta(seconds=30)))

    v = values(health)
    labels = ("c1", "__consumer_offsets")
    assert v[C.RUN_CYCLES.name] == {labels: 4}
    assert v[C.RUN_RECORDS.name] == {labels: 120 + 80}
    assert v[C.RUN_SNAPSHOTS.name] == {(*labels, "taken"): 1, (*labels, "failed"): 1}
    assert v[C.RUN_FRESHNESS.name] == {labels: 2.5}
    assert v[C.RUN_DISTANCE.name] == {labels: (900 - 700) + (1_000 - 600)}
    assert v[C.RUN_LAST_SUCCESS.name] == {labels: (ENDED + dt.timedelta(seconds=30)).timestamp()}


def test_nothing_is_guessed_before_the_first_cycle_or_while_the_cluster_does_not_answer() -> None:
    def unreachable() -> dict[int, int]:
        raise RuntimeError("no broker")

    health = RunHealth("c1", "t", topic_ends=unreachable)
    before = values(health)
    assert before[C.RUN_CYCLES.name] == {("c1", "t"): 0}
    assert C.RUN_FRESHNESS.name not in before and C.RUN_LAST_SUCCESS.name not in before

    # The catch-up cycle before the first batch has read nothing yet: its distance is unknown, not the whole topic.
    health.observe(cycle((), {}))
    assert C.RUN_DISTANCE.name not in values(health)
    health.observe(cycle((batch(0, 5, {0: 5}),), {0: 5}))
    assert C.RUN_DISTANCE.name not in values(health)
    assert values(health)[C.RUN_CYCLES.name] == {("c1", "t"): 2}
