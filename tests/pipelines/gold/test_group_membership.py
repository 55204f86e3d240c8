"""pipelines/gold/group_membership.py on small hand-built silver rows: each member's stay in a classic group.

As the table's documentation promises (pipelines/gold/group_membership.py): a stay starts at the first record
listing the member -- its generation's start (currentStateTimestamp), or a static member swap's record
time -- and ends at the first later record without it (the next generation's start, a swap, Empty),
null while it is still listed; the member's settings are those of its last record.
"""

from __future__ import annotations

import pytest

from pipelines.gold.group_history import member_sequence, record_sequence
from pipelines.gold.group_membership import group_membership
from tests.pipelines.gold.classic_history import seconds, silver_frames

pytestmark = pytest.mark.spark

SHORT = {"session_timeout_ms": 10_000, "rebalance_timeout_ms": 60_000, "client_host": "/10.0.0.1",
         "subscribed_topics": ["t"]}
LONG = {**SHORT, "session_timeout_ms": 45_000, "client_host": "/10.0.0.2", "subscribed_topics": ["t", "v"]}

# (group, offset, generation, append time, currentStateTimestamp, members: (member id, instance id, topic,
# partitions, other columns))
RECORDS = [
    ("g", 0, 1, 2, 1, [("a", None, "t", [0, 1], SHORT), ("b1", "s", "t", [2], SHORT), ("c", None, "t", [], SHORT)]),
    ("g", 1, 1, 5, 1, [("a", None, "t", [0, 1], SHORT), ("b2", "s", "t", [2], SHORT)]),  # s swapped b1 -> b2
    ("g", 2, 2, 12, 10, [("a", None, "t", [0, 1, 2], LONG)]),  # a restarted with other settings, same id
    ("g", 3, 3, 20, 19, []),  # Empty
    ("h", 4, 7, 3, 2, [("z", None, "u", [5], SHORT)]),  # another group, z still in it
]


@pytest.fixture(scope="module")
def stays(spark):  # type: ignore[no-untyped-def]
    """(group, member) -> the member's row, its times in seconds after T0."""
    metadata, members = silver_frames(spark, RECORDS)
    rows = group_membership(member_sequence(record_sequence(metadata), members)).collect()
    return {(r["group"], r["member_id"]): {**r.asDict(), "valid_from": seconds(r["valid_from"]),
                                           "valid_to": seconds(r["valid_to"])} for r in rows}


def test_a_member_listed_by_several_generations_has_one_stay_from_its_first_generations_start(stays) -> None:  # type: ignore[no-untyped-def]
    a = stays[("g", "a")]
    assert (a["valid_from"], a["valid_to"], a["first_generation"], a["last_generation"]) == (1, 19, 1, 2)


def test_a_static_member_swap_ends_the_old_id_and_starts_the_new_one_at_the_swap_record(stays) -> None:  # type: ignore[no-untyped-def]
    assert (stays[("g", "b1")]["valid_from"], stays[("g", "b1")]["valid_to"]) == (1, 5)
    assert (stays[("g", "b2")]["valid_from"], stays[("g", "b2")]["valid_to"]) == (5, 10)
    assert stays[("g", "b1")]["group_instance_id"] == stays[("g", "b2")]["group_instance_id"] == "s"


def test_a_member_without_partitions_is_still_a_member(stays) -> None:  # type: ignore[no-untyped-def]
    assert (stays[("g", "c")]["valid_from"], stays[("g", "c")]["valid_to"]) == (1, 5)


def test_a_member_still_listed_has_no_end(stays) -> None:  # type: ignore[no-untyped-def]
    assert (stays[("h", "z")]["valid_from"], stays[("h", "z")]["valid_to"]) == (2, None)
    assert set(stays) == {("g", "a"), ("g", "b1"), ("g", "b2"), ("g", "c"), ("h", "z")}


def test_the_members_settings_are_those_of_its_last_record(stays) -> None:  # type: ignore[no-untyped-def]
    a = stays[("g", "a")]
    assert (a["session_timeout_ms"], a["client_host"], a["subscribed_topics"]) == (45_000, "/10.0.0.2", ["t", "v"])
    assert (a["group_type"], a["first_member_epoch"], a["rack_id"]) == ("classic", None, None)
