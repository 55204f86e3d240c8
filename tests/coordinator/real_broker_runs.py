"""Real consumers act out two scenarios on a real broker, in the background (for test_against_real_broker.py).

Real confluent-kafka (librdkafka) consumers act a scenario out in wall-clock time (19 s: joins 3 s apart,
sessions of 6 s expiring); the records the broker wrote to ``__consumer_offsets`` are read back and decoded.
That is waiting, not computing, so it runs among the background builds (tests/background.py), on their broker,
after the real-traffic warehouse (a broker whose group coordinator is loaded; the next build ingests only what is
written after it starts, tests/ingest_scope.py).
"""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any

from broker.embedded import TEST_FRIENDLY_PROPERTIES
from decoders import coordinator_partition, decode_record

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


def scenarios() -> dict[str, dict[str, Any]]:
    """Every consumer is closed by the end, as the real run must close them. Static members do not send
    LeaveGroup, so c3's session (6 s) expires; dynamic members leave at once."""
    return {
        "static-range": scenario(
            "static-range", "range", True, [("9s", "c3"), ("18s", "c2"), ("18s", "c1")], duration="19s"
        ),
        "dynamic-roundrobin": scenario(
            "dynamic-roundrobin", "roundrobin", False, [("9s", "c3"), ("11s", "c2"), ("14s", "c1")], duration="15s"
        ),
    }


def run_against_broker(spark: Any, broker: Any, base_settings: Any, root: Path) -> dict[str, dict[str, Any]]:
    """Both scenarios played at once on ``broker``: per scenario, its definition and the records the broker wrote."""
    bootstrap = broker.bootstrap_servers
    runs = scenarios()
    for data in runs.values():
        produce(bootstrap, data["topics"][0]["name"])
    players = [threading.Thread(target=play, args=(bootstrap, data)) for data in runs.values()]
    for player in players:
        player.start()
    for player in players:
        player.join(120)
    return {name: {"data": data, "real": read_back(bootstrap, data["consumers"][0]["group"])}
            for name, data in runs.items()}
