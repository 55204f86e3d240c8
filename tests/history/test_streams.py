"""history/streams.py: streams groups (KIP-1071) replayed from their records, encoded as a broker writes them.

The sequence follows ``GroupMetadataManager.streamsGroupHeartbeat``: the first member brings the topology (a
StreamsGroupTopology record) and the group is NotReady until the coordinator validated it (its internal topics
exist: ``ValidatedTopologyEpoch`` in the metadata record, with the new metadata hash); a second process joins and
the assignor moves active tasks to it and gives each process the other's as standbys; the member that gives up
tasks revokes them first (state 2, tasks pending revocation) while the joiner waits for them (state 3); a
departure bumps the epoch before the new target is computed at the next heartbeat; a member with a new topology
epoch brings a new topology. The expected rows follow from ``StreamsGroup.maybeUpdateGroupState`` and
``StreamsGroupMember.isReconciledTo``, worked out by hand in the comments.
"""

from __future__ import annotations

from history import ASSIGNMENTS, GENERATIONS, MEMBERSHIP, REBALANCES, STATES, TASKS, TOPOLOGY
from history.group import group_rows
from history.streams import replay
from pipelines.gold.group_history import streams_record_from_row
from tests.history.group_log import Log, captured, silver_rows

A, B = "member-a", "member-b"
REPARTITION = "streams-g-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition"
CHANGELOG = "streams-g-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog"
ALL = [("0", [0, 1]), ("1", [0, 1])]  # both subtopologies of two partitions: tasks 0_0, 0_1, 1_0, 1_1


def ids(tasks: list[tuple[str, list[int]]]) -> list[dict]:
    return [{"subtopology_id": s, "partitions": p} for s, p in tasks]


def topology(epoch: int, sink: str = REPARTITION) -> dict:
    return {"epoch": epoch, "subtopologies": [
        {"subtopology_id": "0", "source_topics": ["streams-in"], "repartition_sink_topics": [sink]},
        {"subtopology_id": "1", "repartition_source_topics": [{"name": sink, "partitions": 0,
                                                                "replication_factor": -1}],
         "state_changelog_topics": [{"name": CHANGELOG, "partitions": 0, "replication_factor": -1}]}]}


def member(log: Log, member_id: str, topology_epoch: int = 0) -> Log:
    return log.add("streams_group_member_metadata", {
        "client_id": f"client-{member_id}", "client_host": "/10.0.0.1", "rebalance_timeout_ms": 300000,
        "topology_epoch": topology_epoch, "process_id": f"process-{member_id}",
        "user_endpoint": {"host": f"{member_id}.local", "port": 7070}}, member_id)


def group(log: Log, epoch: int, validated: int, metadata_hash: int = 2) -> Log:
    return log.add("streams_group_metadata", {"epoch": epoch, "metadata_hash": metadata_hash,
                                              "validated_topology_epoch": validated})


def target(log: Log, member_id: str, active: list, standby: list = ()) -> Log:  # type: ignore[assignment]
    return log.add("streams_group_target_assignment_member",
                   {"active_tasks": ids(active), "standby_tasks": ids(list(standby))}, member_id)


def current(log: Log, member_id: str, epoch: int, state: int, active: list, standby: list = (),
            revoking: list = ()) -> Log:  # type: ignore[assignment]
    return log.add("streams_group_current_member_assignment", {
        "member_epoch": epoch, "state": state, "active_tasks": ids(active), "standby_tasks": ids(list(standby)),
        "active_tasks_pending_revocation": ids(list(revoking))}, member_id)


def leave(log: Log, member_id: str) -> Log:
    for record_type in ("streams_group_current_member_assignment", "streams_group_target_assignment_member",
                        "streams_group_member_metadata"):
        log.add(record_type, None, member_id)
    return log


def two_processes() -> Log:
    log = Log("streams-g")
    member(log.write(1000), A).add("streams_group_topology", topology(0))
    group(log, 1, validated=-1, metadata_hash=1)  # its internal topics do not exist yet: not validated
    target(log, A, []).add("streams_group_target_assignment_metadata", {"assignment_epoch": 1})
    current(log, A, 1, 1, [])
    # the internal topics were created: validated, and their metadata moved the epoch
    group(log.write(1500), 2, validated=0)
    target(log, A, ALL).add("streams_group_target_assignment_metadata", {"assignment_epoch": 2})
    current(log, A, 2, 1, ALL)
    member(log.write(3000), B)
    group(log, 3, validated=0)
    target(log, A, [("0", [0]), ("1", [0])], [("0", [1]), ("1", [1])])
    target(log, B, [("0", [1]), ("1", [1])], [("0", [0]), ("1", [0])])
    log.add("streams_group_target_assignment_metadata", {"assignment_epoch": 3})
    current(log, B, 3, 3, [], [("0", [0]), ("1", [0])])  # UNRELEASED_TASKS: 0_1 and 1_1 are still A's
    current(log.write(3200), A, 2, 2, [("0", [0]), ("1", [0])], revoking=[("0", [1]), ("1", [1])])
    current(log.write(3400), A, 3, 1, [("0", [0]), ("1", [0])], [("0", [1]), ("1", [1])])
    current(log.write(3600), B, 3, 1, [("0", [1]), ("1", [1])], [("0", [0]), ("1", [0])])
    leave(log.write(5000), B)
    group(log, 4, validated=0)
    target(log.write(5500), A, ALL).add("streams_group_target_assignment_metadata", {"assignment_epoch": 4})
    current(log, A, 4, 1, ALL)
    return log


def upgraded_then_deleted() -> Log:
    log = two_processes()
    member(log.write(7000), A, topology_epoch=1).add("streams_group_topology", topology(1, REPARTITION + "-v2"))
    group(log, 5, validated=1)
    target(log, A, ALL).add("streams_group_target_assignment_metadata", {"assignment_epoch": 5})
    current(log, A, 5, 1, ALL)
    leave(log.write(9000), A)
    group(log, 6, validated=1)
    log.write(10000).add("streams_group_target_assignment_metadata", None)
    log.add("streams_group_topology", None).add("streams_group_metadata", None)
    return log


def rows_of(log: Log) -> dict[str, list[dict]]:
    return replay(streams_record_from_row(r) for r in silver_rows(log.entries))


def test_the_states_follow_topology_validation_and_the_group_assignment_and_member_epochs() -> None:
    states = rows_of(two_processes())[STATES]
    assert [(s["state"], s["at"], s["until"], s["generation"], s["assignment_epoch"], s["evidence"])
            for s in states] == [
        ("NotReady", 1000, 1500, 1, 1, "topology_not_validated"),
        ("Stable", 1500, 3000, 2, 2, "members_reconciled"),
        ("Reconciling", 3000, 3600, 3, 3, "member_not_reconciled"),  # until B got 0_1 and 1_1
        ("Stable", 3600, 5000, 3, 3, "members_reconciled"),
        ("Assigning", 5000, 5500, 4, 3, "group_epoch_above_assignment_epoch"),
        ("Stable", 5500, None, 4, 4, "members_reconciled")]
    assert {s["group_type"] for s in states} == {"streams"}


def test_each_group_epoch_is_a_generation_with_its_cause() -> None:
    generations = rows_of(upgraded_then_deleted())[GENERATIONS]
    assert [(g["generation"], g["member_count"], g["started_at"], g["stable_at"], g["ended_at"], g["end_reason"])
            for g in generations] == [
        (1, 1, 1000, None, 1500, "metadata_changed"),  # the internal topics' creation
        (2, 1, 1500, 1500, 3000, "member_joined"),
        (3, 2, 3000, 3600, 5000, "member_left_or_vanished"),
        (4, 1, 5000, 5500, 7000, "topology_changed"),
        (5, 1, 7000, 7000, 9000, "member_left_or_vanished"),
        (6, 0, 9000, None, 10000, "group_removed")]
    assert {(g["protocol_type"], g["group_type"]) for g in generations} == {("streams", "streams")}


def test_rebalances_count_the_active_tasks_that_moved() -> None:
    events = rows_of(upgraded_then_deleted())[REBALANCES]
    assert [(e["from_generation"], e["to_generation"], e["started_at"], e["stable_at"], e["members_joined"],
             e["members_left"], e["partitions_moved"], e["partitions_kept"], e["likely_cause"]) for e in events] == [
        (0, 2, 1000, 1500, [A], [], 0, 0, "member_joined"),  # NotReady at epoch 1 is no settled epoch
        (2, 3, 3000, 3600, [B], [], 2, 2, "member_joined"),  # 0_1 and 1_1 went to B; standbys not counted
        (3, 4, 5000, 5500, [], [B], 2, 2, "member_left_or_vanished"),
        (4, 5, 7000, 7000, [], [], 0, 4, "topology_changed"),
        (5, 6, 9000, 9000, [], [A], 0, 0, "member_left_or_vanished")]


def test_tasks_are_rows_of_their_own_by_kind_of_task_and_of_assignment() -> None:
    rows = rows_of(two_processes())
    assert rows[ASSIGNMENTS] == []  # tasks are no partitions
    tasks = rows[TASKS]
    revoking = sorted((t["subtopology_id"], t["partition"], t["valid_from"], t["valid_to"], t["generation"])
                      for t in tasks if t["assignment_kind"] == "pending_revocation")
    assert revoking == [("0", 1, 3200, 3400, 2), ("1", 1, 3200, 3400, 2)]
    b_standby = sorted((t["subtopology_id"], t["partition"], t["valid_from"], t["valid_to"]) for t in tasks
                       if t["member_id"] == B and t["task_kind"] == "standby" and t["assignment_kind"] == "current")
    assert b_standby == [("0", 0, 3000, 5000), ("1", 0, 3000, 5000)]
    assert {(t["member_id"], t["process_id"]) for t in tasks} == {(A, f"process-{A}"), (B, f"process-{B}")}
    # no active task is current for two members at once
    actives = [t for t in tasks if t["task_kind"] == "active" and t["assignment_kind"] == "current"]
    for t in actives:
        for u in actives:
            if t is not u and (t["subtopology_id"], t["partition"]) == (u["subtopology_id"], u["partition"]):
                assert t["valid_to"] is not None and t["valid_to"] <= u["valid_from"] \
                    or u["valid_to"] is not None and u["valid_to"] <= t["valid_from"]


def test_membership_has_the_process_and_one_row_per_topology_epoch() -> None:
    rows = rows_of(upgraded_then_deleted())[MEMBERSHIP]
    assert [(m["member_id"], m["valid_from"], m["valid_to"], m["topology_epoch"], m["first_generation"],
             m["last_generation"]) for m in rows] == [
        (A, 1000, 7000, 0, 1, 4), (B, 3000, 5000, 0, 3, 3), (A, 7000, 9000, 1, 5, 5)]
    assert {(m["process_id"], m["user_endpoint"], m["group_type"]) for m in rows if m["member_id"] == A} == {
        (f"process-{A}", f"{A}.local:7070", "streams")}


def test_the_topology_is_one_row_per_topic_and_subtopology_while_its_record_holds() -> None:
    rows = rows_of(upgraded_then_deleted())[TOPOLOGY]
    first = sorted((t["subtopology_id"], t["topic_role"], t["topic"], t["partitions"], t["valid_from"],
                    t["valid_to"]) for t in rows if t["topology_epoch"] == 0)
    assert first == [("0", "repartition_sink", REPARTITION, None, 1000, 7000),
                     ("0", "source", "streams-in", None, 1000, 7000),
                     ("1", "changelog", CHANGELOG, 0, 1000, 7000),
                     ("1", "repartition_source", REPARTITION, 0, 1000, 7000)]
    # the upgrade's topology ends with the group's deletion
    assert {(t["valid_from"], t["valid_to"]) for t in rows if t["topology_epoch"] == 1} == {(7000, 10000)}


def test_group_rows_takes_streams_records() -> None:
    records = [streams_record_from_row(r) for r in silver_rows(two_processes().entries)]
    found = group_rows(streams_records=records)
    assert len(found.rows[TASKS]) > 0 and len(found.rows[TOPOLOGY]) == 4
    assert {e["group_type"] for e in found.rows[REBALANCES]} == {"streams"}


def test_a_captured_streams_group_replays_to_the_states_the_admin_client_described() -> None:
    found = captured("streams_join_leave_crash")
    if found is None:
        import pytest

        pytest.skip("streams_join_leave_crash is not captured yet")
    entries, describe = found
    records = [streams_record_from_row(r) for r in silver_rows(entries, describe["group"])]
    for step in describe["steps"]:
        upto = [r for r in records if r.position[1] <= step["after_offset"]]
        replayed = replay(upto)
        expected = step["describe"]
        if expected.get("state", "").upper() == "DEAD":
            assert replayed[STATES][-1]["state"] == "Dead", step["step"]
            continue
        last = replayed[STATES][-1]
        assert last["state"].upper().replace("_", "") == expected["state"].upper().replace("_", ""), step["step"]
        assert last["generation"] == expected["group_epoch"], step["step"]
        members = {m["member_id"]: m for m in replayed[MEMBERSHIP] if m["valid_to"] is None}
        assert set(members) == {m["member_id"] for m in expected["members"]}, step["step"]
        for m in expected["members"]:
            assert members[m["member_id"]]["process_id"] == m["process_id"], step["step"]
        held = {(t["member_id"], t["task_kind"], t["subtopology_id"], t["partition"]) for t in replayed[TASKS]
                if t["valid_to"] is None and t["assignment_kind"] == "current"}
        described = {(m["member_id"], kind, s["subtopology_id"], p) for m in expected["members"]
                     for kind in ("active", "standby", "warmup")
                     for s in m["assignment"].get(kind, []) for p in s["partitions"]}
        assert held == described, step["step"]


def test_a_captured_streams_group_goes_through_not_ready_assigning_and_reconciling_as_kafka_says() -> None:
    """streams_join_leave_crash (Kafka 4.2.1): a joins with its topology (not validated yet: NotReady), the
    coordinator validates it and bumps the epoch (Assigning until the first target), b and c join (each a round of
    Reconciling: givers revoke, takers wait for unreleased tasks), b leaves and c is fenced (Assigning until the
    next heartbeat computes the target), a leaves (Empty), the group is deleted. Worked out from the records'
    offsets with StreamsGroup.maybeUpdateGroupState."""
    found = captured("streams_join_leave_crash")
    assert found is not None, "tests/history/captured/streams_join_leave_crash.jsonl is missing"
    entries, describe = found
    time_of = {e["offset"]: e["timestamp"] for e in entries}
    rows = replay(streams_record_from_row(r) for r in silver_rows(entries, describe["group"]))
    assert [(s["state"], s["generation"], s["at"]) for s in rows[STATES]] == [
        ("NotReady", 2, time_of[0]), ("Assigning", 3, time_of[4]), ("Reconciling", 3, time_of[5]),
        ("Stable", 3, time_of[7]), ("Reconciling", 4, time_of[14]), ("Stable", 4, time_of[24]),
        ("Reconciling", 5, time_of[25]), ("Stable", 5, time_of[38]), ("Assigning", 6, time_of[42]),
        ("Reconciling", 6, time_of[46]), ("Stable", 6, time_of[52]), ("Assigning", 7, time_of[56]),
        ("Reconciling", 7, time_of[60]), ("Stable", 7, time_of[64]), ("Empty", 8, time_of[65]),
        ("Dead", None, time_of[75])]
    # the topology's topics by role are those the admin client describes
    described = describe["steps"][0]["describe"]["subtopologies"]
    expected = {(s["subtopology_id"], role, topic) for s in described
                for role, key in (("source", "source_topics"), ("repartition_sink", "repartition_sink_topics"),
                                  ("changelog", "state_changelog_topics"),
                                  ("repartition_source", "repartition_source_topics"))
                for topic in s[key]}
    assert {(t["subtopology_id"], t["topic_role"], t["topic"]) for t in rows[TOPOLOGY]} == expected
    assert {t["valid_to"] for t in rows[TOPOLOGY]} == {time_of[75]}  # ended by the deletion's tombstones
