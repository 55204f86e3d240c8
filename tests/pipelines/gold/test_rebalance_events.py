"""pipelines/gold/rebalance_events.py on small hand-built record summaries: which partitions moved.

Each record is what ``group_history.record_summaries`` gives for one GroupMetadata record: its
place in ``__consumer_offsets``, its members and the partitions each owns (``topic/partition@identity``).
"""

from __future__ import annotations

import datetime as dt

import pytest

from pipelines.gold.rebalance_events import partition_handovers

pytestmark = pytest.mark.spark

SCHEMA = ("cluster_name string, source_topic string, source_partition int, source_offset long, `group` string, "
          "incarnation int, record_timestamp timestamp, member_ids array<string>, owned array<string>")
T0 = dt.datetime(2026, 11, 25, 2, 0)


def records(spark, *owners_per_record: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    """One record per argument (member identity -> partitions of topic t), a second apart, one incarnation."""
    rows = [("c", "__consumer_offsets", 0, offset, "g", 0, T0 + dt.timedelta(seconds=offset),
             sorted(owners), sorted(f"t/{p}@{member}" for member, ps in owners.items() for p in ps))
            for offset, owners in enumerate(owners_per_record)]
    return spark.createDataFrame(rows, SCHEMA)


def handovers(spark, *owners_per_record):  # type: ignore[no-untyped-def]
    """[(moved, kept)] per record, in record order (records with no owned partition count none)."""
    got = {r["source_offset"]: (r["moved"], r["kept"])
           for r in partition_handovers(records(spark, *owners_per_record)).collect()}
    return [got.get(offset, (0, 0)) for offset in range(len(owners_per_record))]


def test_a_cooperative_revocation_moves_nothing_and_its_follow_up_moves_what_was_revoked(spark) -> None:  # type: ignore[no-untyped-def]
    # a owns 0-3; b joins: a revokes 2 and 3 (unowned in that generation), the follow-up gives them to b.
    assert handovers(spark, {"m:a": [0, 1, 2, 3]}, {"m:a": [0, 1], "m:b": []},
                     {"m:a": [0, 1], "m:b": [2, 3]}) == [(0, 0), (0, 2), (2, 2)]


def test_an_eager_rebalance_moves_what_changed_owner_between_two_records(spark) -> None:  # type: ignore[no-untyped-def]
    assert handovers(spark, {"m:a": [0, 1], "m:b": [2, 3]}, {"m:a": [0, 1, 2], "m:c": [3]}) == [(0, 0), (2, 2)]


def test_a_partition_given_back_to_its_last_owner_did_not_move(spark) -> None:  # type: ignore[no-untyped-def]
    assert handovers(spark, {"i:s": [0, 1]}, {"i:s": [0]}, {"i:s": [0, 1]}) == [(0, 0), (0, 1), (0, 2)]


def test_nothing_moves_from_before_the_group_went_empty(spark) -> None:  # type: ignore[no-untyped-def]
    assert handovers(spark, {"m:a": [0, 1]}, {}, {"m:b": [0, 1]}) == [(0, 0), (0, 0), (0, 0)]
