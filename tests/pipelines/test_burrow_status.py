"""pipelines/burrow_status.py against Burrow's rules as written.

Every expected status below is reasoned from linkedin/Burrow
core/internal/evaluator/caching.go (ced55ba): ``calculatePartitionStatus``
checks, only when currentLag > allowedLag, in this order: STOP (Rule 3, unless
checkIfRecentLagZero), REWIND (Rule 2 and its recovery check), then, only if
the lag was never within allowedLag (Rule 1), STALL (Rule 4) and WARN (Rule 5);
otherwise OK. Timestamps are in ms, "now" in whole seconds, as in Burrow.
"""

from __future__ import annotations

import pytest

from pipelines.burrow_status import (
    CommitObservation,
    CommitWindow,
    Status,
    commit_lag,
    evaluate_partition,
    group_status,
    partition_status,
)


def window(*commits: tuple[int, float, int | None]) -> list[CommitObservation]:
    """(offset, seconds, lag) -> observations."""
    return [CommitObservation(offset, int(seconds * 1000), lag) for offset, seconds, lag in commits]


# Commits every 10 s from t=0 to t=40; "now" = 45 s is not a stop (45-40 <= 40-0).
ADVANCING_WITH_GROWING_LAG = window((100, 0, 10), (110, 10, 10), (120, 20, 11), (130, 30, 12), (140, 40, 12))
FAR_BROKER = [200, 210]  # broker offsets all above every commit: no recent zero lag


def test_a_partition_without_current_lag_is_ok_whatever_its_window_shows() -> None:
    # "If the current lag is zero, the partition is never in error": the checks run only if currentLag > allowedLag.
    stalled = window((100, 0, 5), (100, 10, 5), (100, 20, 5))
    assert partition_status(stalled, FAR_BROKER, current_lag=0, time_now_seconds=25) is Status.OK


def test_current_lag_within_allowed_lag_counts_as_no_lag() -> None:
    # evaluator allowed-lag: `if currentLag > allowedLag` guards every rule (window lags 8 > 5, so not Rule 1).
    stalled = window((100, 0, 8), (100, 10, 8), (100, 20, 8))
    assert partition_status(stalled, FAR_BROKER, current_lag=5, time_now_seconds=25, allowed_lag=5) is Status.OK
    assert partition_status(stalled, FAR_BROKER, current_lag=6, time_now_seconds=25, allowed_lag=5) is Status.STALL


def test_lag_reaching_zero_anywhere_in_the_window_makes_the_period_ok() -> None:
    # Rule 1: "If over the stored period, the lag is ever zero for the partition, the period is OK".
    offsets = window((100, 0, 10), (110, 10, 0), (120, 20, 15))
    assert partition_status(offsets, FAR_BROKER, current_lag=20, time_now_seconds=25) is Status.OK


def test_rule_one_compares_lag_with_allowed_lag_not_with_zero() -> None:
    # Rule 1 (fef3b37): `offset.Lag.Value <= allowedLag` ends the checks as OK.
    offsets = window((100, 0, 10), (100, 10, 3), (100, 20, 10))
    assert partition_status(offsets, FAR_BROKER, current_lag=10, time_now_seconds=25, allowed_lag=3) is Status.OK
    assert partition_status(offsets, FAR_BROKER, current_lag=10, time_now_seconds=25, allowed_lag=2) is Status.STALL


def test_committing_the_same_offset_with_lag_is_a_stall() -> None:
    # Rule 4: "If the consumer is committing offsets that do not change, it's an error (partition is stalled)".
    offsets = window((100, 0, 10), (100, 10, 12), (100, 20, 15), (100, 30, 15))
    assert partition_status(offsets, FAR_BROKER, current_lag=15, time_now_seconds=35) is Status.STALL


def test_advancing_commits_whose_lag_never_decreases_are_a_warning() -> None:
    # Rule 5: "If the consumer offsets are advancing, but the lag is not decreasing somewhere, it's a warning".
    assert partition_status(ADVANCING_WITH_GROWING_LAG, FAR_BROKER, current_lag=12,
                            time_now_seconds=45) is Status.WARN


def test_advancing_commits_whose_lag_decreases_once_are_ok() -> None:
    # Rule 5 returns false as soon as `lag.Value < lastLag.Value` once; nothing else applies, so OK.
    offsets = window((100, 0, 10), (110, 10, 12), (120, 20, 11), (130, 30, 13))
    assert partition_status(offsets, FAR_BROKER, current_lag=13, time_now_seconds=35) is Status.OK


def test_commits_without_a_known_lag_are_skipped_by_rules_one_and_five() -> None:
    # Rule 1 only looks at `offset.Lag != nil`; Rule 5 compares each non-nil lag with the previous non-nil one.
    growing = window((100, 0, None), (110, 10, 10), (120, 20, None), (130, 30, 12))
    assert partition_status(growing, FAR_BROKER, current_lag=12, time_now_seconds=35) is Status.WARN
    shrinking = window((100, 0, 10), (110, 10, None), (120, 20, 8))
    assert partition_status(shrinking, FAR_BROKER, current_lag=8, time_now_seconds=25) is Status.OK
    unknown = window((100, 0, None), (100, 10, None))
    assert partition_status(unknown, FAR_BROKER, current_lag=8, time_now_seconds=15) is Status.STALL


def test_a_consumer_silent_for_longer_than_its_window_spans_is_stopped() -> None:
    # Rule 3: "If the difference between now and the last offset timestamp is greater than the difference between
    # the last and first offset timestamps, the consumer has stopped committing". Window spans 0..20 s; at 41 s
    # 21 s > 20 s. STOP is checked first, "even if the consumer had zero lag at some point" (the 0 below).
    offsets = window((100, 0, 10), (110, 10, 0), (120, 20, 5))
    assert partition_status(offsets, FAR_BROKER, current_lag=30, time_now_seconds=41) is Status.STOP


def test_the_stop_rule_is_strict_and_uses_whole_seconds() -> None:
    # Rule 3 compares `(timeNow * 1000) - last > last - first` with timeNow in whole seconds (time.Now().Unix()).
    offsets = window((100, 0, 10), (110, 10, 0), (120, 20, 5))
    assert partition_status(offsets, FAR_BROKER, current_lag=30, time_now_seconds=40) is Status.OK  # 20 s == 20 s
    late = window((100, 0, 10), (110, 10.5, 0))
    assert partition_status(late, FAR_BROKER, current_lag=30, time_now_seconds=21) is Status.OK  # 10.5 s == 10.5 s
    assert partition_status(late, FAR_BROKER, current_lag=30, time_now_seconds=22) is Status.STOP


def test_a_recent_broker_offset_at_the_last_commit_delays_the_stop() -> None:
    # checkIfRecentLagZero: some broker offset in the ring is <= the last committed offset, so not STOP;
    # the remaining rules then see a zero lag in the window (Rule 1): OK.
    offsets = window((100, 0, 10), (110, 10, 0), (120, 20, 5))
    assert partition_status(offsets, [120, 150], current_lag=30, time_now_seconds=41) is Status.OK


def test_a_single_commit_with_lag_stalls_once_it_is_not_stopped() -> None:
    # One commit: Rule 3 span is 0, so any later second is a stop unless a recent broker offset was at the
    # commit; then Rule 4's loop finds no change: STALL.
    offsets = window((100, 5, 10))
    assert partition_status(offsets, [150], current_lag=50, time_now_seconds=6) is Status.STOP
    assert partition_status(offsets, [100, 150], current_lag=50, time_now_seconds=6) is Status.STALL


def test_an_offset_lower_than_the_one_before_it_is_a_rewind() -> None:
    # Rule 2: "If the consumer offset decreases from one interval to the next the partition is marked as a rewind".
    offsets = window((100, 0, 10), (120, 10, 10), (90, 20, 50), (95, 30, 50))
    assert partition_status(offsets, FAR_BROKER, current_lag=50, time_now_seconds=35) is Status.REWIND


def test_a_rewind_counts_before_rule_one_so_zero_lag_earlier_does_not_hide_it() -> None:
    # d69a8ec: the rewind check "has to go above the isLagAlwaysNotZero check".
    offsets = window((100, 0, 0), (120, 10, 0), (90, 20, 40))
    assert partition_status(offsets, FAR_BROKER, current_lag=40, time_now_seconds=25) is Status.REWIND


def test_a_rewind_the_consumer_recovered_from_is_not_held_against_it() -> None:
    # Rule 2 part 2: a later commit >= the offset before the rewind (120) recovers; the other rules then apply:
    # lag never zero, offsets change, lag never decreases -> Rule 5 WARN.
    offsets = window((100, 0, 5), (120, 10, 6), (90, 20, 7), (125, 30, 8))
    assert partition_status(offsets, FAR_BROKER, current_lag=8, time_now_seconds=35) is Status.WARN


def test_a_stop_outranks_a_rewind() -> None:
    # calculatePartitionStatus returns StatusStop before looking for rewinds.
    offsets = window((100, 0, 10), (120, 10, 10), (90, 20, 50))
    assert partition_status(offsets, FAR_BROKER, current_lag=50, time_now_seconds=60) is Status.STOP


def test_an_empty_window_is_ok_and_incomplete() -> None:
    # evaluatePartitionStatus: "If there are no offsets, we can't do anything" -> StatusOK.
    result = evaluate_partition([], intervals=10, broker_offsets=FAR_BROKER, current_lag=99, time_now_seconds=100)
    assert (result.status, result.complete) == (Status.OK, 0.0)


def test_a_window_below_minimum_complete_is_not_evaluated() -> None:
    # evaluatePartitionStatus: Complete = filled / ring size; rules run only `if status.Complete >= minimumComplete`.
    stalled = window((100, 0, 10), (100, 10, 10))
    low = evaluate_partition(stalled, intervals=10, broker_offsets=[100], current_lag=10, time_now_seconds=15,
                             minimum_complete=0.5)
    assert (low.status, low.complete) == (Status.OK, 0.2)
    evaluated = evaluate_partition(stalled, intervals=10, broker_offsets=[100], current_lag=10, time_now_seconds=15)
    assert evaluated.status is Status.STALL


def test_the_window_keeps_only_the_last_intervals_commits() -> None:
    # Burrow's offset ring has `intervals` slots (storage.intervals); older commits fall out.
    ring = CommitWindow(intervals=3)
    for i in range(5):
        ring.add(100 + i, i * 1000, 10)
    assert [o.offset for o in ring.observations] == [102, 103, 104]
    result = evaluate_partition(ring.observations, intervals=3, broker_offsets=FAR_BROKER, current_lag=10,
                                time_now_seconds=5)
    assert result.complete == 1.0


def test_a_commit_closer_than_min_distance_replaces_the_previous_one_but_keeps_its_time() -> None:
    # mergeFrequentCommitIntoPrevious: `request.Timestamp = prevItem.Timestamp` and the slot is overwritten.
    ring = CommitWindow(intervals=10, min_distance_seconds=2)
    ring.add(100, 0, 10)
    ring.add(105, 1500, 7)
    ring.add(110, 2500, 5)  # 2.5 s after the kept timestamp 0: a new entry
    assert ring.observations == (CommitObservation(105, 0, 7), CommitObservation(110, 2500, 5))


def test_lag_stored_with_a_commit_is_zero_when_the_commit_is_ahead_of_the_broker() -> None:
    # addConsumerOffset: `if brokerOffset > request.Offset { lag = brokerOffset - request.Offset }` else 0.
    assert commit_lag(100, 120) == 0
    assert commit_lag(120, 100) == 20
    assert commit_lag(None, 100) is None


@pytest.mark.parametrize(("partitions", "expected"), [
    ([Status.OK, Status.OK], Status.OK),
    ([Status.OK, Status.WARN], Status.WARN),
    ([Status.WARN, Status.STALL], Status.ERR),
    ([Status.STOP, Status.OK], Status.ERR),
    ([Status.REWIND], Status.ERR),
    ([], Status.NOTFOUND),
])
def test_a_group_takes_its_worst_partition_status_with_stop_stall_and_rewind_shown_as_err(
        partitions: list[Status], expected: Status) -> None:
    # evaluateConsumerStatus: `if partitionStatus.Status > protocol.StatusError { status = StatusError }`.
    assert group_status(partitions) is expected
