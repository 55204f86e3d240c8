"""pipelines/decode.py: Spark's decode of raw records equals the pure decoders', row for row.

The pure decoders (decoders.decode_record) are the oracle here; they are checked
byte by byte against Kafka's own tools in tests/decoders. The Spark side routes
records by key type into families (vectorized offset commits, GroupMetadata, the
newer group protocols, unroutable records), each decoded into its own schema, and
every family must agree with the oracle; bad input must land in quarantine with the
decoder's own reason instead of failing the job.
"""

from __future__ import annotations

import datetime as dt
import struct
from typing import Any

import pytest
from chispa import assert_df_equality
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoders import DecodedRecord, DecodeError, Uuid, decode_record, encode_record
from decoders.records import jsonable
from pipelines.decode import (
    decode_raw_records,
    group_metadata_records,
    newer_group_records,
    offset_commits,
    quarantine,
)
from schemas.decoded_records import (
    GROUP_METADATA_FAMILY,
    NEWER_GROUP_RECORDS_FAMILY,
    OFFSET_COMMIT_FAMILY,
    OFFSET_COMMIT_FIELDS,
    UNROUTABLE_FAMILY,
    record_struct,
)
from tests.decoders.strategies import record_cases, struct_strategy

pytestmark = pytest.mark.spark

RAW_SCHEMA = "key binary, value binary, topic string, partition int, offset long, timestamp timestamp"
T0 = dt.datetime(2026, 11, 21, 12, 0, 0)


def raw_frame(spark, records: list[tuple[bytes | None, bytes | None]]):  # type: ignore[no-untyped-def]
    rows = [(k, v, "__consumer_offsets", i % 3, i, T0) for i, (k, v) in enumerate(records)]
    return spark.createDataFrame(rows, RAW_SCHEMA)


def commit(group: str, topic: str, partition: int, value: dict[str, Any] | None, version: int | None,
           record_type: str = "offset_commit") -> tuple[bytes, bytes | None]:
    return encode_record(record_type, {"group": group, "topic": topic, "partition": partition}, value, version)


TOPIC_ID = Uuid(bytes(range(1, 17)))
OFFSET_COMMITS = [
    commit("g", "orders", 0, {"offset": 10, "metadata": "m0", "commit_timestamp": 1000}, 0),
    commit("g", "orders", 1, {"offset": 11, "metadata": "", "commit_timestamp": 1001, "expire_timestamp": 9001}, 1),
    commit("g", "orders", 2, {"offset": 12, "metadata": "ümlaut", "commit_timestamp": 1002}, 2),
    commit("g", "orders", 3, {"offset": 13, "leader_epoch": 7, "metadata": "", "commit_timestamp": 1003}, 3),
    commit("g", "orders", 4, {"offset": 14, "leader_epoch": -1, "metadata": "", "commit_timestamp": 1004}, 4),
    commit("g", "orders", 5, {"offset": 2**40, "leader_epoch": 3, "metadata": "x" * 300,  # two-byte varint
                              "commit_timestamp": 1005, "topic_id": TOPIC_ID}, 4),
    commit("g", "orders", 6, {"offset": -1, "leader_epoch": -2147483648, "metadata": "漢字",
                              "commit_timestamp": -5}, 4),
    commit("g", "orders", 7, None, None),  # tombstone
    commit("old", "legacy", 0, {"offset": 5, "metadata": "", "commit_timestamp": 7}, 0, "legacy_offset_commit"),
    commit("", "", -1, {"offset": 0, "metadata": "", "commit_timestamp": 0}, 3),
]


def expected_offset_commit(key: bytes, value: bytes | None) -> dict[str, Any]:
    record = decode_record(key, value)
    assert isinstance(record, DecodedRecord)
    flat = dict.fromkeys(OFFSET_COMMIT_FIELDS.fieldNames())
    flat.update(record.key)
    for name, item in (record.value or {}).items():
        flat[name] = str(item) if isinstance(item, Uuid) else item
    if record.value is not None and record.value_version == 4 and flat.get("topic_id") == str(Uuid(bytes(16))):
        flat["topic_id"] = None  # the zero uuid is the tag's default: not on the wire
    return {"record_type": record.key_version, "type": record.type, "value_version": record.value_version,
            "is_tombstone": record.is_tombstone, **flat}


def test_offset_commits_of_every_version_match_the_pure_decoder(spark) -> None:
    frame = raw_frame(spark, OFFSET_COMMITS)
    decoded = decode_raw_records(frame)
    actual = offset_commits(decoded).drop("topic_name", "source_partition", "record_timestamp")
    expected_rows = [
        {"source_offset": i, **expected_offset_commit(k, v)} for i, (k, v) in enumerate(OFFSET_COMMITS)
    ]
    expected = spark.createDataFrame(expected_rows, actual.schema)
    assert_df_equality(actual, expected, ignore_row_order=True, ignore_nullable=True)
    assert quarantine(decoded).count() == 0


def corrupt_cases() -> list[tuple[str, bytes, bytes | None]]:
    good_key, good_value = OFFSET_COMMITS[3]
    return [
        ("truncated value", good_key, good_value[:-3]),
        ("trailing byte", good_key, (good_value or b"") + b"\x00"),
        ("unknown value version", good_key, struct.pack(">h", 9) + (good_value or b"")[2:]),
        ("invalid utf-8 in the group", good_key[:4] + b"\xff" + good_key[5:], good_value),
        ("negative topic length", good_key[:4 + 1] + b"\xff\xfe" + good_key[7:], good_value),
        ("legacy type with value v3", struct.pack(">h", 0) + good_key[2:], good_value),
        ("group metadata value cut short", encode_record("group_metadata", {"group": "g"}, None, None)[0],
         b"\x00\x03\x00\x08consu"),
    ]


def test_undecodable_records_land_in_quarantine_with_the_decoders_reason_and_their_raw_bytes(spark) -> None:
    cases = corrupt_cases()
    decoded = decode_raw_records(raw_frame(spark, [(k, v) for _, k, v in cases]))
    rows = {row["source_offset"]: row for row in quarantine(decoded).collect()}
    assert sorted(rows) == list(range(len(cases)))
    for i, (label, key, value) in enumerate(cases):
        with pytest.raises(DecodeError) as caught:
            decode_record(key, value)
        assert rows[i]["quarantine_reason"] == str(caught.value), label
        assert rows[i]["raw_key"] == key and rows[i]["raw_value"] == value, label
        assert rows[i]["record_type"] == caught.value.record_type, label
    assert decoded_row_count(decoded) == 0


def decoded_row_count(decoded) -> int:  # type: ignore[no-untyped-def]
    return sum(frame(decoded).count() for frame in (offset_commits, group_metadata_records, newer_group_records))


def group_records(decoded):  # type: ignore[no-untyped-def]
    """Rows of both group-record families by source offset, as dicts (their schemas differ)."""
    rows = {}
    for frame in (group_metadata_records(decoded), newer_group_records(decoded)):
        rows.update({row["source_offset"]: row.asDict() for row in frame.collect()})
    return rows


def test_unknown_types_null_keys_and_short_keys_are_quarantined_not_dropped(spark) -> None:
    records = [(struct.pack(">h", 99) + b"\x00\x01g", b"\x00\x00"), (None, b"v"), (b"\x00", None)]
    decoded = decode_raw_records(raw_frame(spark, records))
    rows = sorted(quarantine(decoded).collect(), key=lambda r: r["source_offset"])
    assert [r["quarantine_reason"] for r in rows] == [
        "unknown record type 99",
        "null key: not a coordinator record",
        str(_decode_error(b"\x00", None)),
    ]
    assert rows[0]["record_type"] == 99


def _decode_error(key: bytes, value: bytes | None) -> DecodeError:
    try:
        decode_record(key, value)
    except DecodeError as exc:
        return exc
    raise AssertionError("expected a DecodeError")


def _fill(spark_type: Any, value: Any) -> Any:
    """The decoder's dict with every field the Spark schema has (absent ones as None)."""
    from pyspark.sql import types as T

    if value is None:
        return None
    if isinstance(spark_type, T.StructType):
        return {f.name: _fill(f.dataType, value.get(f.name)) for f in spark_type.fields}
    if isinstance(spark_type, T.ArrayType):
        return [_fill(spark_type.elementType, v) for v in value]
    return value


ALL_NON_OFFSET_CASES = [(spec, version) for spec, version in record_cases() if spec.type_id > 1]


@st.composite
def group_record_batch(draw: st.DrawFn) -> list[tuple[bytes, bytes | None]]:
    records = []
    for spec, version in ALL_NON_OFFSET_CASES:
        key = draw(struct_strategy(spec.key, 0))
        value = draw(st.none() | struct_strategy(spec.value, version))
        records.append(encode_record(spec.name, key, value, None if value is None else version))
    return records


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=group_record_batch())
def test_every_group_record_type_and_version_decodes_in_spark_as_the_pure_decoder_does(spark, batch) -> None:
    decoded = decode_raw_records(raw_frame(spark, batch))
    rows = group_records(decoded)
    assert quarantine(decoded).count() == 0
    assert sorted(rows) == list(range(len(batch)))
    for i, (key, value) in enumerate(batch):
        record = decode_record(key, value)
        assert isinstance(record, DecodedRecord)
        row = rows[i]
        assert (row["type"], row["record_type"], row["value_version"], row["is_tombstone"]) == (
            record.type, record.key_version, record.value_version, record.is_tombstone)
        column_type = record_struct(record.type)
        # Both sides in the decoders' JSON form (what `offsetlake decode` prints): uuids as Kafka's
        # base64url text, bytes as hex; the Spark row's binary columns arrive as bytearray.
        expected = _fill(column_type, {"key": jsonable(record.key), "value": jsonable(record.value)})
        assert jsonable(row[record.type].asDict(recursive=True)) == expected, record.type


def test_group_metadata_members_keep_the_decoded_subscription_and_assignment(spark) -> None:
    member = {
        "member_id": "c-1-abc", "group_instance_id": "static-1", "client_id": "c-1", "client_host": "/10.0.0.1",
        "rebalance_timeout": 300000, "session_timeout": 45000,
        "subscription": {"topics": ["orders", "payments"], "user_data": None, "owned_partitions": [
            {"topic": "orders", "partitions": [0, 2]}], "generation_id": 4, "rack_id": "rack-a"},
        "assignment": {"partitions": [{"topic": "orders", "partitions": [0, 1, 2]}], "user_data": None},
    }
    key, value = encode_record("group_metadata", {"group": "billing"}, {
        "protocol_type": "consumer", "generation": 5, "protocol": "range", "leader": "c-1-abc",
        "current_state_timestamp": 1_700_000_000_000, "members": [member]}, 3)
    row = group_metadata_records(decode_raw_records(raw_frame(spark, [(key, value)]))).first()
    group = row["group_metadata"]
    assert group["key"]["group"] == "billing"
    (decoded_member,) = group["value"]["members"]
    assert decoded_member["group_instance_id"] == "static-1"
    assert decoded_member["subscription"]["topics"] == ["orders", "payments"]
    assert decoded_member["subscription"]["rack_id"] == "rack-a"
    assert [(p["topic"], p["partitions"]) for p in decoded_member["assignment"]["partitions"]] == [
        ("orders", [0, 1, 2])]


def _leaf_count(data_type: Any) -> int:
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        return sum(_leaf_count(f.dataType) for f in data_type.fields)
    if isinstance(data_type, T.ArrayType):
        return _leaf_count(data_type.elementType)
    return 1


def test_offset_commits_are_decoded_into_flat_columns_without_any_other_records_fields() -> None:
    from pyspark.sql import types as T

    nested = [f.name for f in OFFSET_COMMIT_FAMILY.fields if isinstance(f.dataType, (T.StructType, T.ArrayType))]
    assert nested == []
    assert _leaf_count(OFFSET_COMMIT_FAMILY) == 20
    assert "group_metadata" not in NEWER_GROUP_RECORDS_FAMILY.fieldNames()
    assert "consumer_group_member_metadata" not in GROUP_METADATA_FAMILY.fieldNames()
    assert "group" not in UNROUTABLE_FAMILY.fieldNames()


def test_a_mixed_batch_is_routed_by_key_type_and_every_record_lands_in_exactly_one_family(spark) -> None:
    group_key, group_value = encode_record("group_metadata", {"group": "billing"}, None, None)
    member_key, member_value = encode_record(
        "consumer_group_member_metadata", {"group_id": "billing", "member_id": "m-1"}, None, None)
    unknown = (struct.pack(">h", 99) + b"\x00\x01g", b"\x00\x00")
    records = [OFFSET_COMMITS[0], (group_key, group_value), (member_key, member_value), unknown, OFFSET_COMMITS[7]]
    decoded = decode_raw_records(raw_frame(spark, records))
    assert sorted(r["source_offset"] for r in offset_commits(decoded).collect()) == [0, 4]
    assert [r["source_offset"] for r in group_metadata_records(decoded).collect()] == [1]
    assert [(r["source_offset"], r["type"]) for r in newer_group_records(decoded).collect()] == [
        (2, "consumer_group_member_metadata")]
    assert [(r["source_offset"], r["quarantine_reason"]) for r in quarantine(decoded).collect()] == [
        (3, "unknown record type 99")]


def test_an_offset_commit_the_vectorized_path_rejects_is_still_decoded_by_the_pure_decoder_in_its_family(
        spark) -> None:
    key, value = commit("g", "orders", 9, {"offset": 5, "leader_epoch": 1, "metadata": "", "commit_timestamp": 9}, 4)
    assert value is not None
    unknown_tag = value[:-1] + bytes([1, 7, 2, 0xAA, 0xBB])  # one tagged field Kafka 4.1 does not define
    records = [OFFSET_COMMITS[4], (key, unknown_tag)]
    decoded = decode_raw_records(raw_frame(spark, records))
    rows = {r["source_offset"]: r for r in offset_commits(decoded).collect()}
    assert sorted(rows) == [0, 1]
    assert {k: rows[1][k] for k in ("group", "partition", "offset", "leader_epoch", "commit_timestamp", "topic_id")} \
        == {"group": "g", "partition": 9, "offset": 5, "leader_epoch": 1, "commit_timestamp": 9, "topic_id": None}
    assert quarantine(decoded).count() == 0


def test_a_family_whose_record_types_are_absent_reads_nothing(spark, tmp_path) -> None:
    path = str(tmp_path / "raw")
    raw_frame(spark, OFFSET_COMMITS[:3]).write.parquet(path)
    raw = spark.read.parquet(path)
    decoded = decode_raw_records(raw, present={1})
    assert decoded.offset_commits.inputFiles()
    assert decoded.group_metadata.inputFiles() == [] and decoded.unroutable.inputFiles() == []
    assert offset_commits(decoded).count() == 3 and quarantine(decoded).count() == 0


def test_kafkas_own_classes_decode_every_well_formed_commit_in_the_jvm_and_leave_the_rest_to_python(spark) -> None:
    from pipelines.decode import OFFSET_COMMIT_UDF

    def jvm_decoded(records: list[tuple[bytes, bytes | None]]) -> list[bool]:
        rows = raw_frame(spark, records).selectExpr(
            "offset", f"{OFFSET_COMMIT_UDF}(key, value) IS NOT NULL AS decoded").orderBy("offset").collect()
        return [row["decoded"] for row in rows]

    key, value = commit("g", "orders", 9, {"offset": 5, "leader_epoch": 1, "metadata": "", "commit_timestamp": 9}, 4)
    assert value is not None
    unknown_tag = (key, value[:-1] + bytes([1, 7, 2, 0xAA, 0xBB]))
    assert jvm_decoded(OFFSET_COMMITS) == [True] * len(OFFSET_COMMITS)
    # Malformed commits, and one the reference decoder accepts but Kafka's classes would not write back
    # identically: the Python decoders take them (tests above: same rows, same quarantine reasons).
    commit_cases = [(k, v) for label, k, v in corrupt_cases() if label != "group metadata value cut short"]
    assert jvm_decoded([*commit_cases, unknown_tag]) == [False] * (len(commit_cases) + 1)
