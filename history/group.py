"""A group's rows from all of its records, whatever protocol wrote them: the one entry point of the replay.

A group id can move between the protocols (KIP-848's online upgrade and downgrade convert a classic group into a
consumer group and back, ``GroupMetadataManager.convertToConsumerGroup``), so one group can have rows of both
kinds; each protocol's records go to its own replay, and the storm flags are counted over the rebalances of all.
Share groups (KIP-932) and streams groups (KIP-1071) cannot change type, but take the same path.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from history import KINDS, REBALANCES, classic, consumer, share, streams


@dataclass(frozen=True)
class StormRule:
    """A rebalance is part of a storm when the group completed at least ``rebalances`` rebalances (itself
    included) within ``window_minutes`` up to it (``gold.storm_rebalances``, ``gold.storm_window_minutes``)."""

    rebalances: int = 5
    window_minutes: int = 10


@dataclass
class GroupRows:
    """Every row of one group, per kind (``history.KINDS``)."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {kind: [] for kind in KINDS})


def group_rows(classic_records: Iterable[classic.GroupMetadataRecord] = (),
               commits: Iterable[classic.Commit] = (),
               consumer_records: Iterable[consumer.GroupRecord] = (),
               storm: StormRule = StormRule(),
               share_records: Iterable[consumer.GroupRecord] = (),
               streams_records: Iterable[consumer.GroupRecord] = ()) -> GroupRows:
    """One group's rows: its GroupMetadata records with its offset commits (the classic protocol's evidence of when
    members were last at work), its KIP-848 records, its share-group and its streams-group records, each protocol
    replayed on its own, in log order."""
    out = GroupRows()
    classic_records, consumer_records = list(classic_records), list(consumer_records)
    if classic_records:
        for kind, rows in classic.replay(classic_records, commits).items():
            out.rows[kind].extend(rows)
    if consumer_records:
        history = consumer.derive(consumer_records)
        for kind, rows in consumer.rows_of(history).items():
            out.rows[kind].extend(rows)
    share_records, streams_records = list(share_records), list(streams_records)
    if share_records:
        for kind, rows in share.replay(share_records).items():
            out.rows[kind].extend(rows)
    if streams_records:
        for kind, rows in streams.replay(streams_records).items():
            out.rows[kind].extend(rows)
    flag_storms(out.rows[REBALANCES], storm)
    return out


def flag_storms(events: list[dict[str, Any]], storm: StormRule) -> None:
    """Set ``rebalances_in_window`` (rebalances completed in the window of ``storm.window_minutes`` ending at this
    one's ``stable_at``, itself and any at the same moment included) and ``is_storm`` on every rebalance; null on
    static restarts, which are no rebalance."""
    window_ms = storm.window_minutes * 60_000
    times = sorted(e["stable_at"] for e in events if e["event_type"] == "rebalance")
    for e in events:
        if e["event_type"] != "rebalance":
            e["rebalances_in_window"] = e["is_storm"] = None
            continue
        count = bisect_right(times, e["stable_at"]) - bisect_left(times, e["stable_at"] - window_ms + 1)
        e["rebalances_in_window"], e["is_storm"] = count, count >= storm.rebalances
