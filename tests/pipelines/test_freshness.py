"""How long records took to reach gold (pipelines/freshness.py), on hand-built records and cycles."""

from __future__ import annotations

import datetime as dt

import pytest

from pipelines.freshness import Latency, Visibility, first_visible, latency, visibility_frame

T0 = dt.datetime(2026, 11, 27, 10, 0, 0, tzinfo=dt.UTC)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def test_a_record_is_visible_at_the_end_of_the_first_cycle_that_read_past_it_and_unread_ones_are_left_out(
        spark) -> None:  # type: ignore[no-untyped-def]
    records = spark.createDataFrame(
        [("t", 0, 0, at(1)), ("t", 0, 1, at(2)), ("t", 0, 2, at(12)), ("t", 0, 3, at(5)), ("t", 0, 4, at(6)),
         ("t", 1, 0, at(3)), ("other", 0, 0, at(1))],
        "source_topic string, source_partition int, source_offset long, since timestamp")
    cycles = [Visibility(at(10), "t", {0: 2, 1: 0}), Visibility(at(20), "t", {0: 4, 1: 1}),
              Visibility(at(30), "t", {0: 4, 1: 1})]
    seen = first_visible(records, visibility_frame(spark, cycles))
    by_position = {(r["source_partition"], r["source_offset"]): r["visible_at"].timestamp() - T0.timestamp()
                   for r in seen.collect()}
    # offsets 0 and 1 of partition 0 by the first cycle, 2 and 3 by the second; offset 4 and the other topic never
    assert by_position == {(0, 0): 10, (0, 1): 10, (0, 2): 20, (0, 3): 20, (1, 0): 20}

    # latencies 9, 8, 8, 15 and 17 s: Spark's exact percentile interpolates between the sorted values
    assert latency(seen) == Latency(records=5, p50=9.0, p95=pytest.approx(16.6), max=17.0)


def test_a_record_stamped_after_the_cycle_that_showed_it_counts_as_zero_not_negative(spark) -> None:  # type: ignore[no-untyped-def]
    records = spark.createDataFrame([("t", 0, 0, at(12))],
                                    "source_topic string, source_partition int, source_offset long, since timestamp")
    seen = first_visible(records, visibility_frame(spark, [Visibility(at(10), "t", {0: 1})]))
    assert latency(seen) == Latency(records=1, p50=0.0, p95=0.0, max=0.0)


def test_a_record_counts_as_visible_when_the_cycle_committed_the_table_asked_about_else_at_the_cycles_end(
        spark) -> None:  # type: ignore[no-untyped-def]
    records = spark.createDataFrame([("t", 0, 0, at(1)), ("t", 0, 1, at(11))],
                                    "source_topic string, source_partition int, source_offset long, since timestamp")
    cycles = [Visibility(at(10), "t", {0: 1}, {"gold.committed_offsets": at(4), "gold.rebalance_events": at(9)}),
              Visibility(at(30), "t", {0: 2}, {"gold.committed_offsets": at(15)})]

    def seconds_to_visible(table: str | None) -> list[float]:
        seen = first_visible(records, visibility_frame(spark, cycles, table))
        return [r["visible_at"].timestamp() - T0.timestamp() for r in seen.orderBy("source_offset").collect()]

    assert seconds_to_visible("gold.committed_offsets") == [4, 15]
    assert seconds_to_visible("gold.rebalance_events") == [9, 30]  # the second cycle did not write it
    assert seconds_to_visible(None) == [10, 30]


def test_no_record_reads_as_no_records() -> None:
    assert Latency(records=0, p50=None, p95=None, max=None).text() == "no records"
    assert Latency(records=3, p50=1.0, p95=2.04, max=2.5).text() == "p50 1.0s, p95 2.0s, max 2.5s over 3 records"


def test_latency_after_a_moment_counts_only_the_records_appended_from_then_on(spark) -> None:  # type: ignore[no-untyped-def]
    records = spark.createDataFrame([("t", 0, 0, at(1)), ("t", 0, 1, at(5)), ("t", 0, 2, at(8))],
                                    "source_topic string, source_partition int, source_offset long, since timestamp")
    seen = first_visible(records, visibility_frame(spark, [Visibility(at(10), "t", {0: 3})]))
    # latencies 9, 5 and 2 s; from t=5 on only the last two count (a record appended at that moment included)
    assert latency(seen, after=at(5)) == Latency(records=2, p50=3.5, p95=pytest.approx(4.85), max=5.0)
    assert latency(seen, after=at(9)) == Latency(records=0, p50=None, p95=None, max=None)
