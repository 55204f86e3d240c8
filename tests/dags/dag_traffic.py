"""The real groups whose commits the offsets_ingest DAG's run ingests (tests/dags/conftest.py ``ingested``).

Not in conftest.py: that module sets Airflow's environment when it is imported, and this one is imported by
the background builds (tests/background.py) too.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from broker.workload import coordinator_not_ready, create_topic, produce_messages, run_members
from conf.settings import KafkaSettings, Settings
from pipelines.end_offsets import snapshot_end_offsets
from tests.ingest_scope import from_now_on

TOPIC_PARTITIONS = 3
MESSAGES = 60


def _wait_for_members(client: dict[str, str], group: str, count: int, running: Future[Any],
                      timeout: float = 60.0) -> None:
    """Until the coordinator describes ``group`` as Stable with ``count`` members (AdminClient DescribeGroups).

    Right after a broker starts, the coordinator of ``__consumer_offsets``' partition may not be loaded yet:
    NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS and the like are retriable (Kafka's protocol says to ask
    again), so they count as "not yet" until the deadline. Seen when tests/dags ran alone, the DAG's groups
    being then the first the background broker coordinated.
    """
    from confluent_kafka import ConsumerGroupState, KafkaException
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(client)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not running.done():
        try:
            description = admin.describe_consumer_groups([group])[group].result(timeout=10)
        except KafkaException as exc:
            if not coordinator_not_ready(exc.args[0]):
                raise
        else:
            if description.state == ConsumerGroupState.STABLE and len(description.members) == count:
                return
        time.sleep(0.1)
    if running.done():
        running.result()  # the members failed: their error
    raise TimeoutError(f"{group} did not reach {count} members in {timeout:.0f} s")


def build_dag_traffic(spark: Any, kafka_broker: Any, base_settings: Settings, root: Path) -> dict[str, Any]:
    """Real groups commit on ``kafka_broker``: a classic group (two members, range) and a KIP-848 one read a
    topic; then one end-offset snapshot (what the end_offsets_snapshot DAG takes every minute), so that the
    DAG's lag task has something to join the ingested commits with. Built in the background (tests/background.py),
    the last build there, so that nothing else reaches this broker's ``__consumer_offsets`` before the DAG's ingest."""
    settings = base_settings.model_copy(update={"warehouse": str(root / "warehouse"),
                                   "kafka": KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers)})
    settings = from_now_on(settings)  # ingest this traffic, not the broker's earlier builds
    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:8]
    topic = f"dag-orders-{suffix}"
    create_topic(client, topic, TOPIC_PARTITIONS)
    billing = f"dag-billing-{suffix}"
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dag-billing") as pool:
        # The messages come once both members are in: else the first one to join may read all 60 before
        # the second joins, and the test of two members in one generation would depend on timing.
        members = pool.submit(run_members, client, topic, billing, MESSAGES, members=2, assignor="range")
        _wait_for_members(client, billing, 2, members)
        produce_messages(client, topic, MESSAGES, TOPIC_PARTITIONS)
        classic = members.result()
    modern = run_members(client, topic, f"dag-shipping-{suffix}", MESSAGES, members=2, protocol="consumer")
    snapshot_end_offsets(spark, settings, [topic])
    return {"settings": settings, "topic": topic, "classic": classic, "modern": modern}
