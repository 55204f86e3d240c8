"""The simulator against a real Kafka 4.2 broker (KRaft, the background builds' broker).

Real confluent-kafka (librdkafka) consumers act out a scenario in wall-clock time (tests/coordinator/
real_broker_runs.py, among the background builds); the records the broker wrote to ``__consumer_offsets``
are read back and decoded, and compared with the records the
simulator writes for the same scenario: the sequence of generations, each one's protocol, leader
and members (by client id, since member ids embed random UUIDs), the assignments, and the final
committed offsets.

Two scenarios run concurrently: static members with ``range`` (assignments depend only on
instance ids, so they compare directly) and dynamic members with ``roundrobin`` (assignments depend
on the random member ids, so the real assignment is compared with our assignor run on the real
member ids). librdkafka is not the Java client, so only what both must agree on is compared:
librdkafka does not fill ``ConsumerProtocolSubscription.generation_id``, and its timing differs.
"""

from __future__ import annotations

import pytest

from coordinator import simulate
from coordinator.assignors import new_assignor
from coordinator.consumer_protocol import subscription
from coordinator.java_collections import JavaHashMap
from coordinator.topic_partition import TopicPartition
from decoders import decode_record
from tests.coordinator.real_broker_runs import RECORDS_PER_PARTITION

pytestmark = pytest.mark.broker



def generations(records: list) -> list[dict]:
    """One entry per persisted group state, by client id, consecutive duplicates dropped."""
    out: list[dict] = []
    for record in records:
        if record.type != "group_metadata" or record.value is None:
            continue
        value = record.value
        clients = {m["member_id"]: m["client_id"] for m in value["members"]}
        entry = {
            "generation": value["generation"],
            "protocol": value["protocol"],
            "leader": clients.get(value["leader"]),
            "members": sorted(clients.values()),
            "assignment": {
                m["client_id"]: sorted(
                    (a["topic"], p)
                    for a in (m["assignment"] or {"partitions": []})["partitions"]
                    for p in a["partitions"]
                )
                for m in value["members"]
            },
        }
        if not out or out[-1] != entry:
            out.append(entry)
    return out


def final_offsets(records: list) -> dict[tuple[str, int], int | None]:
    offsets: dict[tuple[str, int], int | None] = {}
    for record in records:
        if record.type == "offset_commit":
            offsets[(record.key["topic"], record.key["partition"])] = (
                None if record.value is None else record.value["offset"]
            )
    return offsets


def our_assignment(record_value: dict, assignor_name: str, partitions: dict[str, int]) -> dict[str, list]:
    """Our assignor on the real members (ids and subscriptions from the real record, in its order)."""
    subs: JavaHashMap = JavaHashMap()
    for m in record_value["members"]:
        s = m["subscription"]
        owned = [TopicPartition(o["topic"], p) for o in s["owned_partitions"] for p in o["partitions"]]
        subs[m["member_id"]] = subscription(s["topics"], s["user_data"], owned, s["generation_id"]).with_instance_id(
            m["group_instance_id"]
        )
    result = new_assignor(assignor_name).assign(partitions, subs)
    clients = {m["member_id"]: m["client_id"] for m in record_value["members"]}
    return {clients[member]: sorted((tp.topic, tp.partition) for tp in result[member]) for member in result}


def test_the_simulator_writes_the_generations_assignments_and_offsets_a_real_broker_writes(real_broker_runs) -> None:  # type: ignore[no-untyped-def]
    expected_members = {
        "static-range": [[], ["c1"], ["c1", "c2"], ["c1", "c2", "c3"], ["c1", "c2"]],
        "dynamic-roundrobin": [[], ["c1"], ["c1", "c2"], ["c1", "c2", "c3"], ["c1", "c2"], ["c1"], []],
    }
    assert set(real_broker_runs) == set(expected_members)
    for name, run in real_broker_runs.items():
        data, real = run["data"], run["real"]
        topic = data["topics"][0]["name"]
        simulated = [decode_record(r.key, r.value) for r in simulate(data).records]
        real_generations, simulated_generations = generations(real), generations(simulated)

        # generation, protocol, leader and members (by client id) agree record for record
        def shape(gens: list[dict]) -> list[tuple]:
            return [(g["generation"], g["protocol"], g["leader"], g["members"]) for g in gens]

        assert shape(real_generations) == shape(simulated_generations), name
        assert [g["members"] for g in real_generations] == expected_members[name], name

        if name == "static-range":
            # static members: range sorts by instance id, so assignments compare by client id
            assert [g["assignment"] for g in real_generations] == [g["assignment"] for g in simulated_generations]
        for record in real:
            if record.type == "group_metadata" and record.value and record.value["members"]:
                stored = generations([record])[0]["assignment"]
                assert stored == our_assignment(record.value, data["consumers"][0]["assignors"][0], {topic: 6}), name

        expected_offsets = {(topic, p): RECORDS_PER_PARTITION for p in range(6)}
        assert final_offsets(real) == expected_offsets == final_offsets(simulated), name
