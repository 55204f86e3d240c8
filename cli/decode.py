"""``offsetlake decode``: decode __consumer_offsets records to JSON lines.

Input is either JSON lines ``{"key": "<hex>", "value": "<hex>" | null}`` on stdin,
or the records of a topic (``--topic`` with the usual Kafka settings). Output is
one JSON object per record, in order; an undecodable record prints an object
with an ``error`` field and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import IO

from cli import argument_types
from cli.settings_arg import settings_from


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "decode", help="decode __consumer_offsets records (JSON lines on stdin, or a topic) to JSON",
        description=(
            "Decode __consumer_offsets records. Reads JSON lines {\"key\": HEX, \"value\": HEX|null} from "
            "stdin, or with --topic reads the topic from the beginning to its current end. Prints one JSON "
            "object per record: type, key_version, value_version, key, value (bytes as hex, UUIDs in "
            "Kafka's base64url form). Undecodable records print an object with an 'error' field."
        ),
    )
    parser.add_argument("--topic", help="read this topic instead of stdin (e.g. __consumer_offsets)")
    parser.add_argument("--bootstrap-servers", type=argument_types.bootstrap_servers,
                        help="overrides kafka.bootstrap_servers from settings")
    parser.add_argument("--max-records", type=argument_types.whole_number(1), metavar="N",
                        help="stop after this many records (with --topic)")
    parser.add_argument("--with-position", action="store_true",
                        help="add partition/offset/timestamp to each object (with --topic)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from decoders.json_lines import decode_json_line

    if args.topic is None:
        if args.bootstrap_servers:
            print("offsetlake: --bootstrap-servers needs --topic", file=sys.stderr)
            return 2
        return write_lines((decode_json_line(line) for line in sys.stdin if line.strip()), sys.stdout)
    settings = settings_from(args)
    if args.bootstrap_servers:
        settings = settings.with_overrides(
            kafka=settings.kafka.model_copy(update={"bootstrap_servers": args.bootstrap_servers}))
    from pipelines.kafka_clients import client_config  # librdkafka's log to the debug log, no topic created

    return write_lines(topic_records(client_config(settings), args.topic, args.max_records,
                                     args.with_position), sys.stdout)


def write_lines(objects: Iterator[dict], out: IO[str]) -> int:
    errors = 0
    for obj in objects:
        errors += "error" in obj
        out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    out.flush()
    if errors:
        print(f"offsetlake: {errors} record(s) could not be decoded", file=sys.stderr)
    return 0


def topic_records(client_config: dict[str, str], topic: str, max_records: int | None,
                  with_position: bool) -> Iterator[dict]:
    """Every record of ``topic`` from the beginning to the end offsets seen at start, decoded.

    Partitions are assigned explicitly (no group join, so reading
    __consumer_offsets does not write to it).
    """
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    from decoders.json_lines import decode_json_line

    consumer = Consumer({**client_config, "group.id": "offsetlake-decode", "enable.auto.commit": False,
                         "enable.partition.eof": True, "isolation.level": "read_committed"})
    try:
        metadata = consumer.list_topics(topic, timeout=30).topics.get(topic)
        if metadata is None or metadata.error is not None:
            raise SystemExit(f"offsetlake: topic {topic} cannot be read: "
                             f"{metadata.error if metadata else 'not found'}")
        ends = {}
        for partition in metadata.partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
            if high > low:
                ends[partition] = high
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in ends])
        emitted = 0
        while ends and (max_records is None or emitted < max_records):
            message = consumer.poll(5.0)
            if message is None:
                break
            if message.error():
                if message.error().code() == -191:  # _PARTITION_EOF
                    ends.pop(message.partition(), None)
                    continue
                raise SystemExit(f"offsetlake: reading {topic} failed: {message.error()}")
            key, value = message.key(), message.value()
            obj = decode_json_line(json.dumps({"key": key.hex() if key is not None else None,
                                               "value": value.hex() if value is not None else None}))
            if with_position:
                obj = {"partition": message.partition(), "offset": message.offset(),
                       "timestamp": message.timestamp()[1], **obj}
            yield obj
            emitted += 1
            if message.offset() + 1 >= ends.get(message.partition(), 0):
                ends.pop(message.partition(), None)
    finally:
        consumer.close()
