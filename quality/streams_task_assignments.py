"""Expectations on gold.streams_task_assignments: one member per active task at a time."""

from __future__ import annotations

from pipelines.gold import streams_task_assignments
from quality.suite import Rule, Scope, Suite, unexpected_rows

TABLE = streams_task_assignments.TABLE.name

# Held = owned ('current') or still to give up ('pending_revocation'); targets are wishes, not holdings. Member
# epochs differ between the giver and the taker, so rows are compared by time, across epochs.
ONE_HOLDER_PER_ACTIVE_TASK = Rule(
    "no_active_task_held_by_two_members_at_once", "critical",
    "The coordinator gives a streams member an active task only once its previous holder released it "
    "(CurrentAssignmentBuilder: the taker waits in UNRELEASED_TASKS), so two members never process one task's "
    "partitions at once. Two members holding the same active task at overlapping times is a broken "
    "assignment or wrong gold.",
    unexpected_rows("""
        SELECT a.cluster_name, a.`group`, a.subtopology_id, a.`partition`, a.member_id, a.generation,
               a.valid_from, a.valid_to, b.member_id AS other_member_id, b.generation AS other_generation,
               b.valid_from AS other_valid_from, b.valid_to AS other_valid_to
        FROM {batch} a JOIN {batch} b
          ON a.cluster_name = b.cluster_name AND a.`group` = b.`group` AND a.subtopology_id = b.subtopology_id
         AND a.`partition` = b.`partition` AND a.member_id < b.member_id
        WHERE a.task_kind = 'active' AND b.task_kind = 'active'
          AND a.assignment_kind IN ('current', 'pending_revocation')
          AND b.assignment_kind IN ('current', 'pending_revocation')
          AND a.valid_from < coalesce(b.valid_to, TIMESTAMP '9999-12-31 00:00:00')
          AND b.valid_from < coalesce(a.valid_to, TIMESTAMP '9999-12-31 00:00:00')"""),
    scope=Scope.GROUP,
)

INTERVALS_ARE_ORDERED = Rule(
    "task_assignments_end_after_they_start", "critical",
    "A task assignment is valid from the record that stored it until the first later record without it, "
    "so valid_to is never before valid_from.",
    unexpected_rows("""
        SELECT cluster_name, `group`, generation, member_id, task_kind, subtopology_id, `partition`, valid_from,
               valid_to
        FROM {batch} WHERE valid_to < valid_from"""),
    scope=Scope.ROW,
)

SUITE = Suite("streams_task_assignments", TABLE, (ONE_HOLDER_PER_ACTIVE_TASK, INTERVALS_ARE_ORDERED))
