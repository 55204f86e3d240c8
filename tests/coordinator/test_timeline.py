"""The timeline's tables: documented columns, and consistency with the records and with SCD2 rules."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from coordinator import simulate
from decoders import decode_record

SCENARIOS = sorted((Path(__file__).resolve().parents[2] / "conf" / "scenarios").glob("*.yaml"))

COLUMNS = {
    "group_generations": [
        "group",
        "generation",
        "protocol_type",
        "protocol",
        "leader",
        "member_count",
        "started_at",
        "ended_at",
        "end_reason",
    ],
    "group_membership": [
        "group",
        "member_id",
        "group_instance_id",
        "client_id",
        "client_host",
        "session_timeout",
        "rebalance_timeout",
        "valid_from",
        "valid_to",
        "first_generation",
        "last_generation",
    ],
    "partition_assignments": [
        "group",
        "topic",
        "partition",
        "member_id",
        "client_id",
        "valid_from",
        "valid_to",
        "generation",
    ],
    "group_state_history": ["group", "state", "at"],
    "committed_offsets": ["group", "topic", "partition", "offset", "leader_epoch", "metadata", "commit_timestamp"],
    # KIP-848 groups (coordinator/consumer_group.py)
    "consumer_group_generations": [
        "group", "generation", "protocol", "member_count", "started_at", "stable_at", "ended_at", "end_reason",
    ],
    "consumer_group_membership": [
        "group", "member_id", "group_instance_id", "client_id", "client_host", "rebalance_timeout_ms",
        "subscribed_topics", "subscribed_topic_regex", "server_assignor", "valid_from", "valid_to",
        "first_generation", "last_generation", "first_member_epoch", "last_member_epoch",
    ],
    "consumer_group_partition_assignments": [
        "group", "member_id", "client_id", "assignment_kind", "generation", "topic_id", "topic", "partition",
        "valid_from", "valid_to",
    ],
    "consumer_group_state_history": ["group", "state", "at", "until", "generation", "assignment_epoch"],
    "consumer_group_rebalances": [
        "group", "from_generation", "to_generation", "started_at", "last_stable_at", "join_completed_at",
        "stable_at", "members_before", "members_after", "members_joined", "members_left", "members_kept",
        "partitions_moved", "partitions_kept", "causes",
    ],
}


@pytest.fixture(scope="module", params=SCENARIOS, ids=lambda p: p.stem)
def result(request):  # noqa: ANN001, ANN201
    return simulate(request.param)


def test_tables_have_exactly_the_documented_columns(result) -> None:  # noqa: ANN001
    assert set(result.tables) == set(COLUMNS)
    for name, rows in result.tables.items():
        for row in rows:
            assert list(row) == COLUMNS[name], name


def test_no_partition_has_two_owners_at_the_same_time(result) -> None:  # noqa: ANN001
    spans = defaultdict(list)
    for row in result.tables["partition_assignments"]:
        assert row["valid_to"] is None or row["valid_from"] <= row["valid_to"]
        spans[(row["group"], row["topic"], row["partition"])].append((row["valid_from"], row["valid_to"] or 2**62))
    for key, intervals in spans.items():
        intervals.sort()
        for (_, end), (start, _) in zip(intervals, intervals[1:], strict=False):
            assert end <= start, key


def test_membership_rows_are_ordered_intervals_within_known_generations(result) -> None:  # noqa: ANN001
    generations = {(r["group"], r["generation"]) for r in result.tables["group_generations"]}
    for row in result.tables["group_membership"]:
        assert row["valid_to"] is None or row["valid_from"] <= row["valid_to"]
        if row["first_generation"] is not None:
            assert (row["group"], row["first_generation"]) in generations
            assert row["first_generation"] <= row["last_generation"]


def test_generation_start_times_equal_the_state_timestamp_persisted_in_their_first_record(result) -> None:  # noqa: ANN001
    first_record = {}
    for record in result.records:
        rec = decode_record(record.key, record.value)
        if rec.type == "group_metadata" and rec.value is not None:
            first_record.setdefault((rec.key["group"], rec.value["generation"]), rec.value["current_state_timestamp"])
    for row in result.tables["group_generations"]:
        key = (row["group"], row["generation"])
        if key in first_record:
            assert first_record[key] == row["started_at"], key


def test_committed_offsets_are_the_offset_commit_records(result) -> None:  # noqa: ANN001
    from_records = []
    for record in result.records:
        rec = decode_record(record.key, record.value)
        if rec.type == "offset_commit" and rec.value is not None:
            epoch = rec.value.get("leader_epoch", -1)  # OffsetCommitValue v1 has no leader epoch
            from_records.append(
                (
                    rec.key["group"],
                    rec.key["topic"],
                    rec.key["partition"],
                    rec.value["offset"],
                    None if epoch == -1 else epoch,
                    rec.value["metadata"],
                    rec.value["commit_timestamp"],
                )
            )
    table = [tuple(r.values()) for r in result.tables["committed_offsets"]]
    assert sorted(table, key=repr) == sorted(from_records, key=repr)
    for group in {r[0] for r in from_records}:  # per group, rows keep the log's order
        assert [r for r in table if r[0] == group] == [r for r in from_records if r[0] == group]


def test_state_history_starts_empty_and_only_makes_legal_moves(result) -> None:  # noqa: ANN001
    from coordinator.group import GroupState

    by_group = defaultdict(list)
    for row in result.tables["group_state_history"]:
        by_group[row["group"]].append(GroupState(row["state"]))
    for states in by_group.values():
        assert states[0] is GroupState.EMPTY
        for previous, current in zip(states, states[1:], strict=False):
            assert previous in current.valid_previous_states or (
                previous is GroupState.DEAD and current is GroupState.EMPTY
            )
