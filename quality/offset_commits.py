"""Expectations on silver.offset_commits: decoded commits are coherent, timely and move forward."""

from __future__ import annotations

from quality.suite import Rule, Scope, Suite, unexpected_rows
from schemas import consumer_group_records, group_metadata, offset_commits

TABLE = offset_commits.TABLE.name

TOMBSTONES_ARE_COHERENT = Rule(
    "tombstones_and_commits_are_coherent", "critical",
    "A tombstone (null value: OffsetDelete, expiry, group deletion) has no offset, and a live commit has an "
    "offset and a commit timestamp (every OffsetCommitValue version carries both). Anything else is a decoder bug.",
    unexpected_rows("""
        SELECT cluster_name, source_topic, source_partition, source_offset, `group`, topic, `partition`, offset,
               commit_timestamp, is_tombstone, value_version
        FROM {batch}
        WHERE (is_tombstone AND offset IS NOT NULL)
           OR (NOT is_tombstone AND (offset IS NULL OR commit_timestamp IS NULL))"""),
    scope=Scope.ROW,
)

OFFSETS_ARE_NON_NEGATIVE = Rule(
    "committed_offsets_are_non_negative", "warning",
    "Clients commit the next offset to read, never a negative one (the Java client refuses them); a "
    "negative offset is a broken client or tool, and it makes lag meaningless for that partition.",
    unexpected_rows("""
        SELECT cluster_name, source_partition, source_offset, `group`, topic, `partition`, offset, commit_timestamp
        FROM {batch} WHERE offset < 0"""),
    scope=Scope.ROW,
)

TIMESTAMPS_WITHIN_BOUNDS = Rule(
    "timestamps_are_within_bounds", "critical",
    "Record and commit timestamps come from the broker's clock: before quality.earliest_timestamp or more "
    "than quality.future_slack_seconds ahead of now they are a decoding error or a broken clock, and every "
    "time-ordered gold table (rates, lag, SCD2 intervals) would be wrong.",
    unexpected_rows("""
        SELECT cluster_name, source_partition, source_offset, `group`, topic, `partition`, record_timestamp,
               commit_timestamp
        FROM {batch}
        WHERE record_timestamp IS NULL
           OR record_timestamp < TIMESTAMP '$earliest_timestamp'
           OR record_timestamp > current_timestamp() + INTERVAL $future_slack_seconds SECONDS
           OR commit_timestamp < TIMESTAMP '$earliest_timestamp'
           OR commit_timestamp > current_timestamp() + INTERVAL $future_slack_seconds SECONDS"""),
    scope=Scope.ROW,
)

COMMIT_TIME_NEAR_RECORD_TIME = Rule(
    "commit_time_is_near_record_time", "warning",
    "The coordinator stamps a commit when it handles the request and appends the record right away, so "
    "commit_timestamp and the record's append time are moments apart; far apart means a client-supplied "
    "timestamp (OffsetCommit v1) or a clock jump.",
    unexpected_rows("""
        SELECT cluster_name, source_partition, source_offset, `group`, topic, `partition`, record_timestamp,
               commit_timestamp
        FROM {batch}
        WHERE NOT is_tombstone
          AND abs(unix_millis(commit_timestamp) - unix_millis(record_timestamp)) > $commit_record_slack_seconds * 1000
        """),
    scope=Scope.ROW,
)

# "A reset is recorded", precisely. A group's commits and its group records share one
# __consumer_offsets partition, so append order (source_offset) orders them. A lower offset after a
# higher one for the same (group, topic, partition) is legitimate when, between the two records:
#   * the offset was deleted: a tombstone of the key (OffsetDelete, expiry, group deletion);
#   * the group changed generation: any GroupMetadata record (classic) or ConsumerGroupMetadata
#     record (KIP-848 group epoch), tombstones included. Admin resets (kafka-consumer-groups
#     --reset-offsets, AlterConsumerGroupOffsets) are accepted only while the group is Empty
#     (ClassicGroup.validateOffsetCommit / OffsetMetadataManager), and a group with members becomes
#     Empty only through a recorded generation;
# and it is not checked when the later commit was made while the classic group was Empty (its last
# record has no members, or is a tombstone: resets happen there, possibly several in a row), or when
# the group has no group record before it (a group used only to store offsets, e.g. by assign()
# consumers or tools, has no generations). Known limit: two successive resets moving an *Empty
# KIP-848 group's* offset backwards are flagged, since its metadata record does not say it is Empty.
OFFSETS_NEVER_DECREASE = Rule(
    "offsets_never_decrease_within_a_generation", "critical",
    "Within one generation a partition has one owner, which commits what it has processed: the offset only "
    "moves forward. A decrease without a recorded reset (offset tombstone, new generation, or an Empty "
    "group) is a consumer rewinding (Burrow's REWIND) or group records missing from silver.",
    unexpected_rows("""
        WITH events AS (
            SELECT cluster_name, source_topic, source_partition, source_offset, `group`, topic, `partition`, offset,
                   is_tombstone, 'commit' AS kind, CAST(NULL AS BOOLEAN) AS empty_or_gone
            FROM {batch}
            UNION ALL
            SELECT cluster_name, source_topic, source_partition, source_offset, `group`, NULL, NULL, NULL,
                   NULL, 'group', is_tombstone OR coalesce(member_count, 0) = 0
            FROM silver_group_metadata
            UNION ALL
            SELECT cluster_name, source_topic, source_partition, source_offset, group_id, NULL, NULL, NULL,
                   NULL, 'group', is_tombstone
            FROM silver_consumer_group_records WHERE type = 'consumer_group_metadata'
        ),
        positioned AS (
            SELECT *,
                   count_if(kind = 'group') OVER in_group AS group_records_so_far,
                   last_value(empty_or_gone, true) OVER in_group AS group_empty_or_gone
            FROM events
            WINDOW in_group AS (PARTITION BY cluster_name, source_topic, `group`
                                ORDER BY source_partition, source_offset
                                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
        ),
        commits AS (
            SELECT *,
                   lag(offset) OVER per_key AS previous_offset,
                   lag(is_tombstone) OVER per_key AS previous_is_tombstone,
                   lag(source_offset) OVER per_key AS previous_source_offset,
                   lag(group_records_so_far) OVER per_key AS previous_group_records
            FROM positioned WHERE kind = 'commit'
            WINDOW per_key AS (PARTITION BY cluster_name, source_topic, `group`, topic, `partition`
                               ORDER BY source_partition, source_offset)
        )
        SELECT cluster_name, source_topic, source_partition, `group`, topic, `partition`,
               previous_source_offset, previous_offset, source_offset, offset
        FROM commits
        WHERE NOT is_tombstone AND NOT previous_is_tombstone AND offset < previous_offset
          AND group_records_so_far > 0
          AND group_records_so_far = previous_group_records
          AND NOT coalesce(group_empty_or_gone, false)"""),
    needs=(group_metadata.TABLE.name, consumer_group_records.TABLE.name),
    scope=Scope.GROUP,
)

SUITE = Suite("offset_commits", TABLE, (
    TOMBSTONES_ARE_COHERENT, OFFSETS_ARE_NON_NEGATIVE, TIMESTAMPS_WITHIN_BOUNDS, COMMIT_TIME_NEAR_RECORD_TIME,
    OFFSETS_NEVER_DECREASE,
))
