"""history/share.py: share groups (KIP-932) replayed from their records, encoded as a broker writes them.

The sequence follows ``GroupMetadataManager.shareGroupHeartbeat`` and its leave path: a join writes the member's
subscription, the new group epoch, the changed target assignments with the assignment epoch, and the joiner's
current assignment (``ShareGroupAssignmentBuilder`` moves a member straight to its target: no revocation); a
departure or fencing writes the member's three tombstones and the next group epoch, the new target waiting for
the next heartbeat; a deletion the group's tombstones. The expected rows follow from Kafka's rules
(``ShareGroup.maybeUpdateGroupState``: Empty or Stable; a consumer group's reconciliation for when an epoch
settles), worked out by hand in the comments.
"""

from __future__ import annotations

from history import ASSIGNMENTS, GENERATIONS, MEMBERSHIP, REBALANCES, STATES
from history.group import group_rows
from history.share import replay
from pipelines.gold.group_history import share_record_from_row
from tests.history.group_log import Log, captured, silver_rows

T = "aHcoLvlDTvK26y2j6N5kcg"  # share-t's topic id
A, B = "member-a", "member-b"


def parts(*partitions: int) -> list[dict]:
    return [{"topic_id": T, "partitions": list(partitions)}]


def join(log: Log, member: str, epoch: int, targets: dict[str, list[int]]) -> Log:
    log.add("share_group_member_metadata", {"client_id": f"client-{member}", "client_host": "/10.0.0.1",
                                            "subscribed_topic_names": ["share-t"]}, member)
    log.add("share_group_metadata", {"epoch": epoch, "metadata_hash": 7})
    for target_member, partitions in targets.items():
        log.add("share_group_target_assignment_member", {"topic_partitions": parts(*partitions)}, target_member)
    log.add("share_group_target_assignment_metadata", {"assignment_epoch": epoch})
    return current(log, member, epoch, 0, targets[member])


def current(log: Log, member: str, epoch: int, previous: int, partitions: list[int]) -> Log:
    return log.add("share_group_current_member_assignment", {
        "member_epoch": epoch, "previous_member_epoch": previous, "state": 0,
        "assigned_partitions": parts(*partitions)}, member)


def leave(log: Log, member: str, epoch: int) -> Log:
    for record_type in ("share_group_current_member_assignment", "share_group_target_assignment_member",
                        "share_group_member_metadata"):
        log.add(record_type, None, member)
    return log.add("share_group_metadata", {"epoch": epoch, "metadata_hash": 7})


def two_members_then_leave() -> Log:
    log = Log("share-g")
    join(log.write(1000), A, 1, {A: [0, 1, 2, 3]})
    log.write(1100).add("share_group_state_partition_metadata", {"initialized_topics": [
        {"topic_id": T, "topic_name": "share-t", "partitions": [0, 1, 2, 3]}]})
    join(log.write(2000), B, 2, {A: [0, 1], B: [2, 3]})
    current(log.write(2500), A, 2, 1, [0, 1])  # A's next heartbeat: straight to its new target
    leave(log.write(4000), A, 3)
    log.write(4500).add("share_group_target_assignment_member", {"topic_partitions": parts(0, 1, 2, 3)}, B)
    log.add("share_group_target_assignment_metadata", {"assignment_epoch": 3})
    current(log, B, 3, 2, [0, 1, 2, 3])
    leave(log.write(6000), B, 4)  # fenced after its session timeout: the same records as a leave
    log.write(8000).add("share_group_target_assignment_metadata", None).add("share_group_metadata", None)
    return log


def rows_of(log: Log) -> dict[str, list[dict]]:
    return replay(share_record_from_row(r) for r in silver_rows(log.entries))


def test_a_share_group_is_stable_whenever_it_has_members_and_empty_without() -> None:
    states = rows_of(two_members_then_leave())[STATES]
    # ShareGroup.maybeUpdateGroupState: no Assigning or Reconciling, even while B waits for A at epoch 2
    assert [(s["state"], s["at"], s["until"], s["generation"], s["evidence"]) for s in states] == [
        ("Stable", 1000, 2000, 1, "has_members"), ("Stable", 2000, 4000, 2, "has_members"),
        ("Stable", 4000, 6000, 3, "has_members"), ("Empty", 6000, 8000, 4, "no_members"),
        ("Dead", 8000, None, None, "tombstone")]
    assert {s["group_type"] for s in states} == {"share"}


def test_an_epoch_is_stable_at_when_every_member_reached_its_target() -> None:
    generations = rows_of(two_members_then_leave())[GENERATIONS]
    assert [(g["generation"], g["member_count"], g["started_at"], g["stable_at"], g["ended_at"], g["end_reason"])
            for g in generations] == [
        (1, 1, 1000, 1000, 2000, "member_joined"),
        (2, 2, 2000, 2500, 4000, "member_left_or_vanished"),  # A moved to epoch 2 at its heartbeat
        (3, 1, 4000, 4500, 6000, "member_left_or_vanished"),  # the target of epoch 3 waited for B's heartbeat
        (4, 0, 6000, None, 8000, "group_removed")]
    assert {(g["protocol_type"], g["protocol"], g["group_type"]) for g in generations} == {("share", None, "share")}


def test_a_rebalance_per_settled_epoch_counts_the_partitions_that_moved() -> None:
    events = rows_of(two_members_then_leave())[REBALANCES]
    assert [(e["from_generation"], e["to_generation"], e["started_at"], e["stable_at"], e["members_joined"],
             e["members_left"], e["partitions_moved"], e["partitions_kept"], e["likely_cause"]) for e in events] == [
        (0, 1, 1000, 1000, [A], [], 0, 0, "member_joined"),
        (1, 2, 2000, 2500, [B], [], 2, 2, "member_joined"),  # 2 and 3 went from A to B
        (2, 3, 4000, 4500, [], [A], 2, 2, "member_left_or_vanished"),  # A's 0 and 1 went to B
        (3, 4, 6000, 6000, [], [B], 0, 0, "member_left_or_vanished")]
    assert [e["join_completed_at"] for e in events] == [1000, 2000, 4500, None]


def test_share_members_hold_partitions_together_and_never_revoke() -> None:
    rows = rows_of(two_members_then_leave())[ASSIGNMENTS]
    assert {r["assignment_kind"] for r in rows} == {"current", "target"}
    # while A still is at epoch 1 it keeps 2 and 3, which B already reads at epoch 2
    at_2200 = sorted((r["member_id"], r["partition"]) for r in rows if r["assignment_kind"] == "current"
                     and r["valid_from"] <= 2200 and (r["valid_to"] is None or r["valid_to"] > 2200))
    assert at_2200 == [(A, 0), (A, 1), (A, 2), (A, 3), (B, 2), (B, 3)]
    # the topic name comes from the share-partition state's record
    assert {(r["topic"], r["topic_id"], r["group_type"]) for r in rows} == {("share-t", T, "share")}


def test_membership_spans_from_the_member_record_to_its_tombstone() -> None:
    rows = rows_of(two_members_then_leave())[MEMBERSHIP]
    assert [(m["member_id"], m["valid_from"], m["valid_to"], m["first_generation"], m["last_generation"],
             m["first_member_epoch"], m["last_member_epoch"], m["subscribed_topics"]) for m in rows] == [
        (A, 1000, 4000, 1, 2, 1, 2, ["share-t"]), (B, 2000, 6000, 2, 3, 2, 3, ["share-t"])]
    assert {(m["client_id"], m["group_instance_id"], m["server_assignor"]) for m in rows} == {
        (f"client-{A}", None, None), (f"client-{B}", None, None)}


def test_group_rows_takes_share_records_beside_the_other_protocols() -> None:
    records = [share_record_from_row(r) for r in silver_rows(two_members_then_leave().entries)]
    found = group_rows(share_records=records)
    assert len(found.rows[GENERATIONS]) == 4 and len(found.rows[REBALANCES]) == 4
    assert {e["is_storm"] for e in found.rows[REBALANCES]} == {False}  # flagged like every protocol's


def test_a_captured_share_group_replays_to_the_states_the_admin_client_described() -> None:
    found = captured("share_join_leave_crash")
    if found is None:
        import pytest

        pytest.skip("share_join_leave_crash is not captured yet")
    entries, describe = found
    group = describe["group"]
    records = [share_record_from_row(r) for r in silver_rows(entries, group)]
    for step in describe["steps"]:
        upto = [r for r in records if r.position[1] <= step["after_offset"]]
        states = replay(upto)[STATES]
        expected = step["describe"]
        if expected.get("state", "").upper() == "DEAD":
            assert states[-1]["state"] == "Dead", step["step"]
            continue
        assert states[-1]["state"].upper() == expected["state"].upper(), step["step"]
        assert states[-1]["generation"] == expected["group_epoch"], step["step"]
        members = {m["member_id"] for m in replay(upto)[MEMBERSHIP] if m["valid_to"] is None}
        assert members == {m["member_id"] for m in expected["members"]}, step["step"]


def test_a_captured_share_groups_epochs_settle_as_members_reach_them_and_name_their_causes() -> None:
    """share_join_leave_crash (Kafka 4.2.1): a joins, its topic's share-partition state is initialized, b and c join,
    b leaves, c is killed and fenced, a leaves, the group is deleted. Worked out from the records' offsets: an epoch
    settles at the write that brought its last member to it; a departure's epoch is superseded at once by the next
    (5 by 6, 7 by 8) before any member reaches it."""
    found = captured("share_join_leave_crash")
    assert found is not None, "tests/history/captured/share_join_leave_crash.jsonl is missing"
    entries, describe = found
    time_of = {e["offset"]: e["timestamp"] for e in entries}
    rows = replay(share_record_from_row(r) for r in silver_rows(entries, describe["group"]))
    stable_at = {g["generation"]: g["stable_at"] for g in rows[GENERATIONS]}
    assert stable_at == {1: time_of[0], 2: time_of[7], 3: time_of[17], 4: time_of[25], 5: None, 6: time_of[34],
                         7: None, 8: time_of[42], 9: None}
    assert [(e["from_generation"], e["to_generation"], e["likely_cause"]) for e in rows[REBALANCES]] == [
        (0, 1, "member_joined"), (1, 2, "share_partitions_initialized"), (2, 3, "member_joined"),
        (3, 4, "member_joined"), (4, 6, "member_left_or_vanished"), (6, 8, "member_left_or_vanished"),
        (8, 9, "member_left_or_vanished")]
    assert [s["state"] for s in rows[STATES]][-2:] == ["Empty", "Dead"]
    # the topic id's name comes from the group's own share-partition state records
    assert {r["topic"] for r in rows[ASSIGNMENTS]} == {"share-t"}
