"""Burrow's consumer status rules, as pure Python (no Spark, no Kafka client).

A faithful port of linkedin/Burrow's caching evaluator
(``core/internal/evaluator/caching.go`` at ced55ba, last changed by d69a8ec
"Detect rewinds when consumer has any rewind in history" and fef3b37 "Add
allowedLag setting") and of the part of its in-memory storage that builds the
window the rules look at (``core/internal/storage/inmemory.go``):

* the window of a partition is the last ``intervals`` *commits* of the group
  for it (Burrow's offset ring, storage ``intervals``, default 10), each with
  the committed offset, the commit timestamp (ms) and the lag *at the time of
  the commit*: the broker's latest offset then known minus the committed
  offset, 0 when the commit is ahead (``addConsumerOffset``); the lag is
  ``None`` when no broker offset was known, which the rules skip as Burrow
  skips its nil ``Lag``;
* a commit made less than ``min_distance`` seconds after the previous entry
  replaces that entry's offset and lag but keeps its timestamp
  (``mergeFrequentCommitIntoPrevious``; storage ``min-distance``, default 0);
* ``broker_offsets`` are the partition's last ``intervals`` latest (high
  watermark) offsets, oldest first (Burrow's broker offset ring);
* ``current_lag`` is the latest broker offset minus the last committed offset,
  0 when the commit is ahead (``fetchConsumer``).

Statuses keep Burrow's numeric order (``protocol.StatusConstant``), so the
group status is the worst partition status, capped at ERR.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum


class Status(IntEnum):
    """Burrow's ``protocol.StatusConstant`` (core/protocol/evaluator.go), same values and names."""

    NOTFOUND = 0  # the group does not exist; never a partition status
    OK = 1
    WARN = 2  # lagging: committing, but the lag is not decreasing
    ERR = 3  # a group with a partition in STOP, STALL or REWIND; never a partition status
    STOP = 4  # not committing while there is lag
    STALL = 5  # committing the same offset while there is lag
    REWIND = 6  # committed an offset lower than a previous one and has not caught up with it


@dataclass(frozen=True)
class CommitObservation:
    """One entry of Burrow's offset ring (``protocol.ConsumerOffset``)."""

    offset: int
    timestamp_ms: int  # when the commit was made (broker clock)
    lag: int | None  # lag when the commit was made; None when no broker offset was known then


@dataclass(frozen=True)
class PartitionEvaluation:
    status: Status
    complete: float  # filled fraction of the window (Burrow's PartitionStatus.Complete)
    window: tuple[CommitObservation, ...]


def commit_lag(broker_offset: int | None, committed: int) -> int | None:
    """Lag stored with a commit: ``broker - committed``, 0 when the commit is ahead (addConsumerOffset)."""
    if broker_offset is None:
        return None
    return broker_offset - committed if broker_offset > committed else 0


class CommitWindow:
    """Burrow's per-partition offset ring: the last ``intervals`` commits, frequent ones merged.

    Commits must be added in the order they were written to __consumer_offsets
    (Burrow's ``Order``); out-of-order backfill, which Burrow inserts into the
    ring, does not occur when commits are replayed in that order.
    """

    def __init__(self, intervals: int, min_distance_seconds: int = 0) -> None:
        if intervals < 1:
            raise ValueError(f"intervals must be >= 1, got {intervals}")
        self.intervals = intervals
        self.min_distance_ms = min_distance_seconds * 1000
        self._ring: deque[CommitObservation] = deque(maxlen=intervals)

    def add(self, offset: int, timestamp_ms: int, lag: int | None) -> None:
        if self._ring and timestamp_ms - self._ring[-1].timestamp_ms < self.min_distance_ms:
            # mergeFrequentCommitIntoPrevious: new offset and lag, the previous entry's timestamp.
            previous = self._ring.pop()
            self._ring.append(CommitObservation(offset, previous.timestamp_ms, lag))
            return
        self._ring.append(CommitObservation(offset, timestamp_ms, lag))

    def clear(self) -> None:
        self._ring.clear()

    @property
    def observations(self) -> tuple[CommitObservation, ...]:
        return tuple(self._ring)

    def __len__(self) -> int:
        return len(self._ring)


# --- the rules, one function each, named and numbered as in caching.go ---------------------------

def is_lag_always_not_zero(offsets: Sequence[CommitObservation], allowed_lag: int = 0) -> bool:
    """Rule 1: if the lag is ever within ``allowed_lag`` over the window, the period is OK."""
    return not any(o.lag is not None and o.lag <= allowed_lag for o in offsets)


def offsets_rewind_index(offsets: Sequence[CommitObservation]) -> int:
    """Rule 2: index of the first commit lower than the one before it, -1 when none."""
    for i in range(1, len(offsets)):
        if offsets[i].offset < offsets[i - 1].offset:
            return i
    return -1


def rewind_recovered(offsets: Sequence[CommitObservation], rewind_index: int) -> bool:
    """Rule 2, part 2: a later commit reached the offset committed just before the rewind."""
    previous = offsets[rewind_index - 1].offset
    return any(o.offset >= previous for o in offsets[rewind_index:])


def offsets_stopped(offsets: Sequence[CommitObservation], time_now_seconds: int) -> bool:
    """Rule 3: the time since the last commit exceeds the time the window spans."""
    first = offsets[0].timestamp_ms
    last = offsets[-1].timestamp_ms
    return time_now_seconds * 1000 - last > last - first


def offsets_stalled(offsets: Sequence[CommitObservation]) -> bool:
    """Rule 4: every commit in the window has the same offset."""
    return all(offsets[i].offset == offsets[i - 1].offset for i in range(1, len(offsets)))


def lag_not_decreasing(offsets: Sequence[CommitObservation]) -> bool:
    """Rule 5: the lag (where known) never goes down from one commit to the next."""
    last: int | None = None
    for o in offsets:
        if o.lag is not None:
            if last is not None and o.lag < last:
                return False
            last = o.lag
    return True


def recent_lag_zero(offsets: Sequence[CommitObservation], broker_offsets: Sequence[int]) -> bool:
    """checkIfRecentLagZero: some recent broker offset is at or below the last committed offset."""
    last = offsets[-1].offset
    return any(b <= last for b in broker_offsets)


def partition_status(offsets: Sequence[CommitObservation], broker_offsets: Sequence[int], current_lag: int,
                     time_now_seconds: int, allowed_lag: int = 0) -> Status:
    """``calculatePartitionStatus``: the rules in Burrow's order. ``offsets`` must not be empty."""
    if current_lag > allowed_lag:
        # STOP first: a stop matters even if the lag was zero somewhere in an old window, unless the
        # recent broker offsets show the consumer was caught up.
        if offsets_stopped(offsets, time_now_seconds) and not recent_lag_zero(offsets, broker_offsets):
            return Status.STOP
        rewind = offsets_rewind_index(offsets)
        if rewind > 0 and not rewind_recovered(offsets, rewind):
            return Status.REWIND
        if is_lag_always_not_zero(offsets, allowed_lag):
            if offsets_stalled(offsets):
                return Status.STALL
            if lag_not_decreasing(offsets):
                return Status.WARN
    return Status.OK


def evaluate_partition(window: Sequence[CommitObservation], intervals: int, broker_offsets: Sequence[int],
                       current_lag: int, time_now_seconds: int, allowed_lag: int = 0,
                       minimum_complete: float = 0.0) -> PartitionEvaluation:
    """``evaluatePartitionStatus``: OK for an empty window; rules only once the window is complete enough."""
    observations = tuple(window)[-intervals:]
    if not observations:
        return PartitionEvaluation(Status.OK, 0.0, observations)
    complete = 1.0 if len(observations) >= intervals else len(observations) / intervals
    status = Status.OK
    if complete >= minimum_complete:
        status = partition_status(observations, broker_offsets, current_lag, time_now_seconds, allowed_lag)
    return PartitionEvaluation(status, complete, observations)


def group_status(partition_statuses: Iterable[Status]) -> Status:
    """``evaluateConsumerStatus``: the worst partition status, STOP/STALL/REWIND reported as ERR.

    A group with no partition to evaluate is NOTFOUND (Burrow answers 404 for a group it does not hold).
    """
    statuses = list(partition_statuses)
    if not statuses:
        return Status.NOTFOUND
    status = Status.OK
    for s in statuses:
        if s > status:
            status = Status.ERR if s > Status.ERR else s
    return status
