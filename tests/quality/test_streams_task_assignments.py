"""The holder rule of quality/streams_task_assignments.py on hand-built gold rows."""

from __future__ import annotations

import pytest

from pipelines.gold import streams_task_assignments as tasks_table
from quality import streams_task_assignments
from quality.checkpoint import violations
from tests.quality.rows import at, frame

pytestmark = pytest.mark.spark


def holds(group: str, member: str, epoch: int, start: float, end: float | None, kind: str = "active",
          assignment: str = "current", partition: int = 0) -> dict:
    return {"cluster_name": "test", "group": group, "subtopology_id": "0", "partition": partition,
            "task_kind": kind, "member_id": member, "generation": epoch, "assignment_kind": assignment,
            "valid_from": at(start), "valid_to": None if end is None else at(end), "group_type": "streams"}


def test_two_members_holding_one_active_task_at_once_are_reported(spark, base_settings) -> None:  # type: ignore[no-untyped-def]
    rows = [
        # Revoked, then taken at the next epoch: one holder after the other.
        holds("handover", "a", 2, 0, 10, assignment="pending_revocation"), holds("handover", "b", 3, 10, None),
        # The giver still holds it (pending revocation) while the taker already has it: the violation.
        holds("double", "a", 2, 0, 20, assignment="pending_revocation"), holds("double", "b", 3, 5, None),
        # A standby beside the active task, and a target that is only a wish, are fine.
        holds("standby", "a", 2, 0, None), holds("standby", "b", 2, 0, None, kind="standby"),
        holds("wish", "a", 2, 0, None), holds("wish", "b", 3, 0, None, assignment="target"),
    ]
    frames = {streams_task_assignments.TABLE: frame(spark, tasks_table.TABLE, rows)}
    found = violations(spark, streams_task_assignments.ONE_HOLDER_PER_ACTIVE_TASK, streams_task_assignments.TABLE,
                       frames, base_settings).collect()
    assert [(r["group"], r["member_id"], r["other_member_id"]) for r in found] == [("double", "a", "b")]
