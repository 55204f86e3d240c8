"""The ownership rule of quality/partition_assignments.py on hand-built gold rows."""

from __future__ import annotations

import pytest

from pipelines.gold import partition_assignments as assignments_table
from quality import partition_assignments
from quality.checkpoint import violations
from tests.quality.rows import at, frame

pytestmark = pytest.mark.spark


def owner(group: str, member: str, generation: int, start: float, end: float | None, partition: int = 0,
          group_type: str = "classic") -> dict:
    return {"cluster_name": "test", "group": group, "topic": "orders", "partition": partition, "member_id": member,
            "generation": generation, "valid_from": at(start), "valid_to": None if end is None else at(end),
            "group_type": group_type, "assignment_kind": "current"}


def test_two_owners_of_a_partition_at_once_in_one_generation_are_reported(spark, base_settings) -> None:  # type: ignore[no-untyped-def]
    rows = [
        # A static member swapping its member id within the generation: one owner after the other.
        owner("static", "old-id", 3, 0, 10), owner("static", "new-id", 3, 10, None),
        # Two owners at once: the violation.
        owner("double", "a", 5, 0, None), owner("double", "b", 5, 5, 20),
        # Different partitions, or different generations, are fine.
        owner("split", "a", 1, 0, None, partition=0), owner("split", "b", 1, 0, None, partition=1),
        owner("moved", "a", 1, 0, 10), owner("moved", "b", 2, 10, None),
        # A re-created group reaching the same generation number later (another incarnation).
        owner("recreated", "a", 1, 0, 10), owner("recreated", "b", 1, 100, None),
        # KIP-848 rows number by member epoch and are not compared here.
        owner("kip848", "a", 2, 0, None, group_type="consumer"), owner("kip848", "b", 2, 0, None,
                                                                        group_type="consumer"),
    ]
    frames = {partition_assignments.TABLE: frame(spark, assignments_table.TABLE, rows)}
    found = violations(spark, partition_assignments.ONE_OWNER_PER_PARTITION, partition_assignments.TABLE, frames,
                       base_settings).collect()
    assert [(r["group"], r["generation"], r["member_id"], r["other_member_id"]) for r in found] == [
        ("double", 5, "a", "b")]
