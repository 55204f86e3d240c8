"""The simulator against a real Kafka 4.2 broker (KRaft, the session ``kafka_broker`` fixture).

Real confluent-kafka (librdkafka) consumers act out a scenario in wall-clock time; the records the
broker wrote to ``__consumer_offsets`` are read back and decoded, and compared with the records the
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

import threading
import time
import uuid
from typing import Any

import pytest

from broker.embedded import TEST_FRIENDLY_PROPERTIES
from coordinator import simulate
from coordinator.assignors import new_assignor
from coordinator.consumer_protocol import subscription
from coordinator.java_collections import JavaHashMap
from coordinator.topic_partition import TopicPartition
from decoders import coordinator_partition, decode_record

pytestmark = pytest.mark.broker

OFFSETS_PARTITIONS = int(TEST_FRIENDLY_PROPERTIES["offsets.topic.num.partitions"])
RECORDS_PER_PARTITION = 30


def scenario(name: str, assignor: str, static: bool, leaves: list[tuple[str, str]], duration: str) -> dict[str, Any]:
    suffix = uuid.uuid4().hex[:8]
    group, topic = f"{name}-{suffix}", f"{name}-topic-{suffix}"
    consumers = []
    for i in (1, 2, 3):
        consumer = {
            "name": f"c{i}",
            "group": group,
            "topics": [topic],
            "session_timeout_ms": 6000,
            "heartbeat_interval_ms": 1000,
            "assignors": [assignor],
            "auto_offset_reset": "earliest",
        }
        if static:
            consumer["group_instance_id"] = f"c{i}"
        consumers.append(consumer)
    return {
        "name": name,
        "duration": duration,
        "broker": {
            "offsets.topic.num.partitions": OFFSETS_PARTITIONS,
            "group.initial.rebalance.delay.ms": int(TEST_FRIENDLY_PROPERTIES["group.initial.rebalance.delay.ms"]),
        },
        "topics": [{"name": topic, "partitions": 6, "initial_records": RECORDS_PER_PARTITION}],
        "consumers": consumers,
        "actions": [
            {"at": "0s", "action": "join", "consumer": "c1"},
            {"at": "3s", "action": "join", "consumer": "c2"},
            {"at": "6s", "action": "join", "consumer": "c3"},
            *({"at": at, "action": "leave", "consumer": consumer} for at, consumer in leaves),
        ],
    }


# -- acting a scenario out with real consumers -----------------------------------------------------


def _seconds(text: str) -> float:
    return float(text[:-1])


def play(bootstrap: str, data: dict[str, Any]) -> None:
    """join starts a polling consumer thread, leave closes it; wall-clock times from the scenario."""
    from confluent_kafka import Consumer

    stop: dict[str, threading.Event] = {}
    threads: dict[str, threading.Thread] = {}
    configs = {c["name"]: c for c in data["consumers"]}

    def run(name: str) -> None:
        c = configs[name]
        settings = {
            "bootstrap.servers": bootstrap,
            "group.id": c["group"],
            "client.id": name,
            "session.timeout.ms": c["session_timeout_ms"],
            "heartbeat.interval.ms": c["heartbeat_interval_ms"],
            "partition.assignment.strategy": ",".join(c["assignors"]),
            "auto.offset.reset": c["auto_offset_reset"],
            "enable.auto.commit": True,
        }
        if "group_instance_id" in c:
            settings["group.instance.id"] = c["group_instance_id"]
        consumer = Consumer(settings)
        consumer.subscribe(c["topics"])
        while not stop[name].is_set():
            consumer.poll(0.1)
        consumer.close()  # commits; LeaveGroup for dynamic members only

    start = time.monotonic()
    for action in data["actions"]:
        time.sleep(max(0.0, start + _seconds(action["at"]) - time.monotonic()))
        name = action["consumer"]
        if action["action"] == "join":
            stop[name] = threading.Event()
            threads[name] = threading.Thread(target=run, args=(name,), daemon=True)
            threads[name].start()
        else:
            stop[name].set()
            threads[name].join(30)
    time.sleep(max(0.0, start + _seconds(data["duration"]) - time.monotonic()))
    for name in threads:
        stop[name].set()
    for thread in threads.values():
        thread.join(30)


def produce(bootstrap: str, topic: str) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # keep a reference until the result arrives
    admin.create_topics([NewTopic(topic, 6, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition in range(6):
        for _ in range(RECORDS_PER_PARTITION):
            producer.produce(topic, value=b"x", partition=partition)
    assert producer.flush(30) == 0


def read_back(bootstrap: str, group: str) -> list:
    """The decoded records of ``group`` in its ``__consumer_offsets`` partition, in log order."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as KafkaPartition

    reader = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    reader.assign([KafkaPartition("__consumer_offsets", coordinator_partition(group, OFFSETS_PARTITIONS), 0)])
    records = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        message = reader.poll(1.0)
        if message is None:
            continue
        if message.error():
            break  # end of partition
        record = decode_record(message.key(), message.value())
        if record.key.get("group") == group:
            records.append(record)
    reader.close()
    return records


# -- comparing --------------------------------------------------------------------------------------


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


@pytest.mark.long  # ~20 s of consumers on the broker: make test-long (Makefile)
def test_the_simulator_writes_the_generations_assignments_and_offsets_a_real_broker_writes(kafka_broker) -> None:  # noqa: ANN001
    bootstrap = kafka_broker.bootstrap_servers
    # Every consumer is closed by the end, as the real run must close them. Static members do not
    # send LeaveGroup, so c3's session (6 s) expires; dynamic members leave at once.
    runs = {
        "static-range": scenario(
            "static-range", "range", True, [("9s", "c3"), ("18s", "c2"), ("18s", "c1")], duration="19s"
        ),
        "dynamic-roundrobin": scenario(
            "dynamic-roundrobin", "roundrobin", False, [("9s", "c3"), ("11s", "c2"), ("14s", "c1")], duration="15s"
        ),
    }
    expected_members = {
        "static-range": [[], ["c1"], ["c1", "c2"], ["c1", "c2", "c3"], ["c1", "c2"]],
        "dynamic-roundrobin": [[], ["c1"], ["c1", "c2"], ["c1", "c2", "c3"], ["c1", "c2"], ["c1"], []],
    }
    for data in runs.values():
        produce(bootstrap, data["topics"][0]["name"])
    players = [threading.Thread(target=play, args=(bootstrap, data)) for data in runs.values()]
    for player in players:
        player.start()
    for player in players:
        player.join(120)

    for name, data in runs.items():
        group, topic = data["consumers"][0]["group"], data["topics"][0]["name"]
        real = read_back(bootstrap, group)
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
