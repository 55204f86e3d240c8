"""One warehouse of real group traffic, built once per run (tests/conftest.py ``real_traffic_warehouse``).

Both used to build their own: real consumers on the session broker, then an ingest, a gold refresh
and a lag refresh each. Now the two workloads run one after the other on the same broker and the
warehouse is ingested and refreshed once. Each module reads only its own groups (by name), except
tests/quality's "every expectation passes", which is the stronger for running over both.

* quality's part (``QualityTraffic``): a classic group (two members, range) reads a topic and
  leaves; an admin reset of its offsets to 0 while it is Empty (AlterConsumerGroupOffsets, what
  ``kafka-consumer-groups --reset-offsets`` does), then the group reads everything again; a KIP-848
  group; an end-offset snapshot of every topic, more messages, another snapshot;
* the demo's part (``DemoTraffic``): broker/demo_workload.py's scripted groups side by side, a
  second round of messages that every group but the lagging one reads, and an end-offset snapshot
  of the demo topic; the ingest and the refreshes run while the demo's members are still up, as in
  ``offsetlake demo``;
* the departures' part (``DepartureTraffic``): broker/departure_workload.py's three groups (a
  LeaveGroup, a SIGKILL, a static member back after its session expired) on a topic a producer keeps
  feeding, run beside the demo's scenarios.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from conf.settings import KafkaSettings, Settings
from tests.ingest_scope import from_now_on

QUALITY_PARTITIONS = 3
QUALITY_MESSAGES = 60
DEMO_PARTITIONS = 6
DEMO_FIRST_ROUND = 120
DEMO_SECOND_ROUND = 60  # 10 per partition: produce_messages goes round-robin
DEPARTURE_PARTITIONS = 4


@dataclass(frozen=True)
class QualityTraffic:
    topic: str
    classic: str
    modern: str


@dataclass(frozen=True)
class DemoTraffic:
    groups: Any  # broker.demo_workload.DemoGroups
    outcomes: dict[str, Any]  # group -> ScenarioOutcome
    gold: Any  # pipelines.demo.GoldRows of the demo's groups


@dataclass(frozen=True)
class DepartureTraffic:
    groups: Any  # broker.departure_workload.DepartureGroups
    departures: dict[str, Any]  # group -> Departure (what its clients lived through)
    gold: Any  # pipelines.demo.GoldRows of the departure groups


@dataclass(frozen=True)
class RealTraffic:
    settings: Settings
    quality: QualityTraffic
    demo: DemoTraffic
    departures: DepartureTraffic


def _quality_traffic(spark: Any, settings: Settings) -> QualityTraffic:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    from broker.workload import create_topic, produce_messages, run_members
    from pipelines.end_offsets import snapshot_end_offsets

    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:8]
    topic, classic, modern = f"quality-{suffix}", f"quality-classic-{suffix}", f"quality-kip848-{suffix}"
    create_topic(client, topic, QUALITY_PARTITIONS)
    produce_messages(client, topic, QUALITY_MESSAGES, QUALITY_PARTITIONS)
    run_members(client, topic, classic, QUALITY_MESSAGES, members=2, assignor="range")
    admin = AdminClient(client)
    reset = [TopicPartition(topic, p, 0) for p in range(QUALITY_PARTITIONS)]
    for future in admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(classic, reset)]).values():
        future.result(timeout=30)
    run_members(client, topic, classic, QUALITY_MESSAGES, members=2, assignor="range")
    run_members(client, topic, modern, QUALITY_MESSAGES, members=2, protocol="consumer")
    snapshot_end_offsets(spark, settings)
    produce_messages(client, topic, QUALITY_MESSAGES // 2, QUALITY_PARTITIONS)
    snapshot_end_offsets(spark, settings)
    return QualityTraffic(topic=topic, classic=classic, modern=modern)


def build_real_traffic(spark: Any, kafka_broker: Any, base_settings: Settings, root: Any) -> RealTraffic:
    """Run the workloads on ``kafka_broker`` (the background builds' own), then ingest, refresh gold and lag once."""
    from broker.demo_workload import DemoGroups, DemoWorkload
    from broker.departure_workload import DepartureGroups, DepartureWorkload
    from broker.workload import create_topic, produce_messages
    from pipelines.demo import collect_gold
    from pipelines.end_offsets import snapshot_end_offsets
    from pipelines.gold.consumer_lag import refresh_consumer_lag
    from pipelines.gold.refresh import refresh_gold
    from pipelines.ingest import IngestOptions, run_ingest

    settings = base_settings.model_copy(update={"warehouse": str(root / "warehouse"),
                                   "kafka": KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers)})
    settings = from_now_on(settings)  # this warehouse's traffic, not every earlier test's
    quality = _quality_traffic(spark, settings)
    client = settings.kafka.librdkafka_config()

    groups = DemoGroups(f"demo-{uuid.uuid4().hex[:6]}")
    topic = f"{groups.prefix}-orders"
    create_topic(client, topic, DEMO_PARTITIONS)
    produce_messages(client, topic, DEMO_FIRST_ROUND, DEMO_PARTITIONS)
    leaving = DepartureGroups(f"departures-{uuid.uuid4().hex[:6]}")
    create_topic(client, f"{leaving.prefix}-feed", DEPARTURE_PARTITIONS)
    with DemoWorkload(client, topic, DEMO_PARTITIONS, groups) as workload, \
            DepartureWorkload(client, f"{leaving.prefix}-feed", DEPARTURE_PARTITIONS, leaving) as departing, \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="departures-run") as side:
        # Side by side with the demo's scenarios: both mostly wait for sessions to expire.
        departures = side.submit(departing.run)
        outcomes = workload.run()
        produce_messages(client, topic, DEMO_SECOND_ROUND, DEMO_PARTITIONS)
        workload.catch_up()
        left = departures.result()
        snapshot_end_offsets(spark, settings, [topic])
        run_ingest(spark, settings, IngestOptions(once=True))
        refresh_gold(spark, settings)
        refresh_consumer_lag(spark, settings)
        gold = collect_gold(spark, settings, groups=groups.all() + leaving.all())
    demo = DemoTraffic(groups=groups, outcomes={o.group: o for o in outcomes}, gold=gold)
    return RealTraffic(settings=settings, quality=quality, demo=demo,
                       departures=DepartureTraffic(groups=leaving, departures=left, gold=gold))
