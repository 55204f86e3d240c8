"""history/group.py: one group's records of both protocols in, its rows out, storms counted over both.

A rebalance is part of a storm when the group completed at least ``StormRule.rebalances`` rebalances within
``window_minutes`` up to it, itself included (the ``gold.storm_*`` settings' documented meaning).
"""

from __future__ import annotations

from history import ASSIGNMENTS, GENERATIONS, REBALANCES
from history.consumer import (
    CURRENT_ASSIGNMENT,
    GROUP_METADATA,
    MEMBER_METADATA,
    PARTITION_METADATA,
    STABLE_MEMBER,
    CurrentAssignment,
    GroupRecord,
    MemberInfo,
)
from history.group import StormRule, flag_storms, group_rows
from tests.history.classic_records import ms, record

MINUTE = 60


def event(minute: float, event_type: str = "rebalance") -> dict:  # type: ignore[type-arg]
    return {"event_type": event_type, "stable_at": ms(minute * MINUTE)}


def test_a_rebalance_is_a_storm_once_the_window_up_to_it_holds_enough_rebalances() -> None:
    events = [event(0), event(4), event(8), event(10), event(10, "static_member_restart")]
    flag_storms(events, StormRule(rebalances=3, window_minutes=10))
    assert [(e["rebalances_in_window"], e["is_storm"]) for e in events] == [
        (1, False), (2, False), (3, True),
        # 10 minutes after the first, the window (10 minutes up to this one) no longer holds it
        (3, True),
        (None, None),  # a static restart is no rebalance: neither counted nor flagged
    ]


def test_rebalances_at_the_same_moment_count_each_other() -> None:
    events = [event(1), event(1)]
    flag_storms(events, StormRule(rebalances=2, window_minutes=10))
    assert [e["rebalances_in_window"] for e in events] == [2, 2]


def test_a_group_id_with_records_of_both_protocols_has_rows_of_both_and_one_storm_count() -> None:
    # a classic group rebalances once (generation 1 -> 2), is then upgraded: its KIP-848 epoch 1 settles Empty
    classic_records = [record(0, 1, 1, 0, [("a", None, "t", [0])]), record(1, 2, 31, 30, [("a", None, "t", [0]),
                                                                                          ("b", None, "t", [])])]
    consumer_records = [GroupRecord(ms(60), (0, 2), MEMBER_METADATA, member_id="k", is_tombstone=True),
                        GroupRecord(ms(60), (0, 3), GROUP_METADATA, epoch=1)]
    found = group_rows(classic_records, (), consumer_records, StormRule(rebalances=2, window_minutes=10))
    assert sorted((r["group_type"], r["generation"]) for r in found.rows[GENERATIONS]) == [
        ("classic", 1), ("classic", 2), ("consumer", 1)]
    assert [(r["group_type"], r["rebalances_in_window"], r["is_storm"]) for r in found.rows[REBALANCES]] == [
        ("classic", 1, False), ("consumer", 2, True)]


def test_an_assignment_is_named_by_the_groups_own_records_and_an_id_they_do_not_name_stays_unnamed() -> None:
    names = GroupRecord(ms(0), (0, 0), PARTITION_METADATA, topic_names=(("id-1", "orders"),))
    member = GroupRecord(ms(0), (0, 1), MEMBER_METADATA, member_id="k", member=MemberInfo(client_id="k"))
    owns = GroupRecord(ms(0), (0, 2), CURRENT_ASSIGNMENT, member_id="k", current=CurrentAssignment(
        member_epoch=1, previous_member_epoch=0, state=STABLE_MEMBER, assigned=frozenset({("id-1", 0), ("id-2", 0)}),
        pending_revocation=frozenset()))
    found = group_rows(consumer_records=[GroupRecord(ms(0), (0, 3), GROUP_METADATA, epoch=1), names, member, owns])
    assert sorted((r["topic_id"], r["topic"]) for r in found.rows[ASSIGNMENTS]) == [("id-1", "orders"), ("id-2", None)]
