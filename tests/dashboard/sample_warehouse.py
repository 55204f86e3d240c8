"""One small real warehouse for the SQL views, the ``sql`` command and the dashboard, built once per test run.

Everything goes through the real path: consumers of confluent-kafka against a real broker (the
background builds' own, tests/background.py), the ingest of ``__consumer_offsets``, the gold
refresh, end-offset snapshots and the lag refresh. The story
(what the tests reason from):

* topic T, 4 partitions, 200 messages (50 per partition);
* ``alpha`` (classic, range): member a1 joins alone and reads all 200, committing 50 per partition
  (generation 1: a1 owns the 4 partitions). Kafka 4.2's coordinator records a new classic group when the
  first JoinGroup creates it, as generation 0, Empty, so gold counts 0 -> 1 as a rebalance (a1 joined).
  ``between_generations`` is taken now. Member a2 joins (generation 2: two partitions each), a2 leaves
  (generation 3: a1 owns all 4), a1 leaves (generation 4, Empty). Four rebalances; two members joined
  and both left;
* end-offset snapshot s1 (ends 50); first ingest + gold refresh (``first_versions``: every gold table's
  Delta version after it);
* 100 more messages (ends 75); snapshot s2;
* ``beta`` (classic, roundrobin): member b1 joins alone, reads all 300 and commits 75 per partition, and
  is still a member when the warehouse is read (Stable, generation 1; one rebalance, 0 -> 1);
* ``gamma`` (KIP-848, ``group.protocol=consumer``): one member reads all 300, commits 75 per partition,
  leaves;
* ``sigma`` (classic, range, static membership): member s1 (``group.instance.id`` set, 6 s session timeout)
  reads all 300 and commits, closes (a static member sends no LeaveGroup, KIP-345) and comes back with the
  same instance id within its session timeout: one rebalance (0 -> 1, s1 joined) and one static member
  restart (a new member id, the same generation); the returned member stays until after the ingest;
* ``omega`` (classic, range): member o1 reads all 300, commits 75 per partition, leaves, and the group is
  deleted (AdminClient DeleteGroups): its 4 offsets and the group are tombstoned;
* snapshot s3 (ends 75); second ingest, gold refresh and lag refresh; then b1 and s1 close (not ingested).

Lag (latest_offset - committed): alpha 0 at s1, 25 per partition (100) at s2 and s3; beta and gamma
have committed only after s2, so they have rows at s3 only, with lag 0.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conf.settings import KafkaSettings, Settings
from tests.ingest_scope import from_now_on

PARTITIONS = 4


@dataclass(frozen=True)
class SampleWarehouse:
    settings: Settings
    topic: str
    alpha: str
    beta: str
    gamma: str
    sigma: str
    omega: str
    static_instance: str
    a1_client: str
    a2_client: str
    b1_client: str
    before_a2_joined: dt.datetime
    between_generations: dt.datetime
    during_second_generation: dt.datetime
    after_a2_left: dt.datetime
    after_alpha_empty: dt.datetime
    first_versions: dict[str, int]
    after_first_refresh: dt.datetime


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _consumer(client: dict[str, str], group: str, client_id: str, assignor: str = "range",
              protocol: str = "classic", instance: str | None = None) -> Any:
    from confluent_kafka import Consumer

    conf: dict[str, object] = {**client, "group.id": group, "client.id": client_id,
                               "auto.offset.reset": "earliest", "enable.auto.commit": False,
                               "group.protocol": protocol}
    if protocol == "classic":
        # A long max.poll.interval.ms: beta's member must stay in the group while the ingest runs.
        conf.update({"partition.assignment.strategy": assignor, "session.timeout.ms": 6000,
                     "heartbeat.interval.ms": 500, "max.poll.interval.ms": 900_000})
    if instance is not None:
        conf["group.instance.id"] = instance
    return Consumer(conf)


def _poll_until(consumers: list[Any], done: Any, timeout: float = 60.0, what: str = "") -> None:
    """Poll every consumer in turn (so each serves its rebalances) until ``done()``."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        for consumer in consumers:
            for message in consumer.consume(num_messages=50, timeout=0.2):
                if message.error():
                    raise RuntimeError(str(message.error()))


def _read_all_and_commit(consumer: Any, topic: str, expected: int, timeout: float = 60.0) -> None:
    from confluent_kafka import TopicPartition

    consumed = 0
    deadline = time.monotonic() + timeout
    while consumed < expected:
        if time.monotonic() > deadline:
            raise TimeoutError(f"read {consumed}/{expected}")
        batch: dict[int, int] = {}
        for message in consumer.consume(num_messages=100, timeout=0.5):
            if message.error():
                raise RuntimeError(str(message.error()))
            batch[message.partition()] = message.offset() + 1
            consumed += 1
        if batch:
            consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in sorted(batch.items())],
                            asynchronous=False)


def _gold_versions(spark: Any, settings: Settings) -> dict[str, int]:
    from delta.tables import DeltaTable

    from pipelines.delta_tables import table_path
    from pipelines.gold.refresh import GOLD

    return {spec.name: DeltaTable.forPath(spark, str(table_path(settings, spec))).history(1).collect()[0]["version"]
            for spec in GOLD}


def build_sample_warehouse(spark: Any, kafka_broker: Any, base_settings: Settings, root: Path) -> SampleWarehouse:
    """The story above on ``kafka_broker``, under ``root`` (tests/background.py builds it once per run)."""
    from broker.workload import create_topic, delete_group, produce_messages
    from pipelines.end_offsets import snapshot_end_offsets
    from pipelines.gold.consumer_lag import refresh_consumer_lag
    from pipelines.gold.refresh import refresh_gold
    from pipelines.ingest import IngestOptions, run_ingest

    settings = base_settings.model_copy(update={"warehouse": str(root / "warehouse"),
                                   "kafka": KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers)})
    settings = from_now_on(settings)  # ingest this module's traffic, not every earlier test's
    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:6]
    topic, alpha, beta, gamma, sigma, omega = (f"{name}-{suffix}" for name in
                                               ("dash", "alpha", "beta", "gamma", "sigma", "omega"))
    static_instance = f"s-{suffix}"
    a1_client, a2_client, b1_client = f"a1-{suffix}", f"a2-{suffix}", f"b1-{suffix}"
    create_topic(client, topic, PARTITIONS)
    produce_messages(client, topic, 200, PARTITIONS)

    a1 = _consumer(client, alpha, a1_client)
    a1.subscribe([topic])
    _read_all_and_commit(a1, topic, 200)
    before_a2_joined = _now()
    time.sleep(0.05)
    between_generations = _now()
    time.sleep(0.05)
    a2 = _consumer(client, alpha, a2_client)
    a2.subscribe([topic])
    _poll_until([a1, a2], lambda: len(a1.assignment()) == 2 and len(a2.assignment()) == 2,
                what="alpha's second generation")
    during_second_generation = _now()
    # A moment has microseconds, a record's append time milliseconds: without a gap, a record written
    # within the same millisecond as the moment (a1's LeaveGroup, once) gets a time *before* it.
    time.sleep(0.005)
    a2.close()
    _poll_until([a1], lambda: len(a1.assignment()) == PARTITIONS, what="alpha's third generation")
    after_a2_left = _now()
    time.sleep(0.005)
    a1.close()
    after_alpha_empty = _now()

    snapshot_end_offsets(spark, settings, [topic])
    run_ingest(spark, settings, IngestOptions(once=True))
    refresh_gold(spark, settings)
    first_versions = _gold_versions(spark, settings)
    time.sleep(1.0)  # Delta commit times have millisecond resolution; keep this moment clear of both refreshes
    after_first_refresh = _now()
    time.sleep(1.0)

    produce_messages(client, topic, 100, PARTITIONS)
    snapshot_end_offsets(spark, settings, [topic])
    b1 = _consumer(client, beta, b1_client, assignor="roundrobin")
    s1: Any = None
    try:
        b1.subscribe([topic])
        _read_all_and_commit(b1, topic, 300)
        g1 = _consumer(client, gamma, f"g1-{suffix}", protocol="consumer")
        g1.subscribe([topic])
        _read_all_and_commit(g1, topic, 300)
        g1.close()
        first_s1 = _consumer(client, sigma, f"s1-{suffix}", instance=static_instance)
        first_s1.subscribe([topic])
        _read_all_and_commit(first_s1, topic, 300)
        first_s1.close()
        s1 = _consumer(client, sigma, f"s1-{suffix}", instance=static_instance)
        s1.subscribe([topic])
        _poll_until([s1], lambda: len(s1.assignment()) == PARTITIONS, what="sigma's static member back")
        o1 = _consumer(client, omega, f"o1-{suffix}")
        o1.subscribe([topic])
        _read_all_and_commit(o1, topic, 300)
        o1.close()
        delete_group(client, omega)
        snapshot_end_offsets(spark, settings, [topic])
        run_ingest(spark, settings, IngestOptions(once=True))
        refresh_gold(spark, settings)
        refresh_consumer_lag(spark, settings)
    finally:
        b1.close()
        if s1 is not None:
            s1.close()
    return SampleWarehouse(
        settings=settings, topic=topic, alpha=alpha, beta=beta, gamma=gamma, sigma=sigma, omega=omega,
        static_instance=static_instance, a1_client=a1_client,
        a2_client=a2_client, b1_client=b1_client, before_a2_joined=before_a2_joined,
        between_generations=between_generations, during_second_generation=during_second_generation,
        after_a2_left=after_a2_left,
        after_alpha_empty=after_alpha_empty, first_versions=first_versions,
        after_first_refresh=after_first_refresh,
    )
