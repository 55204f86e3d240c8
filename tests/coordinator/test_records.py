"""Which records and value versions a broker of a given Kafka version writes
(GroupCoordinatorRecordHelpers.java at 4.0, 4.1, 4.2; shared/kafka-records.md §3-4)."""

from __future__ import annotations

import pytest

from coordinator.offsets import OffsetAndMetadata
from coordinator.records import KafkaVersion, encode, offset_commit_record, offset_tombstone
from decoders import decode_record


@pytest.mark.parametrize(
    ("version", "plain", "with_expiry"),
    [("4.2", 4, 1), ("4.1", 4, 1), ("4.3", 4, 1), ("4.0", 3, 1), ("3.9", 3, 1), ("2.3", 3, 1)],
)
def test_offset_commit_value_version_follows_the_release(version: str, plain: int, with_expiry: int) -> None:
    kafka = KafkaVersion.parse(version)
    assert kafka.offset_commit_value_version(False) == plain
    assert kafka.offset_commit_value_version(True) == with_expiry
    assert kafka.group_metadata_value_version() == 3


def test_only_4_x_commits_a_new_group_with_an_empty_record() -> None:
    assert KafkaVersion.parse("4.0").writes_empty_group_on_create
    assert not KafkaVersion.parse("3.9").writes_empty_group_on_create


@pytest.mark.parametrize("text", ["4", "five", "1.1", "5.0", ""])
def test_unsupported_or_malformed_versions_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="kafka_version"):
        KafkaVersion.parse(text)


def test_an_offset_commit_v4_record_has_the_bytes_of_the_schema() -> None:
    offset = OffsetAndMetadata(committed_offset=42, leader_epoch=0, metadata="", commit_timestamp_ms=1000)
    key, value = encode(offset_commit_record("g", "t", 3, offset, KafkaVersion.parse("4.2")))
    # key: type 1 (int16), group "g", topic "t" (int16-length strings), partition 3 (int32)
    assert key.hex() == "0001" + "0001" + "67" + "0001" + "74" + "00000003"
    # value v4 (flexible): offset int64, leaderEpoch int32, metadata compact string (len+1),
    # commitTimestamp int64, empty tagged-field section
    assert value.hex() == "0004" + "000000000000002a" + "00000000" + "01" + "00000000000003e8" + "00"


def test_an_offset_commit_before_4_1_is_value_v3_and_decodes_back() -> None:
    offset = OffsetAndMetadata(committed_offset=7, leader_epoch=None, metadata="x", commit_timestamp_ms=5)
    key, value = encode(offset_commit_record("g", "t", 0, offset, KafkaVersion.parse("4.0")))
    decoded = decode_record(key, value)
    assert decoded.value_version == 3
    assert decoded.value == {"offset": 7, "leader_epoch": -1, "metadata": "x", "commit_timestamp": 5}


def test_tombstones_have_a_key_and_no_value() -> None:
    key, value = encode(offset_tombstone("g", "t", 1, "expired"))
    assert value is None and decode_record(key, None).key == {"group": "g", "topic": "t", "partition": 1}


def test_kafkas_own_serde_reads_every_scenario_record_and_writes_the_same_bytes(record_oracle: list[str]) -> None:
    from pathlib import Path

    from coordinator import simulate
    from tests.coordinator.oracle import run_oracle

    lines = []
    for path in sorted((Path(__file__).resolve().parents[2] / "conf" / "scenarios").glob("*.yaml")):
        for version in ("4.2", "4.0"):
            for record in simulate(path, version).records:
                lines.append(f"{record.key.hex()} {'-' if record.value is None else record.value.hex()}")
    answers = run_oracle(record_oracle, "\n".join(lines) + "\n").splitlines()
    assert len(answers) == len(lines)
    bad = [(line, answer) for line, answer in zip(lines, answers, strict=True) if not answer.startswith("SAME ")]
    assert not bad, f"{len(bad)} records differ after Kafka's round trip; first: {bad[0]}"
