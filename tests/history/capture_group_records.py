"""Capture real share-group and streams-group records from a Kafka 4.2 broker, for the pure replay's tests.

Regenerate (about three minutes; starts a broker of its own in a temporary directory):

    PYTHONPATH=$PWD .venv/bin/python -m tests.history.capture_group_records [SCENARIO ...] [--into DIR]

Each scenario drives real clients (broker/group_clients.py: Kafka's ``KafkaShareConsumer``, a Kafka Streams
application with ``group.protocol=streams``) step by step, waits at each step until the Admin client shows
the group settled, and writes into ``tests/history/captured/``:

``<scenario>.jsonl``
    the group's ``__consumer_offsets`` records, one JSON object a line, in log order (a group lives on one
    partition): ``{"partition", "offset", "timestamp" (ms, as the broker stored it), "key" (base64),
    "value" (base64, or null for a tombstone)}``. Read from the beginning with ``isolation.level=read_committed``
    up to the end after the last step; kept: the records whose key decodes to the scenario's group (offset
    commits of a streams group included).
``<scenario>.describe.json``
    ``{"scenario", "group", "kafka_version", "topics": {name: partitions}, "group_config": {...}, "steps": [{"step",
    "after_offset", "describe"}]}``: what the Admin client (``describeShareGroups`` / ``describeStreamsGroups``)
    showed after each step, and the offset of the group's last record by then (replaying the records up to
    and including ``after_offset`` must give that state). A deleted group describes as
    ``{"group_id", "state": "DEAD", "error"}``. The shapes (broker/clients/GroupClients.java ``describeShare`` /
    ``describeStreams``; members sorted by client id, partitions and task ids sorted)::

        share:   {"group_id", "state", "group_epoch", "assignment_epoch", "coordinator",
                  "members": [{"member_id", "client_id", "host", "rack_id", "member_epoch",
                               "assignment": [{"topic", "partition"}]}]}
        streams: {"group_id", "state", "group_epoch", "target_assignment_epoch", "topology_epoch", "coordinator",
                  "subtopologies": [{"subtopology_id", "source_topics", "repartition_sink_topics",
                                     "state_changelog_topics": {name: {"partitions", "replication_factor"}},
                                     "repartition_source_topics": {...}}],
                  "members": [{"member_id", "client_id", "instance_id", "rack_id", "member_epoch",
                               "topology_epoch", "process_id", "host", "is_classic",
                               "assignment": {"active": [{"subtopology_id", "partitions"}], "standby", "warmup"},
                               "target_assignment": {...}}]}

    ``after_offset`` is an offset of the group's ``__consumer_offsets`` partition, which other groups may share.
    A streams member's client id is Streams' consumer's, ``<client.id>-StreamThread-1-consumer``; Kafka 4.2's
    Streams client sends no instance id and no rack, so both are null in its records.

Scenarios:

``share_join_leave_crash``
    share group ``share-g`` on ``share-t`` (3 partitions), group config ``share.auto.offset.reset=earliest``;
    steps ``join-a``, ``join-b``, ``join-c`` (c with ``client.rack=rack-c``), ``leave-b`` (clean close: leave
    heartbeat), ``crash-c`` (SIGKILL, fenced when its 6 s session expires), ``leave-a`` (group EMPTY),
    ``delete`` (Admin ``deleteShareGroups``: tombstones).
``streams_join_leave_crash``
    streams group (``application.id``) ``streams-g``: ``streams-in`` (3 partitions) -> groupBy value (repartition
    topic ``streams-g-by-value-repartition``) -> count (store ``counts``, changelog ``streams-g-counts-changelog``)
    -> ``streams-out``; two subtopologies, "0" stateless, "1" stateful; group config
    ``streams.num.standby.replicas=1``, so with two or more members subtopology 1 has standby tasks; steps as
    for the share group (no rack: Kafka 4.2's Streams client sends none), ending with ``deleteStreamsGroups``.

Every captured record must decode with ``decoders.decode_record`` (tests/history/test_captured_group_records.py).
A second run gives new member ids and, by the timing of each member's reconciliation, a few more or fewer
current-assignment records (77 or 78 for the streams scenario): the tests of the replay read these files, not
counts of them.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker.embedded import TEST_FRIENDLY_PROPERTIES, EmbeddedBroker
from broker.group_clients import GroupAdmin, GroupClients, Member, settled_share_group, settled_streams_group
from broker.workload import create_topic, produce_messages
from decoders import coordinator_partition, decode_record

CAPTURED = Path(__file__).resolve().parent / "captured"
KAFKA_VERSION = "4.2.1"
OFFSETS_PARTITIONS = int(TEST_FRIENDLY_PROPERTIES["offsets.topic.num.partitions"])


@dataclass
class Capture:
    """One scenario's steps, as the Admin client saw them."""

    scenario: str
    group: str
    bootstrap_servers: str
    topics: dict[str, int]
    group_config: dict[str, str]
    steps: list[dict[str, Any]] = field(default_factory=list)

    def step(self, name: str, description: dict[str, Any]) -> None:
        self.steps.append({"step": name, "after_offset": last_offset(self.bootstrap_servers, self.group),
                           "describe": description})

    def describe_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "group": self.group, "kafka_version": KAFKA_VERSION,
                "topics": self.topics, "group_config": self.group_config, "steps": self.steps}


def last_offset(bootstrap_servers: str, group: str) -> int:
    """The offset of the last record on the group's ``__consumer_offsets`` partition (-1: none yet)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": "capture-watermarks",
                         "isolation.level": "read_committed"})
    try:
        _, high = consumer.get_watermark_offsets(
            TopicPartition("__consumer_offsets", coordinator_partition(group, OFFSETS_PARTITIONS)), timeout=10)
        return int(high) - 1
    finally:
        consumer.close()


def group_records(bootstrap_servers: str, group: str, timeout: float = 60.0) -> list[dict[str, Any]]:
    """The group's raw records on ``__consumer_offsets``, in log order, as the capture format writes them."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    partition = coordinator_partition(group, OFFSETS_PARTITIONS)
    end = last_offset(bootstrap_servers, group)
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": "capture-reader",
                         "enable.auto.commit": False, "isolation.level": "read_committed",
                         "enable.partition.eof": True})
    consumer.assign([TopicPartition("__consumer_offsets", partition, OFFSET_BEGINNING)])
    records: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    if (message.offset() or 0) > end:
                        break
                    continue
                raise RuntimeError(f"reading __consumer_offsets: {error}")
            key, value = message.key(), message.value()
            assert key is not None  # every __consumer_offsets record has a key
            if _group_of(key) == group:
                records.append({"partition": message.partition(), "offset": message.offset(),
                                "timestamp": message.timestamp()[1], "key": base64.b64encode(key).decode(),
                                "value": None if value is None else base64.b64encode(value).decode()})
        else:
            raise TimeoutError(f"__consumer_offsets-{partition} not read up to {end} within {timeout:.0f}s")
    finally:
        consumer.close()
    return records


def _group_of(key: bytes) -> str | None:
    """The group a key belongs to: ``group`` in offset-commit and classic keys, ``group_id`` in the KIP-848,
    share and streams ones (decoders/spec.py)."""
    decoded = decode_record(key, None)
    if not isinstance(decoded.key, dict):
        return None
    return decoded.key.get("group", decoded.key.get("group_id"))


def share_join_leave_crash(clients: GroupClients, admin: GroupAdmin) -> Capture:
    group, topic = "share-g", "share-t"
    capture = Capture("share_join_leave_crash", group, clients.bootstrap_servers, {topic: 3},
                      {"share.auto.offset.reset": "earliest"})
    config = {"bootstrap.servers": clients.bootstrap_servers}
    create_topic(config, topic, 3)
    produce_messages(config, topic, 30, 3)
    admin.set_group_config(group, **{k.replace(".", "_"): v for k, v in capture.group_config.items()})
    partitions = {(topic, p) for p in range(3)}

    def settled(members: int) -> dict[str, Any]:
        return admin.wait_for_share_group(group, settled_share_group(members, partitions))

    a = clients.share_member(group, "a", topic)
    capture.step("join-a", settled(1))
    b = clients.share_member(group, "b", topic)
    capture.step("join-b", settled(2))
    c = clients.share_member(group, "c", topic, rack="rack-c")
    capture.step("join-c", settled(3))
    produce_messages(config, topic, 30, 3)
    b.stop()
    capture.step("leave-b", settled(2))
    c.kill()
    capture.step("crash-c", settled(1))
    a.stop()
    capture.step("leave-a", admin.wait_for_share_group(group, lambda d: d["state"] == "EMPTY"))
    admin.delete_share_group(group)
    capture.step("delete", admin.wait_for_share_group(group, lambda d: d["state"] == "DEAD"))
    return capture


def streams_join_leave_crash(clients: GroupClients, admin: GroupAdmin) -> Capture:
    group, source, sink = "streams-g", "streams-in", "streams-out"
    # The session and heartbeat settings are the group's own too: a streams group with a config of its own
    # falls back to GroupConfig's static defaults (a 45 s session), not the broker's group.streams.* values,
    # which Kafka 4.2.1's GroupCoordinatorConfig.extractGroupConfigMap leaves out (consumer and share are in).
    capture = Capture("streams_join_leave_crash", group, clients.bootstrap_servers, {source: 3},
                      {"streams.num.standby.replicas": "1", "streams.session.timeout.ms": "6000",
                       "streams.heartbeat.interval.ms": "500"})
    config = {"bootstrap.servers": clients.bootstrap_servers}
    create_topic(config, source, 3)
    produce_messages(config, source, 30, 3)
    admin.set_group_config(group, **{k.replace(".", "_"): v for k, v in capture.group_config.items()})

    def settled(members: int) -> dict[str, Any]:
        return admin.wait_for_streams_group(group, settled_streams_group(members))

    def member(client_id: str) -> Member:
        return clients.streams_member(group, client_id, source, sink)

    a = member("a")
    capture.step("join-a", settled(1))
    b = member("b")
    capture.step("join-b", settled(2))
    c = member("c")
    capture.step("join-c", settled(3))
    produce_messages(config, source, 30, 3)
    b.stop()
    capture.step("leave-b", settled(2))
    c.kill()
    capture.step("crash-c", settled(1))
    a.stop()
    capture.step("leave-a", settled(0))
    admin.delete_streams_group(group)
    capture.step("delete", admin.wait_for_streams_group(group, lambda d: d["state"] == "DEAD"))
    return capture


SCENARIOS: dict[str, Callable[[GroupClients, GroupAdmin], Capture]] = {
    "share_join_leave_crash": share_join_leave_crash,
    "streams_join_leave_crash": streams_join_leave_crash,
}


def write(capture: Capture, records: list[dict[str, Any]], into: Path = CAPTURED) -> None:
    into.mkdir(parents=True, exist_ok=True)
    (into / f"{capture.scenario}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (into / f"{capture.scenario}.describe.json").write_text(json.dumps(capture.describe_json(), indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO", help=f"default: all ({', '.join(SCENARIOS)})")
    parser.add_argument("--into", type=Path, default=CAPTURED, help=f"where to write (default: {CAPTURED})")
    args = parser.parse_args(argv)
    unknown = [name for name in args.scenarios if name not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario {unknown[0]!r}; expected one of {', '.join(SCENARIOS)}")
    with tempfile.TemporaryDirectory(prefix="capture-group-records-") as work, \
            EmbeddedBroker(Path(work) / "broker") as broker:
        clients = GroupClients.compile(Path(work) / "clients", broker.bootstrap_servers)
        with clients.admin() as admin:
            for name in args.scenarios or list(SCENARIOS):
                started = time.monotonic()
                capture = SCENARIOS[name](clients, admin)
                records = group_records(broker.bootstrap_servers, capture.group)
                write(capture, records, args.into)
                types: dict[str, int] = {}
                for record in records:
                    value = None if record["value"] is None else base64.b64decode(record["value"])
                    decoded = decode_record(base64.b64decode(record["key"]), value)
                    kind = getattr(decoded, "type", "unknown") + (" (tombstone)" if value is None else "")
                    types[kind] = types.get(kind, 0) + 1
                print(f"{name}: {len(records)} records in {time.monotonic() - started:.0f}s: "
                      + ", ".join(f"{k} {v}" for k, v in sorted(types.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
