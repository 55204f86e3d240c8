"""The broker side, request by request, against Kafka's documented classic-group behaviour
(GroupMetadataManager / OffsetMetadataManager, Kafka 4.2; shared/coordinator-notes.md)."""

from __future__ import annotations

import re

from coordinator.errors import Errors
from coordinator.group import GroupState
from coordinator.group_coordinator import CoordinatorConfig
from coordinator.topic_partition import TopicPartition
from decoders import coordinator_partition
from tests.coordinator.conftest import Broker

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


# -- JoinGroup ----------------------------------------------------------------------------------


def test_a_new_dynamic_member_is_told_member_id_required_with_client_id_dash_uuid(broker: Broker) -> None:
    first = broker.join(client_id="billing")
    assert first.response.error is Errors.MEMBER_ID_REQUIRED
    assert re.fullmatch(f"billing-{UUID}", first.response.member_id)
    group = broker.group()
    assert group.is_pending_member(first.response.member_id) and group.num_members == 0


def test_a_join_that_creates_a_group_writes_an_empty_generation_zero_record(broker: Broker) -> None:
    broker.join()
    (record,) = broker.records()
    assert record.record_type == "group_metadata" and record.partition == coordinator_partition("g", 50)
    assert record.value == {
        "protocol_type": "",
        "generation": 0,
        "protocol": None,
        "leader": None,
        "current_state_timestamp": broker.clock.now,
        "members": [],
    }


def test_the_3_x_coordinator_did_not_write_a_record_when_a_join_created_the_group(make_broker) -> None:  # noqa: ANN001
    broker = make_broker(kafka_version="3.9")
    broker.join()
    assert broker.records() == []


def test_a_pending_member_that_never_rejoins_is_dropped_after_its_session_timeout(broker: Broker) -> None:
    member_id = broker.join(session_timeout_ms=10_000).response.member_id
    broker.advance(9_999)
    assert broker.group().is_pending_member(member_id)
    broker.advance(1)
    assert not broker.group().is_pending_member(member_id)


def test_the_first_rebalance_waits_the_initial_delay_extended_by_each_new_member(broker: Broker) -> None:
    # group.initial.rebalance.delay.ms = 3000: joins at 0 and 2000 -> the 3000 ms timer sees a new
    # member and waits another 3000 ms (bounded by the rebalance timeout), completing at 6000.
    _, a = broker.join_as_new_member(client_id="a")
    broker.advance(2000)
    _, b = broker.join_as_new_member(client_id="b")
    broker.advance(3999)
    assert a.response is None and b.response is None
    broker.advance(1)
    assert broker.elapsed == 6000
    assert a.response.error is Errors.NONE and a.response.generation_id == 1
    assert broker.group().state is GroupState.COMPLETING_REBALANCE


def test_a_lone_first_member_completes_after_exactly_the_initial_delay(broker: Broker) -> None:
    _, a = broker.join_as_new_member()
    broker.advance(2999)
    assert a.response is None
    broker.advance(1)
    assert a.response.generation_id == 1 and a.response.leader == a.response.member_id


def test_only_the_leader_receives_the_members_and_their_metadata(broker: Broker) -> None:
    ids = {}
    joins = {}
    for c in ("a", "b"):
        ids[c], joins[c] = broker.join_as_new_member(client_id=c)
    broker.advance(6000)
    leader = joins["a"].response
    assert leader.leader == ids["a"]
    assert {m.member_id for m in leader.members} == set(ids.values())
    assert joins["b"].response.members == () and joins["b"].response.leader == ids["a"]


def test_session_timeouts_outside_the_broker_bounds_are_rejected(broker: Broker) -> None:
    assert broker.join(session_timeout_ms=5_999).response.error is Errors.INVALID_SESSION_TIMEOUT
    assert broker.join(session_timeout_ms=1_800_001).response.error is Errors.INVALID_SESSION_TIMEOUT
    assert broker.join(session_timeout_ms=6_000).response.error is Errors.MEMBER_ID_REQUIRED


def test_a_full_group_rejects_new_members_with_group_max_size_reached(make_broker) -> None:  # noqa: ANN001
    broker = make_broker(config=CoordinatorConfig(group_max_size=2))
    broker.stable_group("a", "b")
    rejected = broker.join(client_id="c")
    assert rejected.response.error is Errors.GROUP_MAX_SIZE_REACHED and rejected.response.member_id == ""


def test_a_joiner_with_another_protocol_type_or_no_common_assignor_is_inconsistent(broker: Broker) -> None:
    broker.stable_group("a")
    assert broker.join(protocol_type="connect").response.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    assert broker.join(protocols=broker.protocols("sticky")).response.error is Errors.INCONSISTENT_GROUP_PROTOCOL


def test_a_follower_rejoining_stable_with_the_same_metadata_gets_the_current_generation(broker: Broker) -> None:
    ids = broker.stable_group("a", "b")
    again = broker.join(member_id=ids["b"], client_id="b")
    assert again.response.error is Errors.NONE and again.response.generation_id == 1
    assert broker.group().state is GroupState.STABLE


def test_a_leader_rejoining_stable_starts_a_rebalance(broker: Broker) -> None:
    ids = broker.stable_group("a", "b")
    broker.join(member_id=ids["a"], client_id="a")
    assert broker.group().state is GroupState.PREPARING_REBALANCE
    assert broker.group().rebalance_cause == "leader_rejoined"


# -- SyncGroup ----------------------------------------------------------------------------------


def test_followers_wait_for_the_leaders_assignment_then_everyone_gets_theirs(broker: Broker) -> None:
    ids, joins = {}, {}
    for c in ("a", "b"):
        ids[c], joins[c] = broker.join_as_new_member(client_id=c)
    broker.advance(6000)
    follower = broker.sync(ids["b"], 1)
    assert follower.response is None
    assignment = {ids["a"]: [TopicPartition("t", 0), TopicPartition("t", 1)], ids["b"]: [TopicPartition("t", 2)]}
    leader = broker.sync(ids["a"], 1, assignments=assignment)
    assert broker.group().state is GroupState.STABLE
    assert list(follower.response.assignment.partitions) == [TopicPartition("t", 2)]
    assert list(leader.response.assignment.partitions) == [TopicPartition("t", 0), TopicPartition("t", 1)]
    record = broker.records("group_metadata")[-1]
    assert (
        record.value["generation"] == 1 and record.value["protocol"] == "range" and record.value["leader"] == ids["a"]
    )
    assert {m["member_id"] for m in record.value["members"]} == set(ids.values())


def test_members_the_leader_left_out_are_stored_with_an_empty_assignment(broker: Broker) -> None:
    ids = {}
    for c in ("a", "b"):
        ids[c], _ = broker.join_as_new_member(client_id=c)
    broker.advance(6000)
    broker.sync(ids["a"], 1, assignments={ids["a"]: [TopicPartition("t", 0)]})
    members = {m["member_id"]: m["assignment"] for m in broker.records("group_metadata")[-1].value["members"]}
    assert members[ids["b"]] == b""


def test_sync_errors_unknown_member_illegal_generation_and_rebalance_in_progress(broker: Broker) -> None:
    ids = broker.stable_group("a", "b")
    assert broker.sync("nobody", 1).response.error is Errors.UNKNOWN_MEMBER_ID
    assert broker.sync(ids["b"], 0).response.error is Errors.ILLEGAL_GENERATION
    assert broker.sync(ids["b"], 1, protocol_name="roundrobin").response.error is Errors.INCONSISTENT_GROUP_PROTOCOL
    broker.join(member_id=ids["a"], client_id="a")  # the leader rejoins: PreparingRebalance
    assert broker.sync(ids["b"], 1).response.error is Errors.REBALANCE_IN_PROGRESS


def test_a_rebalance_during_completing_rebalance_answers_parked_syncs_with_rebalance_in_progress(
    broker: Broker,
) -> None:
    ids = {}
    for c in ("a", "b"):
        ids[c], _ = broker.join_as_new_member(client_id=c)
    broker.advance(6000)
    parked = broker.sync(ids["b"], 1)
    broker.join(client_id="c")  # MEMBER_ID_REQUIRED only: no rebalance yet
    assert parked.response is None
    broker.join(member_id=ids["b"], client_id="b", protocols=broker.protocols("range", topics=("t", "u")))
    assert parked.response.error is Errors.REBALANCE_IN_PROGRESS
    assert broker.group().state is GroupState.PREPARING_REBALANCE


def test_a_member_that_never_syncs_is_removed_after_the_rebalance_timeout(broker: Broker) -> None:
    ids = {}
    for c in ("a", "b"):
        ids[c], _ = broker.join_as_new_member(client_id=c, session_timeout_ms=120_000, rebalance_timeout_ms=20_000)
    broker.advance(6000)
    broker.sync(ids["a"], 1, assignments={ids["a"]: [TopicPartition("t", 0)]})
    broker.advance(19_999)
    assert broker.group().has_member(ids["b"])
    broker.advance(1)
    assert not broker.group().has_member(ids["b"])
    assert broker.group().rebalance_cause == "sync_timeout"


# -- Heartbeat, LeaveGroup, session and rebalance timeouts ----------------------------------------


def test_heartbeats_answer_rebalance_in_progress_illegal_generation_and_unknown_member(broker: Broker) -> None:
    ids = broker.stable_group("a", "b")
    assert broker.heartbeat(ids["b"], 1) is Errors.NONE
    assert broker.heartbeat(ids["b"], 0) is Errors.ILLEGAL_GENERATION
    assert broker.heartbeat("ghost", 1) is Errors.UNKNOWN_MEMBER_ID
    broker.join(member_id=ids["a"], client_id="a")
    assert broker.heartbeat(ids["b"], 1) is Errors.REBALANCE_IN_PROGRESS


def test_a_member_without_heartbeats_is_removed_after_its_session_timeout_and_the_group_rebalances(
    broker: Broker,
) -> None:
    ids = broker.stable_group("a", "b", session_timeout_ms=10_000)
    broker.advance(9_000)
    broker.heartbeat(ids["a"], 1)
    broker.advance(1_000)
    group = broker.group()
    assert not group.has_member(ids["b"]) and group.has_member(ids["a"])
    assert group.state is GroupState.PREPARING_REBALANCE and group.rebalance_cause == "session_timeout"


def test_leave_group_removes_the_member_at_once_and_the_last_leave_empties_the_group(broker: Broker) -> None:
    ids = broker.stable_group("a", "b")
    assert broker.leave(ids["b"]) is Errors.NONE
    assert broker.group().state is GroupState.PREPARING_REBALANCE
    assert broker.leave(ids["a"]) is Errors.NONE
    group = broker.group()
    assert group.state is GroupState.EMPTY and group.generation_id == 2
    record = broker.records("group_metadata")[-1]
    assert record.value["generation"] == 2 and record.value["members"] == []
    assert (
        record.value["protocol"] is None
        and record.value["leader"] is None
        and record.value["protocol_type"] == "consumer"
    )


def test_a_rebalance_drops_dynamic_members_that_do_not_rejoin_within_the_rebalance_timeout(broker: Broker) -> None:
    ids = broker.stable_group("a", "b", "c", session_timeout_ms=120_000, rebalance_timeout_ms=30_000)
    rejoin = broker.join(member_id=ids["a"], client_id="a", rebalance_timeout_ms=30_000, session_timeout_ms=120_000)
    broker.advance(29_999)
    assert rejoin.response is None
    broker.advance(1)
    assert rejoin.response.generation_id == 2
    assert set(broker.group().members) == {ids["a"]}


def test_a_static_member_that_does_not_rejoin_stays_in_the_next_generation(broker: Broker) -> None:
    ids = {}
    for c, inst in (("a", None), ("s", "inst-s")):
        first = broker.join(client_id=c, instance_id=inst, session_timeout_ms=120_000, rebalance_timeout_ms=30_000)
        ids[c] = first.response.member_id if first.response else None
        if first.response and first.response.error is Errors.MEMBER_ID_REQUIRED:
            broker.join(member_id=ids[c], client_id=c, session_timeout_ms=120_000, rebalance_timeout_ms=30_000)
    ids["s"] = broker.group().static_member_id("inst-s")
    broker.advance(6000)
    broker.sync(ids["a"], 1, assignments={})
    broker.join(member_id=ids["a"], client_id="a", session_timeout_ms=120_000, rebalance_timeout_ms=30_000)
    broker.advance(30_000)
    assert broker.group().generation_id == 2 and broker.group().has_member(ids["s"])


def test_the_leader_that_does_not_rejoin_is_replaced_by_a_member_that_did(broker: Broker) -> None:
    ids = broker.stable_group("a", "b", session_timeout_ms=120_000, rebalance_timeout_ms=30_000)
    broker.join(
        member_id=ids["b"],
        client_id="b",
        protocols=broker.protocols("range", topics=("t", "u")),
        session_timeout_ms=120_000,
        rebalance_timeout_ms=30_000,
    )
    broker.advance(30_000)
    assert broker.group().leader_id == ids["b"] and not broker.group().has_member(ids["a"])


# -- static membership ----------------------------------------------------------------------------


def _static_pair(broker: Broker) -> dict[str, str]:
    joins = {inst: broker.join(client_id=inst, instance_id=inst) for inst in ("s1", "s2")}
    broker.advance(6000)
    ids = {inst: p.response.member_id for inst, p in joins.items()}
    broker.sync(ids["s1"], 1, assignments={ids["s1"]: [TopicPartition("t", 0)], ids["s2"]: [TopicPartition("t", 1)]})
    broker.sync(ids["s2"], 1)
    return ids


def test_static_members_join_without_member_id_required_and_get_instance_id_dash_uuid(broker: Broker) -> None:
    first = broker.join(client_id="app", instance_id="pod-7")
    assert first.response is None  # parked in the join phase, no MEMBER_ID_REQUIRED round trip
    assert re.fullmatch(f"pod-7-{UUID}", broker.group().static_member_id("pod-7"))


def test_a_static_member_restart_swaps_its_member_id_without_a_rebalance(broker: Broker) -> None:
    ids = _static_pair(broker)
    records_before = len(broker.records())
    again = broker.join(client_id="s2", instance_id="s2")
    new_id = again.response.member_id
    assert again.response.error is Errors.NONE and again.response.generation_id == 1 and new_id != ids["s2"]
    group = broker.group()
    assert group.state is GroupState.STABLE and group.generation_id == 1 and group.static_member_id("s2") == new_id
    (record,) = broker.records()[records_before:]
    assert record.value["generation"] == 1
    assert {m["member_id"] for m in record.value["members"]} == {ids["s1"], new_id}
    assert list(broker.sync(new_id, 1, instance_id="s2").response.assignment.partitions) == [TopicPartition("t", 1)]
    assert broker.heartbeat(ids["s2"], 1, instance_id="s2") is Errors.FENCED_INSTANCE_ID


def test_a_restarted_static_leader_is_told_to_skip_the_assignment(broker: Broker) -> None:
    _static_pair(broker)
    again = broker.join(client_id="s1", instance_id="s1")
    assert again.response.skip_assignment and again.response.leader == again.response.member_id
    assert len(again.response.members) == 2


def test_a_static_member_rejoining_with_another_protocol_triggers_a_rebalance(broker: Broker) -> None:
    _static_pair(broker)
    broker.join(client_id="s2", instance_id="s2", protocols=broker.protocols("roundrobin", "range"))
    # s1 supports only range, so range is still the only candidate: no change, no rebalance.
    assert broker.group().state is GroupState.STABLE
    # Now both prefer roundrobin and both support it: the selected protocol would change.
    broker.join(client_id="s1", instance_id="s1", protocols=broker.protocols("roundrobin", "range"))
    assert broker.group().state is GroupState.PREPARING_REBALANCE
    assert broker.group().rebalance_cause == "static_member_protocol_changed"


# -- offsets --------------------------------------------------------------------------------------


def test_commits_from_the_current_generation_are_written_one_record_per_partition(broker: Broker) -> None:
    ids = broker.stable_group("a")
    before = len(broker.records())
    response = broker.commit(ids["a"], 1, {("t", 0): 10, ("u", 1): 7}, metadata="m")
    assert response.error is Errors.NONE
    records = broker.records()[before:]
    assert [(r.key["topic"], r.key["partition"], r.value["offset"]) for r in records] == [("t", 0, 10), ("u", 1, 7)]
    assert records[0].value_version == 4 and records[0].value["metadata"] == "m"
    assert records[0].value["commit_timestamp"] == broker.clock.now


def test_commits_with_a_stale_generation_or_unknown_member_are_rejected_and_not_written(broker: Broker) -> None:
    ids = broker.stable_group("a")
    before = len(broker.records())
    assert broker.commit(ids["a"], 0, {("t", 0): 1}).error is Errors.ILLEGAL_GENERATION
    assert broker.commit("ghost", 1, {("t", 0): 1}).error is Errors.UNKNOWN_MEMBER_ID
    assert broker.commit("", -1, {("t", 0): 1}).error is Errors.UNKNOWN_MEMBER_ID
    assert len(broker.records()) == before


def test_a_simple_consumer_commit_creates_a_group_without_a_group_record(broker: Broker) -> None:
    response = broker.commit("", -1, {("t", 0): 5}, group="simple")
    assert response.error is Errors.NONE
    assert [r.record_type for r in broker.records()] == ["offset_commit"]
    group = broker.group("simple")
    assert group.state is GroupState.EMPTY and group.protocol_type is None


def test_commits_to_unknown_partitions_never_reach_the_coordinator(broker: Broker) -> None:
    response = broker.commit("", -1, {("t", 99): 5, ("nope", 0): 1}, group="x")
    assert {e for _, _, e in response.partition_errors} == {Errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert broker.group("x") is None and broker.records() == []


def test_offset_commit_value_v1_is_used_when_the_commit_sets_a_retention(broker: Broker) -> None:
    from coordinator.requests import OffsetCommitPartition, OffsetCommitRequest

    request = OffsetCommitRequest("r", "", -1, None, (OffsetCommitPartition("t", 0, 3),), retention_time_ms=60_000)
    broker.coordinator.commit_offsets(request)
    (record,) = broker.records()
    assert record.value_version == 1 and record.value["expire_timestamp"] == broker.clock.now + 60_000


def test_offsets_of_an_empty_group_expire_retention_after_it_became_empty(make_broker) -> None:  # noqa: ANN001
    config = CoordinatorConfig(offsets_retention_minutes=10, offsets_retention_check_interval_ms=60_000)
    broker = make_broker(config=config)
    ids = broker.stable_group("a")  # Stable at 3000
    broker.commit(ids["a"], 1, {("t", 0): 1, ("t", 1): 2})
    broker.advance(10_000)
    broker.leave(ids["a"])  # Empty at 13_000 -> offsets expire at the first check >= 613_000
    broker.advance(600_000 - broker.elapsed)
    assert not any(r.value is None for r in broker.records())
    broker.advance(60_000)  # the check at 660_000
    tombstones = [r for r in broker.records() if r.value is None]
    assert [(r.record_type, r.key.get("partition")) for r in tombstones][-1] == ("group_metadata", None)
    assert sorted(r.key["partition"] for r in tombstones if r.record_type == "offset_commit") == [0, 1]
    assert {r.timestamp for r in tombstones} == {broker.clock.now}
    assert broker.group() is None


def test_a_stable_group_only_loses_offsets_of_topics_it_no_longer_subscribes_to(make_broker) -> None:  # noqa: ANN001
    config = CoordinatorConfig(offsets_retention_minutes=1, offsets_retention_check_interval_ms=30_000)
    broker = make_broker(config=config)
    ids = broker.stable_group("a")  # subscribed to "t" only
    broker.commit(ids["a"], 1, {("t", 0): 1, ("u", 0): 1})
    for _ in range(24):  # two minutes of heartbeats every 5 s keep the group Stable
        broker.advance(5_000)
        assert broker.heartbeat(ids["a"], 1) is Errors.NONE
    removed = {(r.key["topic"], r.key["partition"]) for r in broker.records() if r.value is None}
    assert removed == {("u", 0)}


def test_delete_groups_refuses_live_groups_and_writes_offset_then_group_tombstones(broker: Broker) -> None:
    ids = broker.stable_group("a")
    broker.commit(ids["a"], 1, {("t", 0): 1, ("t", 2): 3})
    assert broker.coordinator.delete_groups(["g"]) == {"g": Errors.NON_EMPTY_GROUP}
    assert broker.coordinator.delete_groups(["nope"]) == {"nope": Errors.GROUP_ID_NOT_FOUND}
    broker.leave(ids["a"])
    before = len(broker.records())
    assert broker.coordinator.delete_groups(["g"]) == {"g": Errors.NONE}
    written = broker.records()[before:]
    assert [r.record_type for r in written] == ["offset_commit", "offset_commit", "group_metadata"]
    assert all(r.value is None for r in written) and broker.group() is None


def test_offset_delete_refuses_subscribed_topics_and_only_tombstones_existing_offsets(broker: Broker) -> None:
    ids = broker.stable_group("a")
    broker.commit(ids["a"], 1, {("t", 0): 1, ("u", 0): 2})
    before = len(broker.records())
    result = broker.coordinator.delete_offsets("g", [("t", 0), ("u", 0), ("u", 1)])
    assert result == {("t", 0): Errors.GROUP_SUBSCRIBED_TO_TOPIC, ("u", 0): Errors.NONE, ("u", 1): Errors.NONE}
    written = broker.records()[before:]
    assert [(r.key["topic"], r.key["partition"], r.value) for r in written] == [("u", 0, None)]


def test_every_record_of_a_group_goes_to_its_coordinator_partition(make_broker) -> None:  # noqa: ANN001
    broker = make_broker(config=CoordinatorConfig(offsets_topic_num_partitions=50))
    broker.stable_group("a", group="my-group")
    assert {r.partition for r in broker.records()} == {12}  # shared/kafka-records.md §10: "my-group" -> 12
