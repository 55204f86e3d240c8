"""Expectations on silver.group_members: what each classic member was assigned fits what it asked for."""

from __future__ import annotations

from quality.suite import Rule, Scope, Suite, unexpected_rows
from schemas import group_members

TABLE = group_members.TABLE.name

ASSIGNED_TOPICS_ARE_SUBSCRIBED = Rule(
    "assigned_topics_are_in_the_owners_subscription", "critical",
    "The leader's assignor only hands out partitions of topics in a member's subscription "
    "(AbstractPartitionAssignor; a regex subscription is sent as the topics it matched), and a changed "
    "subscription makes the member rejoin. A topic outside it means a broken assignor or mis-decoded "
    "subscription/assignment bytes. Only members whose consumer-protocol bytes were decoded are checked.",
    unexpected_rows("""
        SELECT cluster_name, source_partition, source_offset, `group`, generation, member_id, subscribed_topics,
               array_except(transform(assigned_partitions, tp -> tp.topic), subscribed_topics) AS unsubscribed
        FROM {batch}
        WHERE NOT undecoded AND subscribed_topics IS NOT NULL AND assigned_partitions IS NOT NULL
          AND size(array_except(transform(assigned_partitions, tp -> tp.topic), subscribed_topics)) > 0"""),
    scope=Scope.ROW,
)

SUITE = Suite("group_members", TABLE, (ASSIGNED_TOPICS_ARE_SUBSCRIBED,))
