"""KIP-848 consumer groups in the reference coordinator (``coordinator/consumer_group.py``).

Expected values come from Kafka 4.2's own tests and code, not from this engine's output:
``GroupMetadataManagerTest.testMemberJoinsEmptyConsumerGroup`` (a join writes member metadata, the
group epoch, the target assignment member and metadata records, then the current assignment: epoch 1,
previous epoch 0), ``testUpdatingSubscriptionTriggersNewTargetAssignment`` (a subscription change:
member metadata, a new epoch, the changed target, the reconciled member),
``testLeavingMemberBumpsGroupEpoch`` (three tombstones then the epoch, no new target assignment),
``testSessionTimeoutExpiration`` (the same when the session expires), ``CurrentAssignmentBuilderTest``
(STABLE -> UNREVOKED_PARTITIONS keeps the member epoch; a partition another member still owns is
UNRELEASED) and the ``RangeAssignor`` Javadoc (contiguous ranges, the first members one extra).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator import simulate
from coordinator.clock import SimulatedClock
from coordinator.consumer_group import (
    ConsumerGroupCoordinator,
    ConsumerGroupMember,
    ConsumerGroupState,
    HeartbeatRequest,
    range_assign,
    topic_id_for,
)
from coordinator.errors import Errors
from coordinator.records import KafkaVersion, encode
from coordinator.scenario import ScenarioError, parse_scenario
from decoders import decode_record
from pipelines.end_offsets import kafka_uuid_text

SCENARIO = Path(__file__).resolve().parents[2] / "conf" / "scenarios" / "kip848-subscription-change.yaml"
FOO, BAR = topic_id_for("foo"), topic_id_for("bar")
# Record type ids (the key's int16): shared/kafka-records.md section 2.
MEMBER, EPOCH, PARTITION_METADATA, TARGET_EPOCH, TARGET, CURRENT = 5, 3, 4, 6, 7, 8


class Broker:
    """The engine on a clock, with what it appended; topics foo (6 partitions) and bar (3)."""

    def __init__(self, version: str = "4.2"):
        self.clock = SimulatedClock(1_000_000)
        self.topics = {"foo": (FOO, 6), "bar": (BAR, 3)}
        self.log: list[list] = []
        self.engine = ConsumerGroupCoordinator(self.clock, KafkaVersion.parse(version), lambda: dict(self.topics),
                                               lambda _group, records: self.log.append(records))

    def heartbeat(self, member: str, epoch: int, topics=("foo", "bar"), owned=None):  # noqa: ANN001, ANN201
        return self.engine.heartbeat(HeartbeatRequest(
            "g", member, epoch, client_id=f"client-{member}", client_host="/10.0.0.1", rebalance_timeout_ms=5000,
            subscribed_topic_names=tuple(topics), server_assignor="range", owned=owned))

    def last_write(self) -> list:
        """The last write's records, decoded from the bytes the broker would append."""
        return [decode_record(*encode(r)) for r in self.log[-1]]


def parts(*pairs: tuple[str, list[int]]) -> frozenset:
    return frozenset((t, p) for t, ps in pairs for p in ps)


def assigned(value_list: list[dict]) -> frozenset:
    return frozenset((str(t["topic_id"]), p) for t in value_list for p in t["partitions"])


def test_a_join_writes_member_epoch_target_and_current_assignment_in_kafkas_order() -> None:
    broker = Broker()
    response = broker.heartbeat("member-a", 0)
    records = broker.last_write()
    assert [r.key_version for r in records] == [MEMBER, EPOCH, TARGET, TARGET_EPOCH, CURRENT]
    assert {r.value_version for r in records} == {0}
    member, epoch, target, target_epoch, current = (r.value for r in records)
    assert member["subscribed_topic_names"] == ["bar", "foo"]  # newConsumerGroupMemberSubscriptionRecord sorts
    assert (member["server_assignor"], member["rebalance_timeout_ms"], member["client_id"]) == \
        ("range", 5000, "client-member-a")
    assert member["instance_id"] is None and member["rack_id"] is None and member["classic_member_metadata"] is None
    assert epoch["epoch"] == 1 and epoch["metadata_hash"] != 0  # 4.1+: a hash of the subscribed topics
    everything = parts((FOO, [0, 1, 2, 3, 4, 5]), (BAR, [0, 1, 2]))
    assert assigned(target["topic_partitions"]) == everything and target_epoch["assignment_epoch"] == 1
    assert (current["member_epoch"], current["previous_member_epoch"], current["state"]) == (1, 0, 0)
    assert assigned(current["assigned_partitions"]) == everything and current["partitions_pending_revocation"] == []
    assert (response.member_epoch, response.heartbeat_interval_ms, response.assignment) == (1, 5000, everything)
    assert broker.engine.groups["g"].state is ConsumerGroupState.STABLE


def test_a_second_member_waits_for_partitions_the_first_must_revoke_first() -> None:
    broker = Broker()
    everything = broker.heartbeat("member-a", 0).assignment
    broker.heartbeat("member-b", 0)
    records = broker.last_write()
    assert [r.key_version for r in records] == [MEMBER, EPOCH, TARGET, TARGET, TARGET_EPOCH, CURRENT]
    targets = {r.key["member_id"]: assigned(r.value["topic_partitions"]) for r in records if r.key_version == TARGET}
    # RangeAssignor: members by id; foo 6/2 = 3 each; bar 3/2 = 1 each, the first member one extra.
    a_target, b_target = parts((FOO, [0, 1, 2]), (BAR, [0, 1])), parts((FOO, [3, 4, 5]), (BAR, [2]))
    assert targets == {"member-a": a_target, "member-b": b_target}
    b_current = records[-1].value
    # Everything b is meant to own is still a's: b moves to the new epoch with nothing, UNRELEASED_PARTITIONS.
    assert (b_current["member_epoch"], b_current["previous_member_epoch"], b_current["state"]) == (2, 0, 2)
    assert b_current["assigned_partitions"] == []
    assert broker.engine.groups["g"].state is ConsumerGroupState.RECONCILING

    # a's next heartbeat: it keeps its epoch and is asked to revoke what goes to b.
    response = broker.heartbeat("member-a", 1, owned=everything)
    [a_current] = broker.last_write()
    assert a_current.key_version == CURRENT
    assert (a_current.value["member_epoch"], a_current.value["previous_member_epoch"], a_current.value["state"]) == \
        (1, 1, 1)
    assert assigned(a_current.value["assigned_partitions"]) == a_target
    assert assigned(a_current.value["partitions_pending_revocation"]) == b_target
    assert response.assignment == a_target
    # a acknowledges (owns only its target now): epoch 2, STABLE.
    broker.heartbeat("member-a", 1, owned=a_target)
    [a_current] = broker.last_write()
    assert (a_current.value["member_epoch"], a_current.value["previous_member_epoch"], a_current.value["state"]) == \
        (2, 1, 0)
    # b's next heartbeat gets the released partitions; the group is Stable.
    response = broker.heartbeat("member-b", 2, owned=frozenset())
    [b_current] = broker.last_write()
    assert (b_current.value["member_epoch"], b_current.value["state"]) == (2, 0)
    assert assigned(b_current.value["assigned_partitions"]) == b_target == response.assignment
    assert broker.engine.groups["g"].state is ConsumerGroupState.STABLE
    # Nothing changed: a heartbeat writes nothing.
    writes = len(broker.log)
    broker.heartbeat("member-b", 2, owned=b_target)
    assert len(broker.log) == writes


def test_a_subscription_change_writes_new_member_metadata_and_bumps_the_epoch() -> None:
    broker = Broker()
    broker.heartbeat("member-a", 0, topics=("foo",))
    broker.heartbeat("member-a", 1, topics=("foo", "bar"), owned=parts((FOO, [0, 1, 2, 3, 4, 5])))
    records = broker.last_write()
    assert [r.key_version for r in records] == [MEMBER, EPOCH, TARGET, TARGET_EPOCH, CURRENT]
    assert records[0].value["subscribed_topic_names"] == ["bar", "foo"]
    assert records[1].value["epoch"] == 2
    assert assigned(records[2].value["topic_partitions"]) == parts((FOO, [0, 1, 2, 3, 4, 5]), (BAR, [0, 1, 2]))
    assert (records[4].value["member_epoch"], records[4].value["previous_member_epoch"]) == (2, 1)
    # Other member metadata changes are written but bump nothing (hasMemberSubscriptionChanged).
    broker.engine.heartbeat(HeartbeatRequest("g", "member-a", 2, client_id="renamed", client_host="/10.0.0.1",
                                             owned=parts((FOO, [0, 1, 2, 3, 4, 5]), (BAR, [0, 1, 2]))))
    assert [r.key_version for r in broker.last_write()] == [MEMBER]
    assert broker.engine.groups["g"].group_epoch == 2


def test_leaving_writes_three_tombstones_and_a_new_epoch_without_a_new_target() -> None:
    broker = Broker()
    broker.heartbeat("member-a", 0)
    broker.heartbeat("member-b", 0)
    response = broker.heartbeat("member-b", -1)
    records = broker.last_write()
    assert [(r.key_version, r.key.get("member_id"), r.value) for r in records] == [
        (CURRENT, "member-b", None), (TARGET, "member-b", None), (MEMBER, "member-b", None)] + \
        [(EPOCH, None, records[-1].value)]
    assert records[-1].value["epoch"] == 3 and response.member_epoch == -1
    group = broker.engine.groups["g"]
    assert group.assignment_epoch == 2 and group.state is ConsumerGroupState.ASSIGNING
    # The next heartbeat of the remaining member computes the target of epoch 3.
    broker.heartbeat("member-a", 1, owned=parts((FOO, [0, 1, 2, 3, 4, 5]), (BAR, [0, 1, 2])))
    assert [r.key_version for r in broker.last_write()] == [TARGET, TARGET_EPOCH, CURRENT]
    assert broker.heartbeat("member-b", 2).error is Errors.UNKNOWN_MEMBER_ID


def test_a_member_without_heartbeats_is_fenced_when_its_session_expires() -> None:
    broker = Broker()
    broker.heartbeat("member-a", 0)
    broker.clock.run_until(broker.clock.now + 10_000)
    broker.heartbeat("member-b", 0)
    joined_b = broker.clock.now
    broker.clock.run_until(joined_b + 44_999)  # a's last heartbeat was 10 s before b's: 45 s after it, fenced
    fenced = [w for w in broker.log if w[0].value is None]
    assert [[r.key["member_id"] for r in w if r.record_type != "consumer_group_metadata"] for w in fenced] == \
        [["member-a"] * 3]
    assert set(broker.engine.groups["g"].members) == {"member-b"}
    broker.clock.run_until(joined_b + 45_000)
    assert broker.engine.groups["g"].members == {}


def test_kafka_4_0_writes_partition_metadata_instead_of_a_hash_and_3_9_is_refused() -> None:
    broker = Broker("4.0")
    broker.heartbeat("member-a", 0)
    records = broker.last_write()
    assert [r.key_version for r in records] == [MEMBER, PARTITION_METADATA, EPOCH, TARGET, TARGET_EPOCH, CURRENT]
    assert {(t["topic_name"], str(t["topic_id"]), t["num_partitions"]) for t in records[1].value["topics"]} == \
        {("foo", FOO, 6), ("bar", BAR, 3)}
    assert records[2].value["metadata_hash"] == 0  # the tagged field does not exist before 4.1
    with pytest.raises(ValueError, match="4.0 and later"):
        Broker("3.9")


def test_range_assigns_contiguous_ranges_in_member_id_order() -> None:
    members = {m: ConsumerGroupMember(m, subscribed_topic_names=frozenset({"t1", "t2"})) for m in ("m1", "m0")}
    members["m2"] = ConsumerGroupMember("m2", subscribed_topic_names=frozenset({"t2"}))
    topics = {"t1": ("T1", 3), "t2": ("T2", 5)}
    # t1: m0, m1 subscribe: 2 + 1. t2: all three: 2 + 2 + 1 (5 = 3 * 1 + 2 extra for the first two).
    assert range_assign(members, topics) == {
        "m0": parts(("T1", [0, 1]), ("T2", [0, 1])), "m1": parts(("T1", [2]), ("T2", [2, 3])),
        "m2": parts(("T2", [4]))}


# ---------------------------------------------------------------------------------------- scenario

@pytest.fixture(scope="module")
def result():  # noqa: ANN201
    return simulate(SCENARIO)


def test_the_scenario_writes_only_kip848_records_for_its_group(result) -> None:  # noqa: ANN001
    types = [decode_record(r.key, r.value).key_version for r in result.records]
    assert set(types) <= {MEMBER, EPOCH, TARGET, TARGET_EPOCH, CURRENT}
    # join, join, join, subscription change, leave, session expiry: six epochs
    epochs = [decode_record(r.key, r.value).value["epoch"] for r in result.records
              if decode_record(r.key, r.value).key_version == EPOCH]
    assert epochs == [1, 2, 3, 4, 5, 6]


def test_a_subscription_change_closes_the_membership_row_and_opens_the_next(result) -> None:  # noqa: ANN001
    start, latency = result.timeline["start_ms"], 5  # network_latency: a request reaches the broker 5 ms late
    rows = sorted(result.tables["consumer_group_membership"], key=lambda r: (r["client_id"], r["valid_from"]))
    assert [(r["client_id"], r["subscribed_topics"]) for r in rows] == [
        ("ledger-1", ["orders"]), ("ledger-2", ["orders"]), ("ledger-2", ["orders", "payments"]),
        ("ledger-3", ["orders"])]
    one, two_before, two_after, three = rows
    assert two_before["member_id"] == two_after["member_id"]
    # The scenario subscribes ledger-2 to both topics at 15 s: one row ends where the next starts.
    assert two_before["valid_to"] == two_after["valid_from"] == start + 15_000 + latency
    assert two_after["first_generation"] == two_before["last_generation"] + 1 and two_after["valid_to"] is None
    assert (one["valid_from"], two_before["valid_from"], three["valid_from"]) == \
        (start + latency, start + 2_000 + latency, start + 4_000 + latency)
    assert three["valid_to"] == start + 25_000 + latency  # left (member epoch -1) at 25 s
    # crashed at 32 s, fenced 45 s (group.consumer.session.timeout.ms) after its last heartbeat (every 5 s)
    assert start + 32_000 - 5_000 + 45_000 <= one["valid_to"] <= start + 32_000 + 45_000
    assert {r["server_assignor"] for r in rows} == {"range"}


def test_the_generations_name_the_cause_of_each_bump(result) -> None:  # noqa: ANN001
    generations = result.tables["consumer_group_generations"]
    assert [(g["generation"], g["member_count"], g["end_reason"]) for g in generations] == [
        (1, 1, "member_joined"), (2, 2, "member_joined"), (3, 3, "subscription_changed"), (4, 3, "member_left"),
        (5, 2, "session_timeout"), (6, 1, None)]
    for g in generations:
        assert g["stable_at"] is None or g["started_at"] <= g["stable_at"] < (g["ended_at"] or g["stable_at"] + 1)
    assert generations[-1]["stable_at"] is not None  # the last member alone owns every partition again


def test_the_state_history_follows_maybe_update_group_state(result) -> None:  # noqa: ANN001
    # Worked out by hand from ConsumerGroup.maybeUpdateGroupState: a join computes the target in its own
    # write, so the group is Reconciling (never Assigning) while the owners revoke; a leave or a fence
    # bumps only the group epoch (Assigning) until the next heartbeat of a remaining member computes the
    # target; ledger-2, alone at the end, reconciles in that same heartbeat (Stable at once).
    states = [(s["state"], s["generation"], s["assignment_epoch"])
              for s in result.tables["consumer_group_state_history"]]
    assert states == [
        ("Stable", 1, 1), ("Reconciling", 2, 2), ("Reconciling", 3, 3), ("Stable", 3, 3),  # three joins
        ("Reconciling", 4, 4), ("Stable", 4, 4),  # ledger-2's subscription change
        ("Assigning", 5, 4), ("Reconciling", 5, 5), ("Stable", 5, 5),  # ledger-3 leaves
        ("Assigning", 6, 5), ("Stable", 6, 6)]  # ledger-1's session expires


def test_rebalances_count_what_moved_between_settled_epochs(result) -> None:  # noqa: ANN001
    # By hand, with range over the members sorted by id: ledger-1 owns orders 0-3; after the joins (epochs
    # 2 and 3, settled once at 3) three of them moved to ledger-2 and ledger-3 and one stayed; the
    # subscription change adds payments 0-1 (new, not moved); ledger-3's partition goes to ledger-1 when it
    # leaves; the fenced ledger-1's two go to ledger-2.
    rows = result.tables["consumer_group_rebalances"]
    assert [(r["from_generation"], r["to_generation"], r["members_before"], r["members_after"],
             r["partitions_moved"], r["partitions_kept"], r["causes"]) for r in rows] == [
        (0, 1, 0, 1, 0, 0, ["member_joined"]), (1, 3, 1, 3, 3, 1, ["member_joined", "member_joined"]),
        (3, 4, 3, 3, 0, 4, ["subscription_changed"]), (4, 5, 3, 2, 1, 5, ["member_left"]),
        (5, 6, 2, 1, 2, 4, ["session_timeout"])]
    assert all(r["last_stable_at"] is None or r["last_stable_at"] < r["started_at"] <= r["stable_at"]
               for r in rows)


def test_no_partition_is_owned_by_two_members_at_once(result) -> None:  # noqa: ANN001
    owned = [a for a in result.tables["consumer_group_partition_assignments"] if a["assignment_kind"] != "target"]
    for a in owned:
        for b in owned:
            if a is not b and (a["topic_id"], a["partition"]) == (b["topic_id"], b["partition"]) \
                    and a["member_id"] != b["member_id"]:
                assert (a["valid_to"] is not None and a["valid_to"] <= b["valid_from"]) or \
                       (b["valid_to"] is not None and b["valid_to"] <= a["valid_from"])
    assert {a["topic"] for a in owned} == {"orders", "payments"}


def test_scenarios_refuse_what_kip848_consumers_cannot_do() -> None:
    base = {"name": "s", "duration": "1m", "topics": [{"name": "t", "partitions": 1}],
            "consumers": [{"name": "c1", "group": "g", "topics": ["t"], "group_protocol": "consumer",
                           "group_remote_assignor": "range"}],
            "actions": [{"at": "0s", "action": "join", "consumer": "c1"}]}
    parse_scenario(base)
    with pytest.raises(ScenarioError, match="uses group_protocol consumer"):
        parse_scenario({**base, "actions": [{"at": "0s", "action": "stall", "consumer": "c1", "duration": "1s"}]})
    with pytest.raises(ScenarioError, match="needs group_remote_assignor: range"):
        parse_scenario({**base, "consumers": [{k: v for k, v in base["consumers"][0].items()
                                              if k != "group_remote_assignor"}]})
    with pytest.raises(ScenarioError, match="classic and consumer"):
        parse_scenario({**base, "consumers": [*base["consumers"], {"name": "c2", "group": "g", "topics": ["t"]}]})


# ------------------------------------------------------------------------------ against a real broker

def _kip848_records(bootstrap: str, group: str, partitions: int) -> list:
    """The decoded records of KIP-848 group ``group`` in its ``__consumer_offsets`` partition, in log order."""
    import time

    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as KafkaPartition

    from decoders import coordinator_partition

    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{group}", "enable.auto.commit": False,
                       "enable.partition.eof": True})
    reader.assign([KafkaPartition("__consumer_offsets", coordinator_partition(group, partitions), 0)])
    records, deadline = [], time.monotonic() + 30
    while time.monotonic() < deadline:
        message = reader.poll(1.0)
        if message is None:
            continue
        if message.error():
            break  # end of the partition
        record = decode_record(message.key(), message.value())
        if record.key.get("group_id") == group:
            records.append(record)
    reader.close()
    return records


@pytest.mark.broker
def test_a_real_broker_writes_the_same_record_sequence_for_join_subscribe_and_leave(kafka_broker) -> None:  # noqa: ANN001
    """One librdkafka consumer with ``group.protocol=consumer`` and the ``range`` server assignor joins
    (one topic), subscribes to two topics, then closes; the real 4.2 broker's records of the group --
    types, tombstones, group and assignment epochs, member epochs and states, partitions per topic --
    equal the simulator's for the same scenario. Topic ids differ (the cluster's are random), so
    partitions are compared by topic name."""
    import time
    import uuid

    from confluent_kafka import Consumer, TopicCollection
    from confluent_kafka.admin import AdminClient

    from broker.embedded import TEST_FRIENDLY_PROPERTIES
    from broker.workload import create_topic

    bootstrap, suffix = kafka_broker.bootstrap_servers, uuid.uuid4().hex[:8]
    group, first, second = f"kip848-seq-{suffix}", f"kip848-seq-a-{suffix}", f"kip848-seq-b-{suffix}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    # create_topic waits until the partitions have leaders: describe_topics right after CreateTopics can
    # answer UNKNOWN_TOPIC_OR_PART while the broker's metadata catches up (seen 2026-11-29 under load).
    create_topic({"bootstrap.servers": bootstrap}, first, 2)
    create_topic({"bootstrap.servers": bootstrap}, second, 1)
    topic_ids = {d.name: kafka_uuid_text(d.topic_id) for d in (
        f.result(30) for f in admin.describe_topics(TopicCollection([first, second])).values())}
    partitions = int(TEST_FRIENDLY_PROPERTIES["offsets.topic.num.partitions"])

    def kip848_consumer(group_id: str) -> Consumer:
        return Consumer({"bootstrap.servers": bootstrap, "group.id": group_id, "client.id": "c1",
                         "group.protocol": "consumer", "group.remote.assignor": "range",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})

    def poll_until(consumer: Consumer, count: int) -> None:
        deadline = time.monotonic() + 60
        while len(consumer.assignment()) != count:
            assert time.monotonic() < deadline, f"no assignment of {count} partitions"
            consumer.poll(0.1)
        for _ in range(20):  # let the acknowledging heartbeat go out
            consumer.poll(0.1)

    # Each coordinator shard learns of new topics from its copy of the metadata image, a moment after the
    # broker answers for them; a join before that gets an empty target (and a second epoch once the image
    # arrives). A warm-up group on the same __consumer_offsets partition waits that moment out.
    from decoders import coordinator_partition

    warm_up = next(name for name in (f"kip848-warm-up-{suffix}-{i}" for i in range(100))
                   if coordinator_partition(name, partitions) == coordinator_partition(group, partitions))
    probe = kip848_consumer(warm_up)
    try:
        probe.subscribe([first, second])
        poll_until(probe, 3)
    finally:
        probe.close()
    consumer = kip848_consumer(group)

    try:
        consumer.subscribe([first])
        poll_until(consumer, 2)
        consumer.subscribe([first, second])
        poll_until(consumer, 3)
    finally:
        consumer.close()  # a heartbeat with member epoch -1
    real = _kip848_records(bootstrap, group, partitions)

    scenario = {
        "name": "kip848-sequence", "duration": "10s", "network_latency": "1ms",
        "broker": {"offsets.topic.num.partitions": partitions},
        "topics": [{"name": first, "partitions": 2}, {"name": second, "partitions": 1}],
        "consumers": [{"name": "c1", "group": group, "topics": [first], "group_protocol": "consumer",
                       "group_remote_assignor": "range"}],
        "actions": [{"at": "0s", "action": "join", "consumer": "c1"},
                    {"at": "3s", "action": "subscribe", "consumer": "c1", "topics": [first, second]},
                    {"at": "6s", "action": "leave", "consumer": "c1"}]}
    simulated = [decode_record(r.key, r.value) for r in simulate(scenario).records]
    names = {**{v: k for k, v in topic_ids.items()}, topic_id_for(first): first, topic_id_for(second): second}

    def shape(records: list) -> list[tuple]:
        out = []
        for r in records:
            v = r.value
            if v is None:
                out.append((r.key_version, None))
            elif r.key_version == EPOCH:
                out.append((EPOCH, v["epoch"]))
            elif r.key_version == TARGET_EPOCH:
                out.append((TARGET_EPOCH, v["assignment_epoch"]))
            elif r.key_version == MEMBER:
                out.append((MEMBER, tuple(v["subscribed_topic_names"]), v["server_assignor"], v["client_id"]))
            elif r.key_version == TARGET:
                out.append((TARGET, sorted((names[str(t["topic_id"])], tuple(t["partitions"]))
                                           for t in v["topic_partitions"])))
            elif r.key_version == CURRENT:
                out.append((CURRENT, v["member_epoch"], v["previous_member_epoch"], v["state"],
                            sorted((names[str(t["topic_id"])], tuple(t["partitions"]))
                                   for t in v["assigned_partitions"])))
            else:
                out.append((r.key_version, "unexpected"))
        return out

    assert shape(real) == shape(simulated)
    assert [r.key_version for r in real] == [MEMBER, EPOCH, TARGET, TARGET_EPOCH, CURRENT] * 2 + \
        [CURRENT, TARGET, MEMBER, EPOCH]
