"""gold.consumer_lag: each group's lag and Burrow status at every end-offset snapshot.

Inputs: silver.partition_end_offsets (``snapshot-end-offsets``) and
silver.offset_commits (``ingest``), for ``settings.cluster_name``.

For every snapshot and every (group, topic, partition) the group had committed
to by the snapshot time:

* ``committed_offset``: the group's latest commit at or before the snapshot
  time (a commit's time is its ``commit_timestamp``; a tombstone's, which has
  none, its record timestamp); a tombstone removes it (null from then on);
* ``lag``: ``pipelines.end_offsets.lag_in_messages`` (log-start aware, a commit
  ahead of the snapshot clamped to 0 and flagged);
* two labelled lag-in-seconds estimators, both aging the oldest message still
  to read (at ``max(committed, log start)``): interpolation over the
  partition's high-watermark history, and the timestamp of the message there,
  read by the snapshot;
* Burrow's partition status over the window of the group's last
  ``lag.intervals`` commits (``pipelines.burrow_status``), and the group status.

A deleted group's lag ends at its deletion. DeleteGroups (and offset expiry,
once an Empty group has no offset left) makes the coordinator write, in one
append, a tombstone for each of the group's offsets and then the group's own
tombstone (``GroupCoordinatorShard.deleteGroups``: ``deleteAllOffsets`` then
``createGroupTombstoneRecords``; 2.x/3.x ``GroupMetadataManager
.cleanupGroupMetadata``). From a group tombstone on, a partition whose offset is
gone has no row until the group commits to it again (a group re-created under
the same name resumes with its new commits). An offset tombstone without a group
tombstone (OffsetDelete on a group that lives on) still gives a row with a null
offset, and a group tombstone that leaves an offset in place (a group converted
between the classic and the consumer protocol, KIP-848's upgrade path, writes
the old type's tombstone and keeps its offsets) ends nothing.

The per-partition work is plain Python (``partition_rows``, the replay of one partition's snapshots and offset
records in the order they were written).

Incremental, through Spark's state store: ``refresh_consumer_lag`` runs one Structured
Streaming query (``lag_events``: what silver.partition_end_offsets and silver.offset_commits gained, Delta's
streaming source) grouped by cluster and bucket of topics into ``transformWithStateInPandas`` (``TopicReplay``),
whose state is, per partition, what a later replay needs of everything before (``PartitionTail``: the last
``lag.intervals`` records per group, the high-watermark history back to the log start, the newest computed
snapshot). Each
micro-batch replays the tails with the new records through ``advance_partition`` and gives the rows of the new
snapshots; the group tombstones, which carry no topic, are applied to those rows (``ended_by_group_tombstones``),
then the group status (``with_group_status``). What a refresh reads is what silver gained plus the state of the
topics it touched, not the history (every snapshot's high watermark and every offset record, which a full
rebuild reads; bench/lag.py measures both).

A snapshot's rows are computed from everything before it: silver.partition_end_offsets holds only the snapshots
the ingest has passed (it has read ``__consumer_offsets`` up to where it ended when the snapshot was taken); each
refresh first promotes those that are (``pipelines.end_offsets.promote_passed_snapshots``), and those still
pending wait, durably, for a later refresh (``LagRefreshReport.pending``). Both the refresh and ``full=True`` read
the same passed snapshots, so the rows are equal.

Exactly once: each batch's rows are appended with ``txnAppId = offsetlake-consumer-lag:<cluster>`` and
``txnVersion`` = the newest snapshot id in them, so a batch run again after a crash writes nothing; the query's
first batch (a new warehouse, ``full=True``, or a warehouse from before the state store) replaces the cluster's
rows. A snapshot is computed from the commits ingested when it is first refreshed (a commit ingested later counts
from the next snapshot on, as Burrow would see it); ``full=True`` recomputes every snapshot from silver as it is.
``consumer_lag_frame`` is the same computation over all of silver in one batch (the tests compare the two).

The table's whole definition, in one module: ``TABLE`` (schema, key, its CHECK constraints), the build step
(``partition_rows``, ``advance_partition``, ``with_group_status``) and the incremental strategy
(``Incremental.APPEND_NEW_SNAPSHOTS``, ``refresh_consumer_lag``). Tested in tests/pipelines/gold/test_consumer_lag.py.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import types as T
from pyspark.sql.streaming.stateful_processor import StatefulProcessor

from conf.settings import LagSettings, Settings
from pipelines.burrow_status import CommitWindow, Status, commit_lag, evaluate_partition
from pipelines.end_offsets import (
    PendingSnapshots,
    WatermarkHistory,
    lag_in_messages,
    lag_seconds_from_message,
    lag_seconds_interpolated,
)
from schemas import consumer_group_records, group_metadata, offset_commits, partition_end_offsets
from schemas.table_spec import Constraint, Incremental, TableSpec, column

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

STATUSES = ("OK", "WARN", "STOP", "STALL", "REWIND")
GROUP_STATUSES = ("NOTFOUND", "OK", "WARN", "ERR")

# Rules that hold by construction of pipelines/gold/consumer_lag.py, whatever the cluster answered: Delta enforces
# them at write (quality/consumer_lag.py names them). The snapshot's own offsets come from the broker and are
# checked by a query instead: a constraint would stop the lag job on a bad answer.
LAG_IS_CLAMPED_OR_FLAGGED = Constraint("lag_is_non_negative_or_flagged", """
    lag < 0
    OR (committed_offset IS NULL) != (lag IS NULL)
    OR (committed_offset > latest_offset AND NOT coalesce(commit_ahead_of_snapshot, false))
    OR (committed_offset < earliest_offset AND NOT coalesce(committed_below_log_start, false))
    OR lag != greatest(latest_offset - greatest(committed_offset, earliest_offset), 0)""")
PARTITION_STATUS_IS_BURROWS = Constraint(
    "partition_status_is_a_burrow_status", f"partition_status NOT IN ({', '.join(repr(s) for s in STATUSES)})")
GROUP_STATUS_IS_BURROWS = Constraint(
    "group_status_is_a_burrow_status", f"group_status NOT IN ({', '.join(repr(s) for s in GROUP_STATUSES)})")

TABLE = TableSpec(
    name="gold.consumer_lag",
    description=(
        "At each snapshot of silver.partition_end_offsets, each group's committed offset (from "
        "silver.offset_commits), its lag in messages and in seconds (two labelled estimators), and its "
        "Burrow status per partition and per group. A deleted group's rows end at its deletion: from the group's "
        "tombstone on, a partition whose offset was tombstoned has no row until the group commits to it again."
    ),
    schema=T.StructType([
        column("cluster_name", T.StringType(), "cluster", False),
        column("snapshot_id", T.LongType(), "the end-offset snapshot (silver.partition_end_offsets)", False),
        column("snapshot_time", T.TimestampType(), "when the snapshot was taken", False),
        column("group", T.StringType(), "consumer group id", False),
        column("topic", T.StringType(), "topic", False),
        column("partition", T.IntegerType(), "partition", False),
        column("committed_offset", T.LongType(),
               "the group's latest commit at or before snapshot_time; null when its offset was deleted (tombstone)"),
        column("commit_time", T.TimestampType(), "when that commit (or the tombstone) was written"),
        column("earliest_offset", T.LongType(), "log start offset at the snapshot", False),
        column("latest_offset", T.LongType(), "high watermark at the snapshot", False),
        column("last_stable_offset", T.LongType(), "last stable offset at the snapshot", False),
        column("lag", T.LongType(),
               "messages the group has still to read: latest_offset - max(committed_offset, earliest_offset), "
               "so only messages still in the log count; 0 when the commit is ahead of the snapshot; "
               "null when nothing is committed"),
        column("commit_ahead_of_snapshot", T.BooleanType(),
               "the committed offset is above latest_offset (a snapshot older than the commit, or an offset "
               "committed past the end); lag is clamped to 0"),
        column("committed_below_log_start", T.BooleanType(),
               "the committed offset is below earliest_offset: those messages were deleted by retention or "
               "DeleteRecords, and lag counts from the log start"),
        column("lag_seconds_interpolated", T.DoubleType(),
               "estimator 1 (interpolation): snapshot_time minus the time at which the partition's high "
               "watermark reached committed_offset, interpolated linearly between the two snapshots that "
               "bracket it; 0 when lag is 0; null when no earlier snapshot is at or below the committed offset"),
        column("lag_seconds_message_timestamp", T.DoubleType(),
               "estimator 2 (message timestamp): snapshot_time minus the timestamp of the message at "
               "committed_offset (read by the snapshot); 0 when lag is 0; null when it was not read"),
        column("committed_message_timestamp", T.TimestampType(), "timestamp of the message at committed_offset"),
        column("partition_status", T.StringType(),
               f"Burrow status of the partition over the window ({', '.join(STATUSES)}); null when nothing "
               "is committed"),
        column("window_commits", T.IntegerType(), "commits in the Burrow window (at most lag.intervals)"),
        column("window_complete", T.DoubleType(), "window_commits / lag.intervals, at most 1 (Burrow's Complete)"),
        column("group_status", T.StringType(),
               f"Burrow status of the group ({', '.join(GROUP_STATUSES)}): the worst partition status, "
               "STOP/STALL/REWIND reported as ERR; NOTFOUND when none of its partitions has a commit", False),
        column("group_lag", T.LongType(), "the group's total lag over all its partitions at this snapshot"),
        column("snapshot_date", T.DateType(), "UTC date of snapshot_time (partition column)", False),
    ]),
    partition_by=("snapshot_date",),
    key=("cluster_name", "snapshot_id", "group", "topic", "partition"),
    constraints=(LAG_IS_CLAMPED_OR_FLAGGED, PARTITION_STATUS_IS_BURROWS, GROUP_STATUS_IS_BURROWS),
    incremental=Incremental.APPEND_NEW_SNAPSHOTS,
)
END_OFFSETS = partition_end_offsets.TABLE
COMMITS = offset_commits.TABLE
GROUP_METADATA = group_metadata.TABLE
GROUP_RECORDS = consumer_group_records.TABLE
#: silver.consumer_group_records types whose tombstone deletes a group that commits offsets.
GROUP_TOMBSTONE_TYPES = ("consumer_group_metadata", "streams_group_metadata")

# What partition_rows returns: times as epoch ms, converted to timestamps in Spark.
_ROW_COLUMNS: tuple[tuple[str, str], ...] = (
    ("cluster_name", "string"), ("snapshot_id", "bigint"), ("group", "string"), ("topic", "string"),
    ("partition", "int"), ("committed_offset", "bigint"), ("commit_ms", "bigint"), ("earliest_offset", "bigint"),
    ("latest_offset", "bigint"), ("last_stable_offset", "bigint"), ("lag", "bigint"),
    ("commit_ahead_of_snapshot", "boolean"), ("committed_below_log_start", "boolean"),
    ("lag_seconds_interpolated", "double"), ("lag_seconds_message_timestamp", "double"),
    ("committed_message_ms", "bigint"), ("partition_status", "string"), ("window_commits", "int"),
    ("window_complete", "double"),
)
#: What the state store's function returns: the rows, and the position of the record in force (for
#: ``ended_by_group_tombstones``).
_STATE_ROW_COLUMNS = (*_ROW_COLUMNS, ("commit_source_partition", "int"), ("commit_source_offset", "bigint"))
SNAPSHOT_EVENT, RECORD_EVENT = "snapshot", "record"  # lag_events' kinds
#: The state store's keys: a cluster's topics in this many buckets (``TopicReplay`` says why). Part of the
#: query's checkpoint: another number needs ``lag --full``.
STATE_BUCKETS = 64
_PANDAS_TYPES = {"string": "object", "bigint": "Int64", "int": "Int32", "boolean": "boolean", "double": "Float64"}


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: int
    earliest: int
    latest: int
    last_stable: int
    message_ms: dict[int, int]  # committed offset -> timestamp of the message there


@dataclass(frozen=True)
class Commit:
    """One offset record of a group on one partition, or (``group_removed``) the group's tombstone."""

    group: str
    offset: int | None  # None for a tombstone
    time_ms: int
    group_removed: bool = False  # the group's own tombstone (GroupMetadata, ConsumerGroupMetadata, ...)
    position: tuple[int, int] = (0, 0)  # (source_partition, source_offset) in __consumer_offsets
    # The lag Burrow stores with the commit, once computed (``lag_stored``): a replay state kept between refreshes
    # (``PartitionTail``) keeps it instead of the snapshot it was computed against.
    lag_at_commit: int | None = None
    lag_stored: bool = False


@dataclass(frozen=True)
class LagRefreshReport:
    snapshots: int  # new snapshots that gave rows (one where every group was deleted gives none)
    rows: int
    seconds: float
    newest_snapshot_id: int | None
    # Snapshots the ingest has not passed yet (``pipelines.end_offsets.promote_passed_snapshots``).
    pending: PendingSnapshots = dataclasses.field(default_factory=PendingSnapshots)


class _Replay:
    """One group's offset records on one partition, taken in the order they were written up to a time: the record
    in force (``current``; None before the first, or once deleted with the group) and Burrow's window of commits."""

    def __init__(self, commits: list[Commit], snapshots: list[Snapshot], times: list[int], lag: LagSettings) -> None:
        self.commits, self.snapshots, self.times = commits, snapshots, times
        self.window = CommitWindow(lag.intervals, lag.min_distance_seconds)
        self.current: Commit | None = None
        self.taken = 0

    def absorb(self, until_ms: int) -> None:
        """Take the records written at or before ``until_ms``."""
        while self.taken < len(self.commits) and self.commits[self.taken].time_ms <= until_ms:
            commit = self.commits[self.taken]
            self.taken += 1
            if commit.group_removed:
                if self.current is not None and self.current.offset is None:
                    self.current = None  # deleted with the group: no row until it commits here again
                continue
            self.current = commit
            if commit.offset is None:
                self.window.clear()  # the offset was deleted: Burrow's history of it ends too
                continue
            self.window.add(commit.offset, commit.time_ms, commit.lag_at_commit if commit.lag_stored
                            else lag_at(self.snapshots, self.times, commit.offset, commit.time_ms))


def lag_at(snapshots: list[Snapshot], times: list[int], offset: int, time_ms: int) -> int | None:
    """The lag stored with a commit: against the newest snapshot taken at or before it (Burrow's
    ``addConsumerOffset`` takes the broker's latest offset it knows then)."""
    known = bisect.bisect_right(times, time_ms) - 1
    return commit_lag(snapshots[known].latest if known >= 0 else None, offset)


def partition_rows(cluster: str, topic: str, partition: int, snapshots: list[Snapshot], commits: list[Commit],
                   lag: LagSettings, after_snapshot_id: int | None = None) -> Iterator[dict[str, Any]]:
    """gold.consumer_lag rows of one partition (pure Python).

    ``snapshots`` and ``commits`` are in time order (commits in the order they
    were written to __consumer_offsets). Rows are produced for snapshots with
    ``snapshot_id > after_snapshot_id``; the older ones still build the windows.

    The commits up to the last older snapshot are taken in one pass, not snapshot by snapshot (the older
    snapshots give no row, so stepping through them only added a loop over every snapshot ever taken, per
    group), and the interpolation reads the high-watermark history through ``WatermarkHistory`` (a binary
    search instead of a scan per row): the same rows, at a cost that no longer grows with the history per row.
    """
    times = [s.snapshot_id for s in snapshots]
    watermarks = WatermarkHistory.of([(s.snapshot_id, s.latest) for s in snapshots])
    first = 0 if after_snapshot_id is None else bisect.bisect_right(times, after_snapshot_id)
    by_group: dict[str, list[Commit]] = {}
    for c in commits:
        by_group.setdefault(c.group, []).append(c)

    for group, group_commits in sorted(by_group.items()):
        replay = _Replay(group_commits, snapshots, times, lag)
        if first > 0:
            replay.absorb(snapshots[first - 1].snapshot_id)
        for index in range(first, len(snapshots)):
            snap = snapshots[index]
            replay.absorb(snap.snapshot_id)
            current, window = replay.current, replay.window
            if current is None:
                continue
            committed = current.offset
            messages = lag_in_messages(committed, snap.earliest, snap.latest)
            message_ms = snap.message_ms.get(committed) if committed is not None else None
            row: dict[str, Any] = {
                "cluster_name": cluster, "snapshot_id": snap.snapshot_id, "group": group, "topic": topic,
                "partition": partition, "committed_offset": committed, "commit_ms": current.time_ms,
                # The record in force's place in __consumer_offsets: not table columns; the state path's group
                # tombstones are ordered against it (ended_by_group_tombstones).
                "commit_source_partition": current.position[0], "commit_source_offset": current.position[1],
                "earliest_offset": snap.earliest, "latest_offset": snap.latest,
                "last_stable_offset": snap.last_stable, "lag": messages.lag,
                "commit_ahead_of_snapshot": messages.commit_ahead_of_snapshot,
                "committed_below_log_start": messages.committed_below_log_start,
                "lag_seconds_interpolated": lag_seconds_interpolated(
                    watermarks.upto(index + 1), snap.snapshot_id, committed, snap.earliest, messages.lag),
                "lag_seconds_message_timestamp": lag_seconds_from_message(snap.snapshot_id, message_ms, messages.lag),
                "committed_message_ms": message_ms,
                "partition_status": None, "window_commits": 0, "window_complete": 0.0,
            }
            if committed is not None and len(window):
                # Burrow's CurrentLag: latest broker offset minus the last commit, 0 when ahead (fetchConsumer);
                # its broker-offset ring: the last `intervals` high watermarks.
                observations = window.observations
                broker_offsets = [s.latest for s in snapshots[max(0, index + 1 - lag.intervals):index + 1]]
                evaluation = evaluate_partition(
                    observations, lag.intervals, broker_offsets,
                    commit_lag(snap.latest, observations[-1].offset) or 0, snap.snapshot_id // 1000,
                    lag.allowed_lag, lag.minimum_complete)
                row.update(partition_status=evaluation.status.name, window_commits=len(evaluation.window),
                           window_complete=evaluation.complete)
            yield row


# -- the replay state kept between refreshes (Spark's state store) -----------------------------------------


@dataclass(frozen=True)
class PartitionTail:
    """What a later replay of one partition needs of everything before: the state ``advance_partition`` keeps in
    Spark's state store from one micro-batch to the next, so that a refresh reads what is new, not the history.

    * ``records``: every group's offset records on the partition in the order they were written, of those up to
      ``computed`` only the last ``lag.intervals`` per group (``_Replay`` with ``min_distance_seconds`` 0, Burrow's
      default: the record in force and Burrow's window are decided by them; all of them with a larger distance,
      whose merged entries depend on where each run of close commits began), each with its stored lag; and every
      record after ``computed`` (not yet absorbed: no snapshot at or after it yet).
    * ``watermarks``: the ``(snapshot_id, latest_offset)`` history, from the last snapshot at or below the newest
      snapshot's log start on (every later row's oldest unread offset is at or above the log start, which only
      moves forward, so the interpolation's bracket lies there: ``WatermarkHistory``), and at least the last
      ``intervals`` (Burrow's broker-offset ring); once the watermark went down (``rising`` false: a topic
      deleted and re-created; ``interpolated_time_at_offset`` then takes the last snapshot at or below the offset
      anywhere) every snapshot from then on.
    * ``computed``: the newest snapshot that has rows; an older one arriving later gives none, as in
      ``refresh_consumer_lag`` before (it computed only snapshots newer than gold's newest).

    What is not kept: group tombstones (they carry no topic; the caller drops the rows they end,
    ``ended_by_group_tombstones``) and the messages' timestamps of past snapshots (rows are only made for new ones).
    Differs from a replay of everything only in corners: a record that arrives after snapshots newer than it
    were computed *and* is older than the oldest kept snapshot (its stored lag is taken against the oldest kept
    one, not the newest at or before it); a snapshot that arrives after a newer one (it gives no row, as before,
    but a replay of everything would take it as the newest before a commit); and after a watermark fell back, a
    row whose oldest unread offset is below every kept watermark (no interpolated lag, where a replay of
    everything may bracket it in the history from before the topic was re-created).
    """

    computed: int | None = None
    rising: bool = True
    newest_earliest: int = 0
    watermarks: tuple[tuple[int, int], ...] = ()
    records: tuple[Commit, ...] = ()

    def to_json(self) -> list[Any]:
        return [self.computed, self.rising, self.newest_earliest, [list(w) for w in self.watermarks],
                [[c.group, c.offset, c.time_ms, c.position[0], c.position[1], c.lag_at_commit, c.lag_stored]
                 for c in self.records]]

    @classmethod
    def from_json(cls, data: list[Any]) -> PartitionTail:
        computed, rising, newest_earliest, watermarks, records = data
        return cls(computed, rising, newest_earliest, tuple((int(i), int(o)) for i, o in watermarks),
                   tuple(Commit(g, o, t, False, (sp, so), lag, stored) for g, o, t, sp, so, lag, stored in records))


def _written_order(commit: Commit) -> tuple[int, int, int]:
    return commit.time_ms, commit.position[0], commit.position[1]


def advance_partition(cluster: str, topic: str, partition: int, tail: PartitionTail, snapshots: list[Snapshot],
                      records: list[Commit], lag: LagSettings) -> tuple[list[dict[str, Any]], PartitionTail]:
    """The rows of the new ``snapshots`` of one partition, from ``tail`` and the new offset ``records``, and the
    tail to keep: the same rows as ``partition_rows`` over the whole history (tests/pipelines/gold/
    test_consumer_lag.py replays histories both ways), at a cost bounded by the tail, not the history."""
    commits = sorted((*tail.records, *records), key=_written_order)
    history = dict(tail.watermarks)
    history.update((s.snapshot_id, s.latest) for s in snapshots)
    fresh = {s.snapshot_id: s for s in snapshots}
    # Past snapshots give no row: only their high watermark is read (partition_rows reads nothing else of them).
    replayed = [fresh.get(i) or Snapshot(i, 0, latest, 0, {}) for i, latest in sorted(history.items())]
    rows = list(partition_rows(cluster, topic, partition, replayed, commits, lag, tail.computed))

    newest = max(snapshots, key=lambda s: s.snapshot_id, default=None)
    computed = tail.computed
    newest_earliest = tail.newest_earliest
    if newest is not None and (computed is None or newest.snapshot_id > computed):
        computed, newest_earliest = newest.snapshot_id, newest.earliest
    times = [s.snapshot_id for s in replayed]
    latest = [s.latest for s in replayed]
    rising = tail.rising and all(a <= b for a, b in zip(latest, latest[1:], strict=False))

    kept: list[Commit] = []
    absorbed: dict[str, list[Commit]] = {}
    for commit in commits:
        if computed is not None and commit.time_ms <= computed:
            absorbed.setdefault(commit.group, []).append(commit)
        else:
            kept.append(commit)
    window = lag.intervals if lag.min_distance_seconds == 0 else None
    for group_commits in absorbed.values():
        kept.extend(commit if commit.lag_stored or commit.offset is None else dataclasses.replace(
            commit, lag_at_commit=lag_at(replayed, times, commit.offset, commit.time_ms), lag_stored=True)
            for commit in (group_commits if window is None else group_commits[-window:]))
    kept.sort(key=_written_order)

    first = 0
    if rising:
        first = max(0, bisect.bisect_right(latest, newest_earliest) - 1)
        first = min(first, max(0, len(times) - lag.intervals))
    return rows, PartitionTail(computed, rising, newest_earliest,
                               tuple(zip(times[first:], latest[first:], strict=True)), tuple(kept))


def _rows_frame(rows: list[dict[str, Any]], columns: tuple[tuple[str, str], ...] = _ROW_COLUMNS) -> pd.DataFrame:
    import pandas as pd

    # Column by column: a frame from a list of dicts, then astype, cost twice as much per row.
    return pd.DataFrame({name: pd.array([r[name] for r in rows], dtype=_PANDAS_TYPES[kind])
                         for name, kind in columns})


def _snapshots_of(snaps: pd.DataFrame) -> dict[tuple[str, int], list[Snapshot]]:
    """Per (topic, partition), the snapshots of a frame of ``_snapshot_columns`` rows, oldest first."""
    snapshots_of: dict[tuple[str, int], list[Snapshot]] = {}
    for topic, partition, snapshot_id, earliest, latest, stable, offsets, times in zip(
            snaps["topic"].tolist(), snaps["partition"].tolist(), snaps["snapshot_id"].tolist(),
            snaps["earliest_offset"].tolist(), snaps["latest_offset"].tolist(), snaps["last_stable_offset"].tolist(),
            snaps["message_offsets"].tolist(), snaps["message_ms"].tolist(), strict=True):
        messages = dict(zip((int(o) for o in offsets), (int(t) for t in times), strict=True)) \
            if offsets is not None else {}
        snapshots_of.setdefault((topic, int(partition)), []).append(
            Snapshot(int(snapshot_id), int(earliest), int(latest), int(stable), messages))
    for snapshots in snapshots_of.values():
        snapshots.sort(key=lambda s: s.snapshot_id)
    return snapshots_of


def _commits_of(commits: pd.DataFrame) -> dict[tuple[str, int], list[Commit]]:
    """Per (topic, partition), the offset records (and group tombstones) of a frame of ``_record_columns`` rows, in
    the order they were written."""
    import pandas as pd

    commits_of: dict[tuple[str, int], list[Commit]] = {}
    offset_column = commits["offset"].astype("Int64")
    for topic, partition, group, offset, tombstone, time_ms, removed, source_partition, source_offset in zip(
            commits["topic"].tolist(), commits["partition"].tolist(), commits["group"].tolist(),
            offset_column.tolist(), commits["is_tombstone"].tolist(), commits["time_ms"].tolist(),
            commits["group_removed"].tolist(), commits["source_partition"].tolist(),
            commits["source_offset"].tolist(), strict=True):
        none = bool(tombstone) or offset is pd.NA  # Int64's missing value
        commits_of.setdefault((topic, int(partition)), []).append(
            Commit(group, None if none else int(offset), int(time_ms), bool(removed),
                   (int(source_partition), int(source_offset))))
    for records in commits_of.values():
        records.sort(key=_written_order)
    return commits_of


def _apply(lag: LagSettings):  # type: ignore[no-untyped-def]
    def compute(key: tuple[Any, ...], snaps: pd.DataFrame, commits: pd.DataFrame) -> pd.DataFrame:
        """The rows of every partition of one topic: ``partition_rows`` per partition."""
        cluster, topic = key
        if snaps.empty or commits.empty:
            return _rows_frame([])
        snapshots_of, commits_of = _snapshots_of(snaps), _commits_of(commits)
        rows: list[dict[str, Any]] = []
        for _, partition in sorted(snapshots_of.keys() & commits_of.keys()):
            rows.extend(partition_rows(cluster, topic, partition, snapshots_of[topic, partition],
                                       commits_of[topic, partition], lag))
        return _rows_frame(rows)

    return compute


class TopicReplay(StatefulProcessor):
    """The state store's processor (``transformWithStateInPandas``): for the topics of one (cluster, bucket) per
    call, their partitions' tails (``PartitionTail``; JSON in one value state, topic -> partition -> tail) advanced
    by the micro-batch's new snapshots and offset records, and the rows of the new snapshots.

    Keyed by a bucket of topics (``STATE_BUCKETS``), not by topic: every snapshot touches every topic, and each
    key's call costs a few milliseconds whatever it holds (its state's round trips to the JVM, its pandas frames),
    so keyed by topic a snapshot of thousands of topics took tens of seconds (bench/lag.py; recorded in
    CHANGELOG.md).

    Spark's newer stateful API rather than ``applyInPandasWithState``: PySpark 4.1.1's serializer for the older
    one slices its Arrow batches at float offsets whenever a batch holds more rows than keys (pandas turns the
    state-info column's padding nulls into NaN) and fails with ``TypeError: 'float' object cannot be interpreted
    as an integer`` (seen with pandas 2.3.3 and pyarrow 26).
    """

    def __init__(self, lag: LagSettings) -> None:
        self.lag = lag

    def init(self, handle: Any) -> None:
        self.tails = handle.getValueState("tails", T.StructType([T.StructField("tails", T.StringType())]))

    def handleInputRows(self, key: tuple[Any, ...], frames: Iterator[pd.DataFrame],  # noqa: N802 - Spark's name
                        timerValues: Any) -> Iterator[pd.DataFrame]:  # noqa: N803 - Spark's name
        import pandas as pd

        cluster = key[0]
        events = pd.concat(list(frames), ignore_index=True)
        tails: dict[str, dict[str, Any]] = json.loads(self.tails.get()[0]) if self.tails.exists() else {}
        snapshots_of = _snapshots_of(events[events["kind"] == SNAPSHOT_EVENT])
        commits_of = _commits_of(events[events["kind"] == RECORD_EVENT])
        rows: list[dict[str, Any]] = []
        for topic, partition in sorted(snapshots_of.keys() | commits_of.keys()):
            of_topic = tails.setdefault(topic, {})
            kept = of_topic.get(str(partition))
            new_rows, tail = advance_partition(
                cluster, topic, partition, PartitionTail.from_json(kept) if kept else PartitionTail(),
                snapshots_of.get((topic, partition), []), commits_of.get((topic, partition), []), self.lag)
            of_topic[str(partition)] = tail.to_json()
            rows.extend(new_rows)
        self.tails.update((json.dumps(tails, separators=(",", ":")),))
        yield _rows_frame(rows, _STATE_ROW_COLUMNS)

    def close(self) -> None:
        pass


def group_tombstones(spark: SparkSession, settings: Settings) -> DataFrame:
    """(cluster_name, group, time_ms, source_partition, source_offset) of every group tombstone of the cluster.

    A classic group's is its GroupMetadata tombstone (silver.group_metadata); a KIP-848 consumer
    group's its ConsumerGroupMetadata tombstone, a streams group's (KIP-1071) its
    StreamsGroupMetadata tombstone (silver.consumer_group_records). Share groups keep no offsets
    in __consumer_offsets. Its time is the record's: the coordinator wrote it in the same append
    as the offset tombstones before it, which the position orders it after.
    """
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table

    cluster = F.col("cluster_name") == settings.cluster_name
    position = [F.unix_millis("record_timestamp").alias("time_ms"), "source_partition", "source_offset"]
    classic = read_table(spark, settings, GROUP_METADATA).filter(cluster & F.col("is_tombstone")).select(
        "cluster_name", "group", *position)
    typed = read_table(spark, settings, GROUP_RECORDS).filter(
        cluster & F.col("is_tombstone") & F.col("type").isin(*GROUP_TOMBSTONE_TYPES)).select(
        "cluster_name", F.col("group_id").alias("group"), *position)
    return classic.unionByName(typed)


def _snapshot_columns() -> list[Any]:
    """The columns of a snapshot as the replay reads them (``_snapshots_of``)."""
    from pyspark.sql import functions as F

    return ["cluster_name", "topic", "partition", "snapshot_id", "earliest_offset", "latest_offset",
            "last_stable_offset", F.transform("committed_messages", lambda m: m["offset"]).alias("message_offsets"),
            F.transform("committed_messages", lambda m: F.unix_millis(m["message_timestamp"])).alias("message_ms")]


def _record_columns() -> list[Any]:
    """The columns of an offset record as the replay reads them (``_commits_of``)."""
    from pyspark.sql import functions as F

    return ["cluster_name", "topic", "partition", "group", "offset", "is_tombstone",
            # A tombstone has no commit_timestamp: its time is when it was written.
            F.unix_millis(F.coalesce("commit_timestamp", "record_timestamp")).alias("time_ms"),
            "source_partition", "source_offset", F.lit(False).alias("group_removed")]


def consumer_lag_frame(spark: SparkSession, settings: Settings) -> DataFrame:
    """gold.consumer_lag's rows for every snapshot, replaying each partition's whole history in one batch.

    What ``refresh_consumer_lag`` computes micro-batch by micro-batch from the state store, computed at once
    (tests/pipelines/gold/test_consumer_lag.py compares the two); the group tombstones are replayed here with
    the offset records, each on every partition the group has an offset record for.
    """
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table

    cluster = F.col("cluster_name") == settings.cluster_name
    snaps = read_table(spark, settings, END_OFFSETS).filter(cluster).select(*_snapshot_columns())
    offsets = read_table(spark, settings, COMMITS).filter(cluster).select(*_record_columns()).filter(
        F.col("time_ms").isNotNull())
    removals = group_tombstones(spark, settings).join(
        offsets.select("cluster_name", "group", "topic", "partition").distinct(), ["cluster_name", "group"])
    commits = offsets.unionByName(removals.select(
        "cluster_name", "topic", "partition", "group", F.lit(None).cast("bigint").alias("offset"),
        F.lit(True).alias("is_tombstone"), "time_ms", "source_partition", "source_offset",
        F.lit(True).alias("group_removed")))
    # One Python call per topic, not per partition: at 10,000 groups (75,000 partitions, bench/scale.py) the
    # pandas set-up of ~75,000 calls was most of the step; a topic's partitions are replayed in one call.
    keys = ["cluster_name", "topic"]
    schema = ", ".join(f"`{name}` {kind}" for name, kind in _ROW_COLUMNS)
    rows = snaps.groupBy(*keys).cogroup(commits.groupBy(*keys)).applyInPandas(_apply(settings.lag), schema)
    return with_group_status(rows)


def with_group_status(rows: DataFrame) -> DataFrame:
    """The table's columns from the replay's rows (``_ROW_COLUMNS``): times as timestamps, and the group's status
    and lag over its partitions of all topics at each snapshot.

    Group status: Burrow's evaluateConsumerStatus, the worst partition status with STOP, STALL and REWIND
    reported as ERR (pipelines.burrow_status.group_status, in Spark over each snapshot's group).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rank = F.create_map(*[x for s in Status for x in (F.lit(s.name), F.lit(int(s)))])
    per_group = Window.partitionBy("cluster_name", "snapshot_id", "group")
    worst = F.max(rank[F.col("partition_status")]).over(per_group)
    group_status = (F.when(worst.isNull(), F.lit(Status.NOTFOUND.name))
                    .when(worst > int(Status.ERR), F.lit(Status.ERR.name))
                    .when(worst == int(Status.WARN), F.lit(Status.WARN.name))
                    .otherwise(F.lit(Status.OK.name)))
    snapshot_time = F.timestamp_millis(F.col("snapshot_id"))
    return rows.select(
        "cluster_name", "snapshot_id", snapshot_time.alias("snapshot_time"), "group", "topic", "partition",
        "committed_offset", F.timestamp_millis("commit_ms").alias("commit_time"), "earliest_offset",
        "latest_offset", "last_stable_offset", "lag", "commit_ahead_of_snapshot", "committed_below_log_start",
        "lag_seconds_interpolated", "lag_seconds_message_timestamp",
        F.timestamp_millis("committed_message_ms").alias("committed_message_timestamp"),
        "partition_status", "window_commits", "window_complete", group_status.alias("group_status"),
        F.sum("lag").over(per_group).alias("group_lag"), F.to_date(snapshot_time).alias("snapshot_date"),
    )


def lag_events(spark: SparkSession, settings: Settings) -> DataFrame:
    """The streaming frame of what silver gained for the cluster: new snapshots (silver.partition_end_offsets)
    and new offset records (silver.offset_commits), one row each with ``kind`` saying which.

    Delta's plain streaming source, every file a batch (``maxFilesPerTrigger``): a batch holds everything both
    tables gained when it was planned, so a snapshot never meets fewer of the records before it than a refresh
    at that moment would read. Both tables are append-only; a commit that changes rows (a retention DELETE)
    is passed over (``skipChangeCommits``): the lag already computed stays what it was, ``lag --full`` recomputes
    it from silver as it is.
    """
    from pyspark.sql import functions as F

    from pipelines.delta_tables import table_path

    def source(spec: TableSpec) -> DataFrame:
        return (spark.readStream.format("delta").option("skipChangeCommits", "true")
                .option("maxFilesPerTrigger", str(2**31 - 1)).load(table_path(settings, spec))
                .filter(F.col("cluster_name") == settings.cluster_name))

    snapshots = source(END_OFFSETS).select(*_snapshot_columns(), F.lit(SNAPSHOT_EVENT).alias("kind"))
    records = source(COMMITS).select(*_record_columns(), F.lit(RECORD_EVENT).alias("kind")).filter(
        F.col("time_ms").isNotNull())
    return snapshots.unionByName(records, allowMissingColumns=True).withColumn(
        "bucket", F.pmod(F.xxhash64("topic"), F.lit(STATE_BUCKETS)).cast("int"))


def ended_by_group_tombstones(spark: SparkSession, settings: Settings, rows: DataFrame) -> DataFrame:
    """``rows`` without those a group tombstone ended: a row whose offset was deleted (an offset tombstone in
    force, ``committed_offset`` null) has none once the group's own tombstone came after that offset tombstone,
    at or before the snapshot (``_Replay``'s ``group_removed``; the module docstring says why). The state store
    keeps no group tombstone (it carries no topic), so they are looked up here, for the few rows they can end."""
    from pyspark.sql import functions as F

    tombstones = group_tombstones(spark, settings).select(*[F.col(c).alias(f"_t_{c}") for c in (
        "cluster_name", "group", "time_ms", "source_partition", "source_offset")])
    t, sp, so = F.col("_t_time_ms"), F.col("_t_source_partition"), F.col("_t_source_offset")
    after = ((t > rows["commit_ms"])
             | ((t == rows["commit_ms"]) & ((sp > rows["commit_source_partition"])
                                            | ((sp == rows["commit_source_partition"])
                                               & (so > rows["commit_source_offset"])))))
    ends = ((F.col("_t_cluster_name") == rows["cluster_name"]) & (F.col("_t_group") == rows["group"])
            & rows["committed_offset"].isNull() & after & (t <= rows["snapshot_id"]))
    return rows.join(tombstones, ends, "left_anti")


def lag_checkpoint(settings: Settings) -> str:
    """``<warehouse>/_checkpoints/<cluster>/consumer_lag``: the lag query's checkpoint, holding the state store."""
    from pipelines.storage import join

    return join(settings.warehouse_uri, "_checkpoints", settings.cluster_name, "consumer_lag")


def app_id(settings: Settings) -> str:
    return f"offsetlake-consumer-lag:{settings.cluster_name}"


def refresh_consumer_lag(spark: SparkSession, settings: Settings, *, full: bool = False,
                         reached: dict[int, int] | None = None) -> LagRefreshReport:
    """Append gold.consumer_lag rows for the snapshots silver gained since the last refresh; with ``full`` (or a
    query that never ran: a new warehouse, one from before the state store) recompute the cluster's rows from all
    of silver.

    First the pending snapshots the ingest has passed join silver.partition_end_offsets
    (``promote_passed_snapshots``; ``reached``: a running ingest's planned ends, beyond its checkpoint's).

    One Structured Streaming query (``lag_events`` grouped by cluster and bucket of topics into
    ``transformWithStateInPandas``, whose state is each partition's ``PartitionTail``), run to what is available
    (``run_to_available``). Exactly once: a batch's rows are appended with ``txnAppId`` = ``app_id`` and
    ``txnVersion`` = the newest snapshot in them, so a batch run again after a crash writes nothing; its first
    batch replaces the cluster's rows (a rebuild). As before the state store, a snapshot older than one already
    written (snapshots of some topics taken apart and ingested late) is not written.
    """
    from pyspark.sql import functions as F

    from pipelines.checkpoints import run_to_available
    from pipelines.delta_tables import ensure_current_table, ensure_table, idempotent_append, table_path
    from pipelines.end_offsets import promote_passed_snapshots
    from pipelines.storage import Storage

    started = time.monotonic()
    pending = promote_passed_snapshots(spark, settings, reached)
    for spec in (END_OFFSETS, COMMITS, GROUP_METADATA, GROUP_RECORDS):
        ensure_table(spark, settings, spec)
    ensure_current_table(spark, settings, TABLE)  # a table from before gains the CHECK constraints
    checkpoint = lag_checkpoint(settings)
    if full:
        Storage(spark).delete(checkpoint)
    schema = ", ".join(f"`{name}` {kind}" for name, kind in _STATE_ROW_COLUMNS)
    stream = lag_events(spark, settings).groupBy("cluster_name", "bucket").transformWithStateInPandas(
        TopicReplay(settings.lag), schema, "Append", "None")
    written: list[tuple[int, int, int | None]] = []  # per batch: snapshots, rows, newest snapshot

    def write(batch: DataFrame, batch_id: int) -> None:
        rows = batch.persist()  # evaluated once: the state store's update runs with it
        try:
            if rows.filter(F.col("committed_offset").isNull()).isEmpty():
                kept = rows
            else:
                kept = ended_by_group_tombstones(spark, settings, rows)
            table = with_group_status(kept).select(*TABLE.schema.fieldNames()).persist()
            try:
                stats = table.agg(F.count(F.lit(1)), F.count_distinct("snapshot_id"), F.max("snapshot_id")).first()
                count, snapshots, newest = int(stats[0]), int(stats[1]), stats[2]
                if batch_id == 0:
                    # A new query: the cluster's rows are what it computes from all of silver (a rebuild).
                    (table.write.format("delta").mode("overwrite")
                     .option("replaceWhere", f"cluster_name = '{settings.cluster_name}'")
                     .option("txnAppId", app_id(settings) + ":full").option("txnVersion", str(time.time_ns()))
                     .save(table_path(settings, TABLE)))
                elif count:
                    idempotent_append(table, settings, TABLE, app_id(settings), newest)
                written.append((snapshots, count, newest))
            finally:
                table.unpersist()
        finally:
            rows.unpersist()

    run_to_available(stream, checkpoint, "consumer-lag", write)
    newest_ids = [newest for _, _, newest in written if newest is not None]
    return LagRefreshReport(sum(s for s, _, _ in written), sum(r for _, r, _ in written),
                            time.monotonic() - started, max(newest_ids) if newest_ids else None, pending)


def latest_status(spark: SparkSession, settings: Settings, group: str | None = None) -> list[dict[str, Any]]:
    """Per (group, topic, partition), its row at the newest snapshot that has one, for printing.

    Only rows at their partition's newest computed snapshot count: a group whose lag ended (deleted,
    see the module docstring) has no row there and is not shown with its last lag from before.
    Snapshots of different topics are taken apart (``snapshot-end-offsets --topics``), hence per
    partition.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from pipelines.delta_tables import read_table

    cluster = F.col("cluster_name") == settings.cluster_name
    table = read_table(spark, settings, TABLE).filter(cluster)
    computed = table.agg(F.max("snapshot_id")).first()[0]  # the refresh wrote the snapshots up to here
    if computed is None:
        return []
    if group is not None:
        table = table.filter(F.col("group") == group)
    newest_per_partition = read_table(spark, settings, END_OFFSETS).filter(
        cluster & (F.col("snapshot_id") <= computed)).groupBy("topic", "partition").agg(
        F.max("snapshot_id").alias("snapshot_id"))
    table = table.join(newest_per_partition, ["topic", "partition", "snapshot_id"], "left_semi")
    newest = Window.partitionBy("group").orderBy(F.col("snapshot_id").desc())
    rows = (table.withColumn("_rank", F.dense_rank().over(newest)).filter("_rank = 1").drop("_rank")
            .orderBy("group", "topic", "partition").collect())
    return [row.asDict() for row in rows]
