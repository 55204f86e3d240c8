"""pipelines/gold/partition_assignments.py on small hand-built silver rows: who owned which partition, and when.

The rows go through what the refresh runs before it (``group_history.record_sequence`` and
``member_sequence``), so the times are those the table's documentation promises
(pipelines/gold/partition_assignments.py): ``valid_from`` is the append time of the first record holding the
assignment; ``valid_to`` is the first later record without it -- the next generation's start (its
currentStateTimestamp), a static member's id swap, the group going Empty -- and null while current.
"""

from __future__ import annotations

import pytest

from pipelines.gold.group_history import member_sequence, record_sequence
from pipelines.gold.partition_assignments import partition_assignments
from tests.pipelines.gold.classic_history import seconds, silver_frames

pytestmark = pytest.mark.spark

# (group, offset, generation, append time, currentStateTimestamp, members: (member id, instance id, topic, partitions))
RECORDS = [
    ("g", 0, 1, 2, 1, [("a", None, "t", [0, 1]), ("b1", "s", "t", [2]), ("c", None, "t", [])]),
    ("g", 1, 1, 5, 1, [("a", None, "t", [0, 1]), ("b2", "s", "t", [2])]),  # static member s swapped b1 -> b2
    ("g", 2, 2, 12, 10, [("a", None, "t", [0, 1, 2])]),  # generation 2 formed at 10 s, stored at 12 s
    ("g", 3, 3, 20, 19, []),  # Empty
    ("h", 4, 7, 3, 2, [("z", None, "u", [5])]),  # another group, still current
]


@pytest.fixture(scope="module")
def owners(spark):  # type: ignore[no-untyped-def]
    """(group, generation, member, topic, partition) -> (valid_from, valid_to) in seconds after T0."""
    metadata, members = silver_frames(spark, RECORDS)
    rows = partition_assignments(member_sequence(record_sequence(metadata), members)).collect()
    return {(r["group"], r["generation"], r["member_id"], r["topic"], r["partition"]):
            (seconds(r["valid_from"]), seconds(r["valid_to"])) for r in rows}, rows


def test_an_assignment_runs_from_the_record_that_stored_it_to_the_start_of_the_next_generation(owners) -> None:  # type: ignore[no-untyped-def]
    by_key, _ = owners
    # a kept partitions 0 and 1 through both records of generation 1: one row each, not one per record.
    assert by_key[("g", 1, "a", "t", 0)] == (2, 10)
    assert by_key[("g", 1, "a", "t", 1)] == (2, 10)


def test_a_static_members_id_swap_ends_the_old_ids_rows_and_starts_the_new_ones(owners) -> None:  # type: ignore[no-untyped-def]
    by_key, _ = owners
    assert by_key[("g", 1, "b1", "t", 2)] == (2, 5)
    assert by_key[("g", 1, "b2", "t", 2)] == (5, 10)


def test_the_group_going_empty_ends_the_last_generations_rows(owners) -> None:  # type: ignore[no-untyped-def]
    by_key, _ = owners
    assert {key: span for key, span in by_key.items() if key[:2] == ("g", 2)} == {
        ("g", 2, "a", "t", 0): (12, 19), ("g", 2, "a", "t", 1): (12, 19), ("g", 2, "a", "t", 2): (12, 19)}


def test_a_current_assignment_has_no_end_and_a_member_without_partitions_has_no_row(owners) -> None:  # type: ignore[no-untyped-def]
    by_key, _ = owners
    assert by_key[("h", 7, "z", "u", 5)] == (3, None)
    assert not [key for key in by_key if key[2] == "c"]
    assert len(by_key) == 8  # a x2, b1, b2 (generation 1); a x3 (generation 2); z


def test_classic_rows_carry_the_members_client_and_instance_and_no_topic_id(owners) -> None:  # type: ignore[no-untyped-def]
    _, rows = owners
    [swapped] = [r for r in rows if r["member_id"] == "b2"]
    assert (swapped["client_id"], swapped["group_instance_id"]) == ("client-b2", "s")
    assert {(r["group_type"], r["assignment_kind"], r["topic_id"]) for r in rows} == {("classic", "current", None)}
