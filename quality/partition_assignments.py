"""Expectations on gold.partition_assignments: one owner per partition at a time."""

from __future__ import annotations

from pipelines.gold import partition_assignments
from quality.suite import Rule, Scope, Suite, unexpected_rows

TABLE = partition_assignments.TABLE.name

# Classic rows only (group_type = 'classic'): KIP-848 rows number assignments by member epoch, so
# "one generation" does not group them; their owners are checked by the broker's revocation protocol.
# Static members (KIP-345) swap member ids within a generation: the old id's row ends exactly when
# the new id's row starts, so rows are compared by time, not only by generation.
ONE_OWNER_PER_PARTITION = Rule(
    "no_partition_owned_by_two_members_in_one_generation", "critical",
    "Every assignor gives each partition of a generation to exactly one member (the consumer protocol "
    "requires it: two owners would consume the same messages twice). Two members holding the same "
    "partition in the same generation at overlapping times is a broken assignment or wrong gold.",
    unexpected_rows("""
        SELECT a.cluster_name, a.`group`, a.generation, a.topic, a.`partition`,
               a.member_id, a.valid_from, a.valid_to,
               b.member_id AS other_member_id, b.valid_from AS other_valid_from, b.valid_to AS other_valid_to
        FROM {batch} a JOIN {batch} b
          ON a.cluster_name = b.cluster_name AND a.`group` = b.`group` AND a.generation = b.generation
         AND a.topic = b.topic AND a.`partition` = b.`partition` AND a.member_id < b.member_id
        WHERE a.group_type = 'classic' AND b.group_type = 'classic'
          AND a.valid_from < coalesce(b.valid_to, TIMESTAMP '9999-12-31 00:00:00')
          AND b.valid_from < coalesce(a.valid_to, TIMESTAMP '9999-12-31 00:00:00')"""),
    scope=Scope.GROUP,
)

INTERVALS_ARE_ORDERED = Rule(
    "assignments_end_after_they_start", "critical",
    "An assignment is valid from the record that stored it until the first later record without it, "
    "so valid_to is never before valid_from.",
    unexpected_rows("""
        SELECT cluster_name, `group`, generation, member_id, topic, `partition`, valid_from, valid_to
        FROM {batch} WHERE valid_to < valid_from"""),
    scope=Scope.ROW,
)

SUITE = Suite("partition_assignments", TABLE, (ONE_OWNER_PER_PARTITION, INTERVALS_ARE_ORDERED))
