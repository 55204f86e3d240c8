"""Real client traffic for the embedded broker: a topic, messages, and a consumer group that commits.

This is what puts OffsetCommit (key type 1) and GroupMetadata (key type 2)
records into ``__consumer_offsets`` for the demo and the integration tests.
Everything goes through confluent-kafka against the real broker; nothing is faked.
"""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GroupRun:
    """What a consumer group did: which partitions it committed and up to where."""

    group_id: str
    topic: str
    consumed: int
    committed: dict[int, int] = field(default_factory=dict)  # partition -> next offset


def coordinator_not_ready(error: Any) -> bool:
    """Whether a ``KafkaError`` means "ask again": retriable, or the group coordinator moving or still loading
    (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE right after a broker starts or a
    group's first records), or a client-side timeout."""
    from confluent_kafka import KafkaError

    return error.retriable() or error.code() in (
        KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError._TIMED_OUT)


def create_topic(client_config: dict[str, str], topic: str, partitions: int, timeout: float = 30.0,
                 config: dict[str, str] | None = None) -> None:
    """Create ``topic`` and wait until every partition has a leader.

    ``config`` sets topic configs, e.g. ``{"retention.ms": "-1"}`` for records
    with old timestamps (simulated scenarios), which time-based retention would
    otherwise delete at once.
    """
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(client_config)
    new_topic = NewTopic(topic, num_partitions=partitions, replication_factor=1, config=config or {})
    futures = admin.create_topics([new_topic], operation_timeout=timeout)
    futures[topic].result(timeout=timeout)
    # Wait until the partitions have leaders, or a consumer may see an empty topic.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        meta = admin.list_topics(topic, timeout=5).topics.get(topic)
        if meta and meta.error is None and len(meta.partitions) == partitions and all(
            p.leader >= 0 for p in meta.partitions.values()
        ):
            return
        time.sleep(0.2)
    raise TimeoutError(f"topic {topic} has no leaders after {timeout}s")


def produce_messages(client_config: dict[str, str], topic: str, count: int, partitions: int) -> None:
    """``count`` small messages spread round-robin over the partitions."""
    from confluent_kafka import Producer

    producer = Producer({**client_config, "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, key=str(i).encode(), value=f"message-{i}".encode(), partition=i % partitions)
        if i % 1000 == 0:
            producer.poll(0)
    remaining = producer.flush(30)
    if remaining:
        raise RuntimeError(f"{remaining} messages were not delivered to {topic}")


def read_and_commit(consumer: Any, topic: str, *, num_messages: int, timeout: float) -> tuple[dict[int, int], int]:
    """One ``consume()`` of ``topic``, committed synchronously (one OffsetCommit record); (partition -> next
    offset committed, messages read). Raises KafkaException for a message that carries an error.

    A commit the coordinator refuses because the group moved on meanwhile (another member joined or left:
    ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID for a classic group, STALE_MEMBER_EPOCH for a
    KIP-848 one; ``GroupMetadataManager``/``OffsetMetadataManager`` validate the generation or epoch of every
    commit) is what a real application sees and shrugs off: nothing was committed, so whoever owns those
    partitions after the rebalance reads the messages again from the last committed offset; a partition this
    member keeps (cooperative-sticky, KIP-848) is rewound to the batch's first message, since its fetch position
    would otherwise move on past them. Then ``({}, 0)``: nothing committed, nothing counted as read.
    """
    from confluent_kafka import KafkaError, KafkaException, TopicPartition

    messages = consumer.consume(num_messages=num_messages, timeout=timeout)
    batch: dict[int, int] = {}
    first: dict[int, int] = {}
    for message in messages:
        if message.error():
            raise KafkaException(message.error())
        batch[message.partition()] = message.offset() + 1
        first.setdefault(message.partition(), message.offset())
    if batch:
        try:
            consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in sorted(batch.items())],
                            asynchronous=False)
        except KafkaException as exc:
            if exc.args[0].code() not in (KafkaError.ILLEGAL_GENERATION, KafkaError.REBALANCE_IN_PROGRESS,
                                          KafkaError.UNKNOWN_MEMBER_ID, KafkaError.STALE_MEMBER_EPOCH):
                raise
            for partition, offset in first.items():
                with contextlib.suppress(KafkaException):  # no longer assigned: its next owner reads it
                    consumer.seek(TopicPartition(topic, partition, offset))
            return {}, 0
    return batch, len(messages)


class _SharedProgress:
    """What the members of one group have read and committed so far, shared by their threads."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.consumed = 0
        self.committed: dict[int, int] = {}
        self.done = threading.Event()
        self._lock = threading.Lock()

    def add(self, committed: dict[int, int], consumed: int) -> None:
        with self._lock:
            self.committed.update(committed)
            self.consumed += consumed
            if self.consumed >= self.expected:
                self.done.set()


def run_members(client_config: dict[str, str], topic: str, group_id: str, expected: int, *,
                members: int = 2, assignor: str = "range", protocol: str = "classic",
                instance_ids: list[str] | None = None, timeout: float = 90.0) -> GroupRun:
    """Run ``members`` consumers of one group side by side until ``expected`` messages are read.

    Each consumer reads in its own thread and commits what it read synchronously. ``protocol="consumer"``
    uses KIP-848 (the broker assigns; ``assignor`` is ignored). With
    ``instance_ids`` the members are static (``group.instance.id``, KIP-345):
    closing them sends no LeaveGroup, so they stay in the group until their
    session times out. Dynamic members leave on ``close()``.
    """
    from confluent_kafka import Consumer

    consumers = []
    for index in range(members):
        conf: dict[str, object] = {
            **client_config,
            "group.id": group_id,
            "client.id": f"{group_id}-{index}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "group.protocol": protocol,
        }
        if protocol == "classic":
            conf.update({"partition.assignment.strategy": assignor, "session.timeout.ms": 6000,
                         "heartbeat.interval.ms": 500})
        if instance_ids:
            conf["group.instance.id"] = instance_ids[index]
        consumers.append(Consumer(conf))
    progress = _SharedProgress(expected)
    deadline = time.monotonic() + timeout

    def serve(consumer: Consumer) -> None:
        # Each member reads and commits in its own thread, as members of a real application do.
        # Served from one thread in turn, a member whose synchronous commit waits behind its own
        # blocking JoinGroup (librdkafka sends group requests to the coordinator one at a time)
        # starves the other member's rejoin, so the rebalance only ends at the rebalance timeout
        # (seen in CI, cooperative-sticky: the commit timed out after 60 s, three times).
        while not progress.done.is_set():
            if time.monotonic() > deadline:
                raise TimeoutError(f"group {group_id} consumed {progress.consumed}/{expected} messages in {timeout}s")
            batch, read = read_and_commit(consumer, topic, num_messages=50, timeout=0.3)
            if batch:
                progress.add(batch, read)
    try:
        for consumer in consumers:
            consumer.subscribe([topic])
        with ThreadPoolExecutor(len(consumers), thread_name_prefix=group_id) as pool:
            runs = [pool.submit(serve, consumer) for consumer in consumers]
            wait(runs, return_when=FIRST_EXCEPTION)
            progress.done.set()  # one member failed or all is read: the others stop at their next poll
            for run in runs:
                run.result()
    finally:
        close_one_by_one(consumers, leave_first=not instance_ids)
    return GroupRun(group_id=group_id, topic=topic, consumed=progress.consumed, committed=progress.committed)


def close_one_by_one(consumers: list, *, leave_first: bool = True, settle_seconds: float = 10.0) -> None:
    """Close ``consumers`` in order, serving every rebalance with ``poll()`` and none inside ``close()``.

    Why: librdkafka serves a pending rebalance event inside ``close()``; when that event grants
    partitions, the ``assign`` it makes can wait forever (confluentinc/librdkafka#4884, open), and
    confluent-kafka makes it while holding the GIL, so every other Python thread stops too. Seen
    here once in the decoder oracle's workload (seven groups in threads): the whole suite hung.
    So before each ``close()``: a dynamic member first unsubscribes (the LeaveGroup ``close()``
    would send) and is polled until its revocation is served; the members still open are polled
    until their assignments stop changing (0.3 s), so the rebalance the leave started is served by
    ``poll()``. Static members (``leave_first=False``, KIP-345) send no LeaveGroup, so they are
    only polled until the group is quiet. Bounded by ``settle_seconds`` per member; ``close()``
    always runs.
    """
    from confluent_kafka import KafkaException

    def assignments(members: list) -> list[list[tuple[str, int]]]:
        return [sorted((tp.topic, tp.partition) for tp in member.assignment()) for member in members]

    for index, consumer in enumerate(consumers):
        others = consumers[index + 1:]
        try:
            if leave_first:
                consumer.unsubscribe()
            deadline = time.monotonic() + settle_seconds
            last, quiet_since = assignments(others), time.monotonic()
            while time.monotonic() < deadline:
                for member in (consumer, *others):
                    member.poll(0.05)
                now = assignments(others)
                if now != last:
                    last, quiet_since = now, time.monotonic()
                left = not leave_first or not consumer.assignment()
                if left and (not others or time.monotonic() - quiet_since >= 0.3):
                    break
        except (KafkaException, RuntimeError):
            pass  # closing anyway
        finally:
            consumer.close()


def commit_offsets_in_transaction(client_config: dict[str, str], group_id: str, topic: str,
                                  offsets: dict[int, int], *, transactional_id: str, abort: bool) -> None:
    """A transactional producer commits (or aborts) offsets for ``group_id`` (TxnOffsetCommit).

    Kafka writes these offset commits as transactional records followed by a
    COMMIT or ABORT marker; a ``read_committed`` reader never sees aborted ones.
    """
    from confluent_kafka import Consumer, Producer, TopicPartition

    producer = Producer({**client_config, "transactional.id": transactional_id})
    metadata_source = Consumer({**client_config, "group.id": group_id, "enable.auto.commit": False})
    try:
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(topic, key=b"txn", value=transactional_id.encode(), partition=0)
        producer.send_offsets_to_transaction(
            [TopicPartition(topic, p, o) for p, o in sorted(offsets.items())],
            metadata_source.consumer_group_metadata(), 30,
        )
        if abort:
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
    finally:
        metadata_source.close()
        producer.flush(10)


def delete_group(client_config: dict[str, str], group_id: str, timeout: float = 30.0) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(client_config)  # keep a reference until the future resolves
    futures = admin.delete_consumer_groups([group_id], request_timeout=timeout)
    futures[group_id].result(timeout=timeout)


def delete_offsets(bootstrap_servers: str, group_id: str, topic: str, partitions: list[int]) -> None:
    """OffsetDelete through Kafka's own ``kafka-consumer-groups --delete-offsets``.

    confluent-kafka's Python admin client has no DeleteConsumerGroupOffsets, so
    the request is made by Kafka's ConsumerGroupCommand from the resolved jars.
    """
    import subprocess

    from jvm.artifacts import kafka_classpath

    spec = f"{topic}:{','.join(str(p) for p in partitions)}"
    result = subprocess.run(
        ["java", "-Xmx256m", "-cp", kafka_classpath(), "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
         "--bootstrap-server", bootstrap_servers, "--delete-offsets", "--group", group_id, "--topic", spec],
        capture_output=True, text=True, timeout=120,
    )
    if result.returncode != 0 or "Error" in result.stdout:
        detail = f"{result.stdout.strip()} {result.stderr.strip()}"
        raise RuntimeError(f"deleting offsets of {group_id} {spec} failed: {detail}")
