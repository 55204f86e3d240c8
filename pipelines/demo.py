"""The end-to-end demo: real broker, real consumer group, Spark reading ``__consumer_offsets`` into Delta.

Steps: start the embedded broker; create a topic and produce messages; run a
classic-protocol consumer group that consumes and commits; let Spark drain
``__consumer_offsets`` (``Trigger.AvailableNow``) into the raw Delta table;
count records per key type; stop the broker.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from conf.settings import Settings

KEY_TYPE_NAMES = {0: "legacy offset commit", 1: "offset commit", 2: "group metadata"}


@dataclass(frozen=True)
class DemoResult:
    bootstrap_servers: str
    table_path: Path
    records_per_key_type: dict[int | None, int]
    committed: dict[int, int]
    seconds: float


def run_demo(settings: Settings, *, broker_dir: Path | None = None, topic: str = "demo-orders",
             group_id: str = "demo-group", partitions: int = 3, messages: int = 300,
             report: Callable[[str], None] = lambda line: None) -> DemoResult:
    from broker.embedded import EmbeddedBroker
    from broker.workload import consume_and_commit, create_topic, produce_messages
    from pipelines.raw_records import land_raw_records, records_per_key_type
    from pipelines.spark_session import build_spark_session

    started = time.monotonic()
    temp = None
    if broker_dir is None:
        temp = tempfile.TemporaryDirectory(prefix="offsetlake-demo-broker-")
        broker_dir = Path(temp.name)
    try:
        report(f"starting the embedded Kafka broker in {broker_dir} ...")
        with EmbeddedBroker(broker_dir) as broker:
            report(f"broker ready at {broker.bootstrap_servers}")
            kafka = dataclasses.replace(settings.kafka, bootstrap_servers=broker.bootstrap_servers)
            settings = dataclasses.replace(settings, kafka=kafka)
            client = kafka.librdkafka_config()
            create_topic(client, topic, partitions)
            produce_messages(client, topic, messages, partitions)
            report(f"produced {messages} messages to {topic} ({partitions} partitions)")
            run = consume_and_commit(client, topic, group_id, messages)
            report(f"consumer group {group_id} consumed {run.consumed} messages and committed "
                   f"{dict(sorted(run.committed.items()))}")
            report("starting Spark and draining __consumer_offsets into Delta (Trigger.AvailableNow) ...")
            spark = build_spark_session(settings)
            landing = land_raw_records(spark, settings)
            counts = records_per_key_type(spark, landing)
        return DemoResult(
            bootstrap_servers=broker.bootstrap_servers if broker.state else kafka.bootstrap_servers,
            table_path=landing.table_path,
            records_per_key_type=counts,
            committed=run.committed,
            seconds=time.monotonic() - started,
        )
    finally:
        if temp is not None:
            temp.cleanup()
