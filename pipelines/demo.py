"""The end-to-end demo: real broker, real consumer groups, the ingest pipeline into Delta.

Steps: start the embedded broker; create a topic and produce messages; run a
classic-protocol group (two members, range assignor) and a KIP-848 group that
consume and commit; take an end-offset snapshot, produce more, snapshot again;
run the main job as a scheduler would: ``ingest --once`` of
``__consumer_offsets`` into bronze and silver, the gold refresh, and the
consumer-lag refresh; summarise what landed; stop the broker.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conf.settings import Settings


@dataclass(frozen=True)
class DemoResult:
    warehouse: Path
    rows_per_table: dict[str, int]
    members: list[dict]
    lag: list[dict]
    seconds: float


def run_demo(settings: Settings, *, broker_dir: Path | None = None, topic: str = "demo-orders",
             partitions: int = 4, messages: int = 400,
             report: Callable[[str], None] = lambda line: None) -> DemoResult:
    from delta.tables import DeltaTable

    from broker.embedded import EmbeddedBroker
    from broker.workload import create_topic, produce_messages, run_members
    from pipelines.delta_tables import read_table, table_path
    from pipelines.end_offsets import snapshot_end_offsets
    from pipelines.gold.consumer_lag import latest_status, refresh_consumer_lag
    from pipelines.gold.refresh import refresh_gold
    from pipelines.ingest import IngestOptions, run_ingest
    from pipelines.spark_session import build_spark_session
    from schemas.catalog import TABLES

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
            classic = run_members(client, topic, "demo-billing", messages, members=2, assignor="range")
            report(f"classic group demo-billing (2 members, range) consumed {classic.consumed} and committed")
            modern = run_members(client, topic, "demo-shipping", messages, members=2, protocol="consumer")
            report(f"KIP-848 group demo-shipping (2 members) consumed {modern.consumed} and committed")
            report("starting Spark ...")
            spark = build_spark_session(settings)
            snapshot_end_offsets(spark, settings)
            produce_messages(client, topic, messages // 2, partitions)
            snapshot_end_offsets(spark, settings)
            report(f"produced {messages // 2} more messages; two end-offset snapshots taken")
            run_ingest(spark, settings, IngestOptions(once=True),
                       on_batch=lambda b: report(f"ingest batch {b.batch_id}: {b.records} records in {b.seconds:.1f}s"))
            gold = refresh_gold(spark, settings)
            report(f"gold refreshed: {gold}")
            refresh_consumer_lag(spark, settings)
            status = latest_status(spark, settings)
            counts = {name: read_table(spark, settings, spec).count() for name, spec in TABLES.items()
                      if DeltaTable.isDeltaTable(spark, str(table_path(settings, spec)))}
            members = [
                row.asDict(recursive=True) for row in read_table(spark, settings, TABLES["silver.group_members"])
                .orderBy("source_partition", "source_offset", "member_id")
                .select("group", "generation", "protocol", "client_id", "is_leader", "assigned_partitions").collect()
            ]
        return DemoResult(warehouse=settings.warehouse_path, rows_per_table=counts, members=members,
                          lag=status, seconds=time.monotonic() - started)
    finally:
        if temp is not None:
            temp.cleanup()
