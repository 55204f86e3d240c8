"""``offsetlake simulate SCENARIO``: run the reference coordinator and write (or produce) what Kafka would."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli import argument_types
from cli.errors import CommandError, reported_as_command_errors
from cli.settings_arg import settings_from


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "simulate", help="run a reference-coordinator scenario; write its records and expected timeline",
        description=(
            "Run a scenario (YAML, see conf/scenarios/) through the reference group coordinator and write "
            "records.jsonl (the bytes the broker would append to __consumer_offsets), timeline.json and "
            "one JSONL file per expected table to --out. With --produce-to, also produce the records to a "
            "regular topic (clients cannot write __consumer_offsets), keeping each record's partition and "
            "timestamp, so the ingest pipeline can read them like the real thing."
        ),
    )
    parser.add_argument("scenario", metavar="SCENARIO", help="scenario YAML file")
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory")
    parser.add_argument("--kafka-version", default="4.2", type=argument_types.kafka_version,
                        help="broker version whose record versions to write (default 4.2)")
    parser.add_argument("--produce-to", metavar="TOPIC", help="also produce the records to this topic")
    parser.add_argument("--bootstrap-servers", type=argument_types.bootstrap_servers,
                        help="overrides kafka.bootstrap_servers from settings")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from coordinator import ScenarioError, simulate

    if not Path(args.scenario).is_file():
        raise CommandError(f"scenario file {args.scenario} does not exist")
    # Before anything is written: bad settings leave no output behind.
    settings = settings_from(args) if args.produce_to else None
    try:
        result = simulate(args.scenario, kafka_version=args.kafka_version)
    except ScenarioError as exc:
        raise CommandError(f"invalid scenario: {exc}") from exc
    out = result.write(args.out)
    generations = len(result.tables.get("group_generations", []))
    epochs = len(result.tables.get("consumer_group_generations", []))  # KIP-848 groups
    print(f"simulate: {len(result.records)} records, {generations} generations"
          f"{f', {epochs} KIP-848 group epochs' if epochs else ''} -> {out}", file=sys.stderr)
    if settings is not None:
        from pipelines.kafka_clients import client_config  # its topic is never created by asking for it

        config = client_config(settings)
        if args.bootstrap_servers:
            config["bootstrap.servers"] = args.bootstrap_servers
        with reported_as_command_errors():
            produced = produce_records(config, args.produce_to, result.records)
        print(f"simulate: produced {produced} records to {args.produce_to}", file=sys.stderr)
    return 0


def _check_retention(config: dict[str, str], topic: str, oldest_ms: int | None) -> None:
    """Refuse to produce records that time-based retention would delete at once.

    Scenario times are usually in the past; the broker deletes a segment whose
    newest timestamp is older than ``retention.ms``, so the records would vanish
    before anything could read them.
    """
    import time

    from confluent_kafka.admin import AdminClient, ConfigResource

    if oldest_ms is None:
        return
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    admin = AdminClient(config)
    retention = int(admin.describe_configs([resource])[resource].result(timeout=30)["retention.ms"].value)
    age_ms = int(time.time() * 1000) - oldest_ms
    if retention >= 0 and age_ms > retention:
        raise CommandError(
            f"topic {topic} keeps records for retention.ms={retention} but the scenario's records are "
            f"{age_ms // 3_600_000} hours old; set retention.ms=-1 on the topic (kafka-configs --alter "
            f"--add-config retention.ms=-1) or move the scenario's start time"
        )


def produce_records(config: dict[str, str], topic: str, records: list) -> int:  # type: ignore[type-arg]
    """Produce simulated records to ``topic`` with their partition and timestamp.

    The topic must have at least as many partitions as the scenario's
    ``offsets.topic.num.partitions``, so that a group's records stay in one
    partition and keep their order, as in __consumer_offsets.
    """
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient(config).list_topics(topic, timeout=30).topics.get(topic)
    if metadata is None or metadata.error is not None:
        raise CommandError(f"topic {topic} is not available: {metadata.error if metadata else 'not found'}")
    needed = max((r.partition for r in records), default=-1) + 1
    if len(metadata.partitions) < needed:
        raise CommandError(f"topic {topic} has {len(metadata.partitions)} partitions; the scenario writes to "
                           f"{needed} (create it with at least that many)")
    _check_retention(config, topic, min((r.timestamp for r in records), default=None))
    producer = Producer({**config, "enable.idempotence": True, "linger.ms": 5})
    for record in records:
        producer.produce(topic, key=record.key, value=record.value, partition=record.partition,
                         timestamp=record.timestamp)
    remaining = producer.flush(60)
    if remaining:
        raise CommandError(f"{remaining} records were not delivered to {topic}")
    return len(records)
