"""Expectations on gold.committed_offsets: one current offset per group, topic and partition."""

from __future__ import annotations

from pipelines.gold import committed_offsets
from quality.suite import Rule, Scope, Suite, built_in

TABLE = committed_offsets.TABLE.name

ONE_ROW_PER_KEY = Rule(
    "one_row_per_group_topic_partition", "critical",
    "A group has one committed offset per partition; the MERGE keys on (cluster, group, topic, partition), "
    "so a duplicate means two refreshes raced or the key changed.",
    built_in("ExpectCompoundColumnsToBeUnique", column_list=list(committed_offsets.TABLE.key)),
    scope=Scope.GROUP,
)

OFFSETS_ARE_NON_NEGATIVE = Rule(
    "committed_offsets_are_non_negative", "warning",
    "Clients commit the next offset to read, never a negative one; lag is meaningless for such a partition.",
    built_in("ExpectColumnValuesToBeBetween", column="offset", min_value=0),
    scope=Scope.ROW,
)

SUITE = Suite("committed_offsets", TABLE, (ONE_ROW_PER_KEY, OFFSETS_ARE_NON_NEGATIVE))
