"""cli/decode.py and cli/coordinator_partition.py: the commands users run by hand."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from tenacity import retry, retry_if_exception_type, stop_after_attempt

from broker.workload import create_topic
from decoders import encode_record

ROOT = Path(__file__).resolve().parents[2]


def offsetlake(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_decode_prints_one_object_per_line_in_order_and_reports_bad_lines_without_stopping() -> None:
    key, value = encode_record("offset_commit", {"group": "billing", "topic": "orders", "partition": 3},
                               {"offset": 42, "leader_epoch": 7, "metadata": "m", "commit_timestamp": 1000}, 4)
    group_key, _ = encode_record("group_metadata", {"group": "billing"}, None, None)
    lines = [
        json.dumps({"key": key.hex(), "value": value.hex()}),
        "this is not json",
        json.dumps({"key": group_key.hex(), "value": None}),
        json.dumps({"key": key.hex(), "value": value.hex()[:-4]}),
    ]
    result = offsetlake("decode", stdin="\n".join(lines) + "\n")
    assert result.returncode == 0
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(out) == 4
    # OffsetCommitValue v4: offset, leader epoch, compact metadata, commit timestamp, and the tagged topicId,
    # which was not written and so holds its default, Kafka's Uuid.ZERO_UUID (16 zero bytes in base64url).
    assert out[0] == {"type": "offset_commit", "key_version": 1, "value_version": 4,
                      "key": {"group": "billing", "topic": "orders", "partition": 3},
                      "value": {"offset": 42, "leader_epoch": 7, "metadata": "m", "commit_timestamp": 1000,
                                "topic_id": "AAAAAAAAAAAAAAAAAAAAAA"}}
    assert "error" in out[1]
    assert out[2]["type"] == "group_metadata" and out[2]["value"] is None and out[2]["key"] == {"group": "billing"}
    assert "error" in out[3] and out[3]["record_type"] == 1
    assert "2 record(s) could not be decoded" in result.stderr


@pytest.mark.broker
def test_decode_reads_a_topic_from_the_beginning_without_joining_a_group(kafka_broker) -> None:
    from confluent_kafka import Producer

    config = {"bootstrap.servers": kafka_broker.bootstrap_servers}
    topic = f"records-{uuid.uuid4().hex[:8]}"
    create_topic(config, topic, partitions=1)
    records = [encode_record("offset_commit", {"group": "g", "topic": "t", "partition": p},
                             {"offset": p * 10, "metadata": "", "commit_timestamp": 5}, 3) for p in range(3)]
    producer = Producer(config)
    for key, value in records:
        producer.produce(topic, key=key, value=value)
    assert producer.flush(30) == 0
    groups_before = consumer_groups(config)

    result = offsetlake("decode", "--topic", topic, "--bootstrap-servers", kafka_broker.bootstrap_servers,
                        "--with-position")
    assert result.returncode == 0, result.stderr
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(o["offset"], o["key"]["partition"], o["value"]["offset"]) for o in out] == [(0, 0, 0), (1, 1, 10),
                                                                                          (2, 2, 20)]
    groups_after = consumer_groups(config)
    assert groups_after == groups_before, "decoding a topic must not create a consumer group"


@retry(retry=retry_if_exception_type(concurrent.futures.TimeoutError), stop=stop_after_attempt(3), reraise=True)
def consumer_groups(config: dict[str, str]) -> set[str]:
    """The broker's consumer group ids, asked again by a new client when an answer takes over 30 s: a listing
    with no time limit once waited 9 minutes here (the test's thread in the future's result, per py-spy) in a
    fresh-clone run of make test (2026-11-28 19:14), which took the suite past its 10 minutes."""
    from confluent_kafka.admin import AdminClient

    listing = AdminClient(config).list_consumer_groups(request_timeout=20)
    return {g.group_id for g in listing.result(timeout=30).valid}


def test_coordinator_partition_uses_java_string_hash_code() -> None:
    # "a".hashCode() == 97 -> 97 % 50 == 47; "" hashes to 0.
    assert offsetlake("coordinator-partition", "a").stdout.strip() == "47"
    assert offsetlake("coordinator-partition", "", "--partitions", "3").stdout.strip() == "0"
    bad = offsetlake("coordinator-partition", "a", "--partitions", "0")
    assert bad.returncode == 2 and bad.stderr == (
        "offsetlake coordinator-partition: error: argument --partitions: '0' is not a whole number >= 1; "
        "see 'offsetlake coordinator-partition --help'\n")
