"""Expectations across tables: the gold tables agree with each other and with the silver they came from.

Gold is compared with silver *as gold last saw it*: the silver versions recorded in gold's refresh
commits (``userMetadata``; views ``<silver view>_as_of_gold``), so an ingest that ran after the last gold
refresh is not a disagreement.
"""

from __future__ import annotations

from pipelines.gold import (
    committed_offsets,
    group_generations,
    offset_commit_rate,
    partition_assignments,
    rebalance_events,
)
from quality.suite import Rule, Scope, Suite, as_of_gold, unexpected_rows
from schemas import offset_commits

ASSIGNMENTS_IN_RECORDED_GENERATIONS = Rule(
    "assignments_belong_to_recorded_generations", "critical",
    "Assignments and generations are both derived from the same GroupMetadata records: every classic "
    "assignment's generation must be a row of gold.group_generations.",
    unexpected_rows("""
        SELECT a.cluster_name, a.`group`, a.generation, count(*) AS assignment_rows
        FROM {batch} a
        LEFT ANTI JOIN gold_group_generations g
          ON a.cluster_name = g.cluster_name AND a.`group` = g.`group` AND a.generation = g.generation
        WHERE a.group_type = 'classic'
        GROUP BY a.cluster_name, a.`group`, a.generation"""),
    table=partition_assignments.TABLE.name, needs=(group_generations.TABLE.name,),
    scope=Scope.GROUP,
)

REBALANCES_BETWEEN_RECORDED_GENERATIONS = Rule(
    "rebalances_connect_recorded_generations", "critical",
    "A rebalance event goes from one recorded generation to another: both ends must be rows of "
    "gold.group_generations.",
    unexpected_rows("""
        SELECT e.cluster_name, e.`group`, e.event_type, e.from_generation, e.to_generation, e.stable_at
        FROM {batch} e
        WHERE e.group_type = 'classic' AND (
              NOT EXISTS (SELECT 1 FROM gold_group_generations g WHERE g.cluster_name = e.cluster_name
                          AND g.`group` = e.`group` AND g.generation = e.from_generation)
           OR NOT EXISTS (SELECT 1 FROM gold_group_generations g WHERE g.cluster_name = e.cluster_name
                          AND g.`group` = e.`group` AND g.generation = e.to_generation))"""),
    table=rebalance_events.TABLE.name, needs=(group_generations.TABLE.name,),
    scope=Scope.GROUP,
)

COMMITTED_OFFSETS_MATCH_SILVER = Rule(
    "committed_offsets_are_the_latest_silver_commits", "critical",
    "gold.committed_offsets is the last live commit per key of silver.offset_commits (tombstones delete): "
    "an incremental refresh that missed or misapplied a commit shows here as a differing offset or a "
    "missing or extra row.",
    unexpected_rows("""
        WITH latest AS (
            SELECT * FROM (
                SELECT cluster_name, `group`, topic, `partition`, offset, is_tombstone,
                       row_number() OVER (PARTITION BY cluster_name, `group`, topic, `partition`
                                          ORDER BY record_timestamp DESC, source_partition DESC,
                                                   source_offset DESC) AS rank
                FROM silver_offset_commits_as_of_gold)
            WHERE rank = 1 AND NOT is_tombstone)
        SELECT coalesce(g.cluster_name, s.cluster_name) AS cluster_name, coalesce(g.`group`, s.`group`) AS `group`,
               coalesce(g.topic, s.topic) AS topic, coalesce(g.`partition`, s.`partition`) AS `partition`,
               g.offset AS gold_offset, s.offset AS silver_offset
        FROM {batch} g FULL OUTER JOIN latest s
          ON g.cluster_name = s.cluster_name AND g.`group` = s.`group` AND g.topic = s.topic
         AND g.`partition` = s.`partition`
        WHERE g.offset IS NULL OR s.offset IS NULL OR g.offset != s.offset"""),
    table=committed_offsets.TABLE.name, needs=(as_of_gold(offset_commits.TABLE.name),),
    scope=Scope.GROUP,
)

COMMIT_RATE_COUNTS_EVERY_COMMIT = Rule(
    "commit_rate_counts_every_silver_commit", "critical",
    "gold.offset_commit_rate counts every live commit record once, in the minute of its commit time: per "
    "group, its counts add up to the group's live commits in silver.",
    unexpected_rows("""
        WITH silver AS (
            SELECT cluster_name, `group`, count(*) AS silver_commits
            FROM silver_offset_commits_as_of_gold WHERE NOT is_tombstone GROUP BY cluster_name, `group`),
        gold AS (
            SELECT cluster_name, `group`, sum(commit_records) AS gold_commits
            FROM {batch} GROUP BY cluster_name, `group`)
        SELECT coalesce(g.cluster_name, s.cluster_name) AS cluster_name, coalesce(g.`group`, s.`group`) AS `group`,
               g.gold_commits, s.silver_commits
        FROM gold g FULL OUTER JOIN silver s ON g.cluster_name = s.cluster_name AND g.`group` = s.`group`
        WHERE coalesce(g.gold_commits, 0) != coalesce(s.silver_commits, 0)"""),
    table=offset_commit_rate.TABLE.name, needs=(as_of_gold(offset_commits.TABLE.name),),
    scope=Scope.GROUP,
)

SUITE = Suite("cross_table", group_generations.TABLE.name, (
    ASSIGNMENTS_IN_RECORDED_GENERATIONS, REBALANCES_BETWEEN_RECORDED_GENERATIONS, COMMITTED_OFFSETS_MATCH_SILVER,
    COMMIT_RATE_COUNTS_EVERY_COMMIT,
))
