"""Kafka itself as the oracle: our encodings, read and re-written by Kafka's own
``GroupCoordinatorRecordSerde`` / ``ConsumerProtocol`` (the jars of ``.jvm/kafka-libs``),
must come back byte for byte; Kafka's generated JSON converters must show the same values
we decode; and ``String.hashCode``/``Utils.abs`` must agree with ``coordinator_partition``.

Skipped when Java or the resolved Kafka jars are missing (``make setup`` resolves them).
Fields that the jars' Kafka release does not know (tags added in a later release) are
dropped from both sides of the JSON comparison.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoders import (
    DecodedRecord,
    coordinator_partition,
    decode_record,
    encode_assignment,
    encode_record,
    encode_subscription,
)
from decoders.codec import _is_default
from decoders.layout import BY_TYPE_ID
from decoders.partitioning import java_string_hash
from decoders.spec import ArrayOf, FieldType, StructSpec
from decoders.wire import Uuid
from jvm.artifacts import kafka_classpath
from tests.decoders.strategies import TEXT, assignment_strategy, record_cases, struct_strategy, subscription_strategy

# No skip: Java 17 (javac) is a prerequisite and `make test` resolves the Kafka jars first.

pytestmark = pytest.mark.jvm_process  # compiles and runs Kafka's serde in a JVM
ORACLE = Path(__file__).with_name("KafkaSerdeOracle.java")
CASES = [(spec, v) for spec, v in record_cases() if spec.type_id != 9]  # type 9 existed only in Kafka 4.0


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Any:
    classes = tmp_path_factory.mktemp("oracle")
    classpath = kafka_classpath()
    subprocess.run(["javac", "-cp", classpath, "-d", str(classes), str(ORACLE)], check=True, capture_output=True)

    def run(lines: list[str]) -> list[str]:
        src, dst = classes / "in.txt", classes / "out.txt"
        src.write_text("\n".join(lines) + "\n")
        subprocess.run(["java", "-cp", f"{classes}{os.pathsep}{classpath}", "KafkaSerdeOracle", str(src), str(dst)],
                       check=True, capture_output=True)
        return dst.read_text(encoding="utf-8").split("\n")[: len(lines)]

    return run


def _collect(strategy: st.SearchStrategy[str], count: int) -> list[str]:
    lines: list[str] = []

    @settings(max_examples=count, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(line: str) -> None:
        lines.append(line)

    collect()
    return lines


@st.composite
def record_lines(draw: st.DrawFn) -> str:
    spec, version = draw(st.sampled_from(CASES))
    key_dict, value_dict = draw(struct_strategy(spec.key, 0)), draw(struct_strategy(spec.value, version))
    key, value = encode_record(spec.name, key_dict, value_dict, version)
    if draw(st.integers(0, 9)) == 0:
        value = None
    return f"rec {key.hex()} {'-' if value is None else value.hex()}"


def _kafka_json(spec: StructSpec, value: dict[str, Any], version: int) -> dict[str, Any]:
    """Our decoded dict as Kafka's JSON converter writes it: lower-camel schema names, tagged
    fields only when not at their default, bytes in base64, uuids in base64url."""
    out = {}
    for f in spec.fields:
        if f.name not in value:
            continue
        item = value[f.name]
        if f.is_tagged_in(version) and item is not None and _is_default(item, f.default):
            continue
        out[f.kafka_name[0].lower() + f.kafka_name[1:]] = _kafka_json_value(f.type, item, version)
    return out


def _kafka_json_value(type_: FieldType, item: Any, version: int) -> Any:
    if item is None:
        return None
    if isinstance(type_, StructSpec):
        return _kafka_json(type_, item, version)
    if isinstance(type_, ArrayOf):
        return [_kafka_json_value(type_.element, x, version) for x in item]
    if type_ == "uuid":
        return str(Uuid(item))
    if type_ == "bytes":
        return base64.b64encode(item).decode()
    return item


def _drop_unknown_to_kafka(mine: Any, theirs: Any) -> tuple[Any, Any]:
    """Remove keys only one side has *and* that the jars cannot know (newer tags)."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        newer_tags = {"assignmentEpochs", "assignmentTimestamp"}
        for k in newer_tags & (mine.keys() ^ theirs.keys()):
            mine.pop(k, None)
        for k in mine.keys() & theirs.keys():
            mine[k], theirs[k] = _drop_unknown_to_kafka(mine[k], theirs[k])
    elif isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        pairs = [_drop_unknown_to_kafka(a, b) for a, b in zip(mine, theirs, strict=True)]
        mine, theirs = [a for a, _ in pairs], [b for _, b in pairs]
    return mine, theirs


def test_kafka_re_serializes_our_records_byte_for_byte_and_decodes_the_same_values(oracle: Any) -> None:
    lines = _collect(record_lines(), 400)
    results = oracle(lines)
    for line, result in zip(lines, results, strict=True):
        _, key_hex, value_hex = line.split(" ")
        assert not result.startswith("ERR"), (line, result)
        reserialized, key_json, value_json = result.split("\t")
        assert reserialized == f"{key_hex} {value_hex}", line
        record = decode_record(bytes.fromhex(key_hex), None if value_hex == "-" else bytes.fromhex(value_hex))
        assert isinstance(record, DecodedRecord)
        spec = BY_TYPE_ID[record.key_version]
        mine = [_kafka_json(spec.key, record.key, 0), None]
        if record.value is not None and record.value_version is not None:
            mine[1] = _kafka_json(spec.value, record.value, record.value_version)
        theirs = [json.loads(key_json), json.loads(value_json)]
        mine, theirs = _drop_unknown_to_kafka(mine, theirs)
        assert mine == theirs, line


@st.composite
def protocol_lines(draw: st.DrawFn) -> str:
    version = draw(st.integers(0, 3))
    if draw(st.booleans()):
        return f"sub {encode_subscription(draw(subscription_strategy(version)), version).hex()}"
    return f"asg {encode_assignment(draw(assignment_strategy(version)), version).hex()}"


def test_kafka_re_serializes_our_consumer_protocol_blobs_byte_for_byte(oracle: Any) -> None:
    lines = _collect(protocol_lines(), 300)
    for line, result in zip(lines, oracle(lines), strict=True):
        assert result == line.split(" ")[1], line


def test_java_hash_code_and_utils_abs_agree_with_coordinator_partition(oracle: Any) -> None:
    groups = _collect(TEXT.filter(bool), 300) + ["my-group", "console-consumer-12345", "polygenelubricants"]
    results = oracle([f"part {g.encode().hex()}" for g in groups])
    for group, result in zip(groups, results, strict=True):
        assert result == f"{coordinator_partition(group)} {java_string_hash(group)}", group
