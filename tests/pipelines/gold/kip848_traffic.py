"""The KIP-848 traffic of tests/pipelines/gold/test_consumer_groups_on_broker.py (its docstring tells the story),
built once per run in the background on a broker of its own (tests/background.py), with its two ingests, two
refreshes and a full rebuild; what the tests read is returned as plain rows.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

from broker.workload import create_topic, produce_messages
from conf.settings import KafkaSettings, Settings
from pipelines.delta_tables import read_table
from pipelines.end_offsets import snapshot_end_offsets
from pipelines.gold.group_membership import TABLE as MEMBERSHIP
from pipelines.gold.refresh import GROUP_TABLES, full_rebuild, refresh_gold
from pipelines.ingest import IngestOptions, run_ingest
from tests.ingest_scope import from_now_on

PARTITIONS = 4


def _consumer(client: dict[str, str], group: str, name: str):  # type: ignore[no-untyped-def]
    from confluent_kafka import Consumer

    # The consumers idle while Spark ingests and refreshes between the two phases; a generous poll
    # interval keeps them in the group meanwhile (past it librdkafka leaves on its own).
    return Consumer({**client, "group.id": group, "client.id": name, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "group.protocol": "consumer", "max.poll.interval.ms": 3_600_000})


def _poll_until(consumers, done, what: str, limit_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    """Poll (and commit what was read) until ``done()``; the limit only guards against a hang."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + limit_s
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {limit_s}s for {what}")
        for consumer in consumers:
            message = consumer.poll(0.1)
            if message is not None and not message.error():
                try:
                    consumer.commit(message=message, asynchronous=False)
                except KafkaException:
                    pass  # STALE_MEMBER_EPOCH while the member moves to a new epoch: the next commit will do


def _owned(consumer) -> set[int]:  # type: ignore[no-untyped-def]
    return {tp.partition for tp in consumer.assignment()}


def build_kip848_traffic(spark: Any, kafka_broker: Any, base_settings: Settings, root: Path) -> dict[str, Any]:
    """Both groups' traffic on ``kafka_broker``, ingested and refreshed under ``root``; the rows the tests read."""
    settings = base_settings.model_copy(update={"warehouse": str(root / "warehouse"),
                                   "kafka": KafkaSettings(bootstrap_servers=kafka_broker.bootstrap_servers)})
    settings = from_now_on(settings)  # ingest this module's traffic, not every earlier test's
    client = settings.kafka.librdkafka_config()
    suffix = uuid.uuid4().hex[:8]
    topic, group = f"kip848-{suffix}", f"kip848-group-{suffix}"
    # The second group shares the ingests and refreshes (each costs seconds), not the first group's rows.
    second_topic, resubscribing = f"kip848-second-{suffix}", f"kip848-resubscribed-{suffix}"
    create_topic(client, topic, partitions=PARTITIONS)
    produce_messages(client, topic, 400, PARTITIONS)
    create_topic(client, second_topic, partitions=2)
    produce_messages(client, second_topic, 20, 2)
    stays, leaves = _consumer(client, group, "stays"), _consumer(client, group, "leaves")
    resubscribes = _consumer(client, resubscribing, "resubscribes")
    for consumer in (stays, leaves):
        consumer.subscribe([topic])
    subscriptions = [[topic], [topic, second_topic]]  # what `resubscribes` subscribes to, in this order

    def subscribe(topics: list[str]) -> None:
        resubscribes.subscribe(topics)
        partitions = PARTITIONS + (2 if second_topic in topics else 0)
        _poll_until([resubscribes], lambda: {tp.topic for tp in resubscribes.assignment()} == set(topics)
                    and len(resubscribes.assignment()) == partitions, f"the assignment of {topics}")

    try:
        # Settled: both own partitions, together all four (the broker's uniform assignor balances them).
        _poll_until([stays, leaves], lambda: _owned(stays) and _owned(leaves)
                    and len(_owned(stays)) + len(_owned(leaves)) == PARTITIONS, "both members assigned")
        both = {"stays": _owned(stays), "leaves": _owned(leaves)}
        subscribe(subscriptions[0])
        run_ingest(spark, settings, IngestOptions(once=True))
        refresh_gold(spark, settings)
        leaves.close()
        _poll_until([stays], lambda: len(_owned(stays)) == PARTITIONS, "the remaining member owning all")
        alone = _owned(stays)
        subscribe(subscriptions[1])  # the second refresh brings this change to the row the first one wrote
    finally:
        stays.close()
        leaves.close()
        resubscribes.close()
    run_ingest(spark, settings, IngestOptions(once=True))
    refresh_gold(spark, settings)
    # No snapshot yet, and librdkafka commits carry no topic ids: nothing names the topics so far.
    unnamed = _owned_partitions(settings, group)
    # The end-offset snapshot records both topics' ids: the ownership view names them from then on, with no gold
    # refresh in between (and the cluster is never asked).
    snapshot_end_offsets(spark, settings, [topic, second_topic], message_timestamps=False)
    named = _owned_partitions(settings, group)
    counts = refresh_gold(spark, settings)
    again = refresh_gold(spark, settings)
    tables = {spec.name: read_table(spark, settings, spec) for spec in GROUP_TABLES}
    rebuilt = {name: frame for name, frame in full_rebuild(spark, settings).items() if name in tables}
    gold = {name: _rows(frame, group) for name, frame in tables.items()}
    full = {name: _rows(frame, group) for name, frame in rebuilt.items()}
    resubscribed = {"subscriptions": subscriptions, "membership": _rows(tables[MEMBERSHIP.name], resubscribing),
                    "full": _rows(rebuilt[MEMBERSHIP.name], resubscribing)}
    return {"topic": topic, "group": group, "both": both, "alone": alone, "gold": gold, "full": full,
            "counts": counts, "again": again, "resubscribed": resubscribed, "unnamed": unnamed,
            "named": named}


def _owned_partitions(settings: Settings, group: str) -> list[dict]:
    """The group's rows of dashboards.partition_ownership, by the embedded engine (no catalog of the session the
    other tests share)."""
    from pipelines.embedded_sql import query_view

    result = query_view(settings, "partition_ownership", "`group` = :group", {"group": group})
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


def _rows(frame, group: str) -> list[dict]:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    columns = [F.unix_millis(f.name).alias(f.name) if isinstance(f.dataType, T.TimestampType) else F.col(f.name)
               for f in frame.schema.fields]
    return [row.asDict(recursive=True) for row in frame.filter(F.col("group") == group).select(*columns).collect()]
