"""Expectations on gold.group_generations: a group's generations move forward, one after the other."""

from __future__ import annotations

from pipelines.gold import group_generations
from quality.suite import Rule, Scope, Suite, unexpected_rows

TABLE = group_generations.TABLE.name

GENERATIONS_STRICTLY_INCREASE = Rule(
    "generations_strictly_increase_per_group", "critical",
    "The coordinator increments the generation (KIP-848: the group epoch) at every rebalance and never "
    "reuses one while the group lives; numbering restarts only for a re-created group, which is a new "
    "incarnation. In start order, each generation of an incarnation must be above the previous one. "
    "Compared within one protocol (group_type): when Kafka converts a group between the classic and the "
    "KIP-848 protocol, classic generations and group epochs are separate counters in the records.",
    unexpected_rows("""
        SELECT * FROM (
            SELECT cluster_name, `group`, incarnation, generation, started_at,
                   lag(generation) OVER w AS previous_generation, lag(started_at) OVER w AS previous_started_at
            FROM {batch}
            WINDOW w AS (PARTITION BY cluster_name, `group`, incarnation, coalesce(group_type, 'classic')
                         ORDER BY started_at, generation))
        WHERE generation <= previous_generation"""),
    scope=Scope.GROUP,
)

GENERATIONS_END_AFTER_THEY_START = Rule(
    "generations_end_after_they_start", "critical",
    "A generation ends when the next recorded one starts (or the group is removed), which is after its own "
    "start; an end before the start means records were ordered wrongly.",
    unexpected_rows("""
        SELECT cluster_name, `group`, incarnation, generation, started_at, ended_at
        FROM {batch} WHERE ended_at < started_at"""),
    scope=Scope.ROW,
)

SUITE = Suite("group_generations", TABLE, (GENERATIONS_STRICTLY_INCREASE, GENERATIONS_END_AFTER_THEY_START))
