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

from decoders import (
    DecodedRecord,
    DecodeError,
    Uuid,
    decode_record,
    encode_assignment,
    encode_record,
    encode_subscription,
)
from decoders.group_metadata import GROUP_METADATA, MEMBER_METADATA
from decoders.records import jsonable
from decoders.sticky_user_data import encode_sticky_user_data
from pipelines.decode import (
    GROUP_METADATA_UDF,
    GROUP_RECORD_UDF,
    decode_raw_records,
    group_metadata_records,
    newer_group_records,
    offset_commits,
    quarantine,
)
from schemas.decoded_records import (
    GROUP_METADATA_FAMILY,
    NEWER_GROUP_RECORD_TYPE_IDS,
    NEWER_GROUP_RECORD_TYPES,
    NEWER_GROUP_RECORDS_FAMILY,
    OFFSET_COMMIT_FAMILY,
    OFFSET_COMMIT_FIELDS,
    UNROUTABLE_FAMILY,
    record_struct,
)
from tests.decoders.strategies import (
    assignment_strategy,
    mutated,
    record_cases,
    struct_strategy,
    subscription_strategy,
)

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
    # One string of the key not ASCII, the other ASCII, either way round: the JVM takes ASCII strings
    # straight from the record's bytes and decodes the others (CanonicalReader's asciiByPosition).
    commit("grüppe", "orders", 1, {"offset": 8, "leader_epoch": 2, "metadata": "m", "commit_timestamp": 8}, 4),
    commit("g", "bestellungen-ä", 2, {"offset": 9, "leader_epoch": 2, "metadata": "ü", "commit_timestamp": 9}, 3),
    # Longer than the eight bytes the JVM checks for ASCII at a time, not ASCII inside those words.
    commit("grüppe-der-verbraucher", "bestellungen-des-tägeß", 3,
           {"offset": 10, "leader_epoch": 2, "metadata": "metadaten-für-heute", "commit_timestamp": 10}, 4),
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


def _key(group: bytes, topic: bytes, partition: int = 0) -> bytes:
    """An OffsetCommitKey (type 1, v0) of these raw string bytes, valid UTF-8 or not."""
    return (struct.pack(">hh", 1, len(group)) + group + struct.pack(">h", len(topic)) + topic
            + struct.pack(">i", partition))


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
    assert quarantine(decoded).count() == 0
    assert_decoded_as_the_pure_decoder_does(decoded, batch)


def assert_decoded_as_the_pure_decoder_does(decoded, batch: list[tuple[bytes, bytes | None]]) -> None:  # type: ignore[no-untyped-def]
    """Every record of ``batch`` (source offset = its index) is decoded in Spark as ``decode_record``
    decodes it, or, where ``decode_record`` raises, is in quarantine with its reason and raw bytes."""
    rows = group_records(decoded)
    failed = {row["source_offset"]: row for row in quarantine(decoded).collect()}
    assert sorted([*rows, *failed]) == list(range(len(batch)))
    for i, (key, value) in enumerate(batch):
        try:
            record = decode_record(key, value)
        except DecodeError as exc:
            assert (failed[i]["quarantine_reason"], failed[i]["record_type"], failed[i]["value_version"]) == (
                str(exc), exc.record_type, exc.version), i
            assert (failed[i]["raw_key"], failed[i]["raw_value"]) == (key, value), i
            continue
        assert isinstance(record, DecodedRecord) and i in rows, i
        row = rows[i]
        assert (row["type"], row["record_type"], row["value_version"], row["is_tombstone"]) == (
            record.type, record.key_version, record.value_version, record.is_tombstone)
        column_type = record_struct(record.type)
        # Both sides in the decoders' JSON form (what `offsetlake decode` prints): uuids as Kafka's
        # base64url text, bytes as hex; the Spark row's binary columns arrive as bytearray.
        expected = _fill(column_type, {"key": jsonable(record.key), "value": jsonable(record.value)})
        assert jsonable(row[record.type].asDict(recursive=True)) == expected, record.type


GROUP_METADATA_VERSIONS = GROUP_METADATA.value_versions.members(GROUP_METADATA.max_value_version)
CONSUMER_PROTOCOL_VERSIONS = [0, 1, 2, 3]


@st.composite
def consumer_member(draw: st.DrawFn, version: int, assignor: str | None) -> dict[str, Any]:
    """A member of a consumer group at GroupMetadataValue ``version``: consumer-protocol bytes of any version,
    for cooperative-sticky user data as Kafka's CooperativeStickyAssignor sends it (the generation) or as
    librdkafka's does (StickyAssignor's layout: the previous assignment, then the generation), empty bytes
    for a member the leader gave nothing."""
    member = draw(struct_strategy(MEMBER_METADATA, version))
    subscription_version = draw(st.sampled_from(CONSUMER_PROTOCOL_VERSIONS))
    subscription = draw(subscription_strategy(subscription_version))
    if assignor == "cooperative-sticky":
        generations = st.integers(-(2**31), 2**31 - 1)
        previous = st.lists(st.fixed_dictionaries({"topic": st.text(max_size=8), "partitions": st.lists(
            st.integers(0, 2**31 - 1), max_size=4)}), max_size=2)
        subscription["user_data"] = draw(st.none() | st.builds(
            lambda assignment, generation: encode_sticky_user_data(
                {"previous_assignment": assignment, "generation": generation}),
            st.none() | previous, generations))
    assignment_version = draw(st.sampled_from(CONSUMER_PROTOCOL_VERSIONS))
    member["subscription_raw"] = draw(st.just(b"") | st.just(encode_subscription(subscription, subscription_version)))
    member["assignment_raw"] = draw(st.just(b"") | assignment_strategy(assignment_version).map(
        lambda assignment: encode_assignment(assignment, assignment_version)))
    return member


@st.composite
def consumer_group_metadata_batch(draw: st.DrawFn) -> list[tuple[bytes, bytes | None]]:
    """GroupMetadata records of every value version, of consumer groups on the common assignors, and a tombstone."""
    records = []
    for version in GROUP_METADATA_VERSIONS:
        assignor = draw(st.sampled_from(["range", "roundrobin", "cooperative-sticky", None]))
        value = draw(struct_strategy(GROUP_METADATA.value, version))
        value.update(protocol_type="consumer", protocol=assignor,
                     members=draw(st.lists(consumer_member(version, assignor), max_size=3)))
        records.append(encode_record("group_metadata", draw(struct_strategy(GROUP_METADATA.key, 0)), value, version))
    records.append(encode_record("group_metadata", draw(struct_strategy(GROUP_METADATA.key, 0)), None))
    return records


def jvm_decoded(spark, udf: str, records: list[tuple[bytes | None, bytes | None]],  # type: ignore[no-untyped-def]
                one_task: bool = False) -> list[bool]:
    """Whether the JVM UDF ``udf`` decoded each record (else it left it to the Python decoders); with
    ``one_task``, all of them in one task, one after another in their order."""
    frame = raw_frame(spark, records)
    rows = (frame.coalesce(1) if one_task else frame).selectExpr(
        "offset", f"{udf}(key, value) IS NOT NULL AS decoded").orderBy("offset").collect()
    return [row["decoded"] for row in rows]


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=consumer_group_metadata_batch())
def test_kafkas_own_classes_decode_consumer_group_metadata_of_every_version_in_the_jvm_as_the_pure_decoder_does(
        spark, batch) -> None:
    assert jvm_decoded(spark, GROUP_METADATA_UDF, batch) == [True] * len(batch)
    decoded = decode_raw_records(raw_frame(spark, batch))
    assert quarantine(decoded).count() == 0
    assert_decoded_as_the_pure_decoder_does(decoded, batch)


@st.composite
def mutated_group_metadata_batch(draw: st.DrawFn) -> list[tuple[bytes, bytes | None]]:
    """Consumer GroupMetadata records with their key (after the type) or value mutated (``mutated``), or
    one member's subscription or assignment bytes mutated inside a well-formed record."""
    data = draw(st.data())
    records = []
    for key, value in draw(consumer_group_metadata_batch()):
        where = draw(st.sampled_from(["key", "value", "blob"]))
        if where == "key":
            records.append((key[:2] + mutated(data, key[2:]), value))  # the same record type: the same family
        elif where == "value" and value is not None:
            records.append((key, mutated(data, value)))
        else:
            record = decode_record(key, value)
            assert isinstance(record, DecodedRecord)
            members = (record.value or {}).get("members") or []
            if members:
                member = members[draw(st.integers(0, len(members) - 1))]
                blob = draw(st.sampled_from(["subscription_raw", "assignment_raw"]))
                member[blob] = mutated(data, member[blob])
            records.append(encode_record("group_metadata", record.key, record.value, record.value_version))
    return records


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=mutated_group_metadata_batch())
def test_a_mutated_group_metadata_record_is_decoded_or_quarantined_in_spark_as_the_pure_decoder_does(
        spark, batch) -> None:
    assert_decoded_as_the_pure_decoder_does(decode_raw_records(raw_frame(spark, batch)), batch)


def group_metadata(protocol_type: str, protocol: str | None, subscription: bytes, assignment: bytes = b"",
                   ) -> tuple[bytes, bytes | None]:
    member = {"member_id": "m-1", "group_instance_id": None, "client_id": "c-1", "client_host": "/10.0.0.1",
              "rebalance_timeout": 300000, "session_timeout": 45000, "subscription_raw": subscription,
              "assignment_raw": assignment}
    return encode_record("group_metadata", {"group": "billing"}, {
        "protocol_type": protocol_type, "generation": 5, "protocol": protocol, "leader": "m-1",
        "current_state_timestamp": 1_700_000_000_000, "members": [member]}, 3)


SUBSCRIPTION_V3 = encode_subscription({"topics": ["orders"], "user_data": None, "owned_partitions": [],
                                       "generation_id": 4, "rack_id": None}, 3)
STICKY_V1_USER_DATA = encode_sticky_user_data({"previous_assignment": [{"topic": "orders", "partitions": [0, 1]}],
                                               "generation": 4})


def test_group_metadata_kafkas_classes_do_not_decode_exactly_is_left_to_the_pure_decoder_with_the_same_result(
        spark) -> None:
    """Each of these, the GroupMetadata expression hands to the Python decoders (see its class comment)."""
    future_subscription = b"\x00\x07" + SUBSCRIPTION_V3[2:] + b"future field"
    unknown_version = group_metadata("consumer", "range", SUBSCRIPTION_V3)
    records = [
        group_metadata("consumer", "sticky", encode_subscription(
            {"topics": ["orders"], "user_data": STICKY_V1_USER_DATA}, 1)),
        group_metadata("consumer", "cooperative-sticky", encode_subscription(
            {"topics": ["orders"], "user_data": b"\x00\x00\x04"}, 1)),  # too short for a generation
        group_metadata("consumer", "range", future_subscription),
        group_metadata("consumer", "range", SUBSCRIPTION_V3 + b"\x00"),  # trailing bytes, ignored by Kafka's client
        group_metadata("consumer", "range", b"\xff\xff" + SUBSCRIPTION_V3[2:]),  # negative version: undecoded
        group_metadata("consumer", "range", SUBSCRIPTION_V3, b"\x00\x00\x00\x00"),  # assignment cut short
        group_metadata("it's", None, b"\x01"),  # a quote in the protocol type: Python's repr is not plain quoting
        (unknown_version[0], b"\x00\x09" + (unknown_version[1] or b"")[2:]),  # quarantined
    ]
    assert jvm_decoded(spark, GROUP_METADATA_UDF, records) == [False] * len(records)
    decoded = decode_raw_records(raw_frame(spark, records))
    assert_decoded_as_the_pure_decoder_does(decoded, records)
    undecoded = {row["source_offset"]: row["group_metadata"]["value"]["members"][0]
                 for row in group_metadata_records(decoded).collect()}
    assert undecoded[0]["subscription"]["sticky_user_data"]["generation"] == 4
    assert undecoded[1]["subscription"]["user_data"] == b"\x00\x00\x04"
    assert undecoded[1]["subscription"]["sticky_user_data"] is None
    assert undecoded[2]["subscription"]["version"] == 7
    assert undecoded[4]["undecoded"] and undecoded[6]["undecoded"]


def test_librdkafkas_cooperative_sticky_user_data_is_decoded_in_the_jvm_as_the_pure_decoder_does(spark) -> None:  # type: ignore[no-untyped-def]
    """librdkafka's cooperative-sticky assignor (confluent-kafka's) sends StickyAssignor's layout, the previous
    assignment and then the generation; Kafka's CooperativeStickyAssignor reads a generation from the first four
    bytes and ignores the rest, so both decoders give the topic count (1) where librdkafka meant generation 7."""
    user_data = encode_sticky_user_data(
        {"previous_assignment": [{"topic": "orders", "partitions": [0, 1, 2]}], "generation": 7})
    subscription = encode_subscription({"topics": ["orders"], "user_data": user_data,
                                        "owned_partitions": [{"topic": "orders", "partitions": [0, 1, 2]}],
                                        "generation_id": 7, "rack_id": None}, 3)
    records = [group_metadata("consumer", "cooperative-sticky", subscription)]
    assert jvm_decoded(spark, GROUP_METADATA_UDF, records) == [True]
    decoded = decode_raw_records(raw_frame(spark, records))
    assert_decoded_as_the_pure_decoder_does(decoded, records)
    [row] = group_metadata_records(decoded).collect()
    sticky = row["group_metadata"]["value"]["members"][0]["subscription"]["sticky_user_data"]
    assert (sticky["previous_assignment"], sticky["generation"]) == (None, 1)


def test_group_metadata_kafka_would_not_write_back_identically_is_left_to_python_and_decoded_as_it_decodes(
        spark) -> None:
    """GroupMetadataExpression checks exactness without writing back (whole reads, no U+FFFD, null markers of -1 only,
    minimal varints for v4): each of these it must leave to the Python decoders, which decode or quarantine it."""
    assignment = encode_assignment({"partitions": [{"topic": "orders", "partitions": [0, 1]}],
                                    "user_data": None}, 1)
    key, v3 = group_metadata("consumer", "range", SUBSCRIPTION_V3, assignment)
    assert v3 is not None and b"/10.0.0.1" in v3 and b"c-1" in v3
    member = {"member_id": "m-1", "group_instance_id": None, "client_id": "c-1", "client_host": "/10.0.0.1",
              "rebalance_timeout": 300000, "session_timeout": 45000, "subscription_raw": SUBSCRIPTION_V3,
              "assignment_raw": assignment}
    _, v4 = encode_record("group_metadata", {"group": "billing"}, {
        "protocol_type": "consumer", "generation": 5, "protocol": "range", "leader": "m-1",
        "current_state_timestamp": 1_700_000_000_000, "members": [member]}, 4)
    assert v4 is not None and v4[2] == len("consumer") + 1 and v4[-1] == 0  # compact length; empty tag section
    assert jvm_decoded(spark, GROUP_METADATA_UDF, [(key, v3), (key, v4)]) == [True, True]
    cases = {
        "a trailing byte after the key": (key + b"\x00", v3),
        "invalid utf-8 in a member's client host": (key, v3.replace(b"/10.0.0.1", b"/10.0.0\xff")),
        "a real U+FFFD in a member's client id": (key, v3.replace(b"\x00\x03c-1", b"\x00\x05c-" + "\ufffd".encode())),
        "v4: a non-minimal protocol type length": (key, v4[:2] + bytes([0x80 | v4[2], 0x00]) + v4[3:]),
        "v4: a non-minimal tag count at the end": (key, v4[:-1] + b"\x80\x00"),
        "invalid utf-8 in a subscribed topic": group_metadata(
            "consumer", "range", SUBSCRIPTION_V3.replace(b"orders", b"order\xff"), assignment),
        "a trailing byte after an assignment": group_metadata("consumer", "range", SUBSCRIPTION_V3,
                                                              assignment + b"\x00"),
        "invalid utf-8 in an assigned topic": group_metadata(
            "consumer", "range", SUBSCRIPTION_V3, assignment.replace(b"orders", b"order\xff")),
        "invalid utf-8 in an owned partition's topic": group_metadata("consumer", "range", encode_subscription(
            {"topics": ["orders"], "user_data": None, "owned_partitions": [{"topic": "owned", "partitions": [0]}],
             "generation_id": 4, "rack_id": None}, 3).replace(b"owned", b"owne\xff")),
        "invalid utf-8 in the rack id": group_metadata("consumer", "range", encode_subscription(
            {"topics": ["orders"], "user_data": None, "owned_partitions": [], "generation_id": 4,
             "rack_id": "rack-1"}, 3).replace(b"rack-1", b"rack-\xff")),
        "invalid utf-8 in the leader's id": (key, v3.replace(b"\x00\x05range\x00\x03m-1",
                                                          b"\x00\x05range\x00\x03m-\xff")),
        # Kafka's generated readers take any negative length as null and write -1 back; the reference names
        # a negative length (found by the fuzzing test above, 2026-11-26).
        "a null leader's length of -34": (key, v3.replace(b"\x00\x05range\x00\x03m-1", b"\x00\x05range\xff\xde")),
        "a null group instance id's length of -2": (key, v3.replace(b"\xff\xff\x00\x03c-1", b"\xff\xfe\x00\x03c-1")),
        "a null subscription user data's length of -2": group_metadata(
            "consumer", "range", SUBSCRIPTION_V3.replace(b"orders\xff\xff\xff\xff", b"orders\xff\xff\xff\xfe"),
            assignment),
        "a null assignment user data's length of -2": group_metadata("consumer", "range", SUBSCRIPTION_V3,
                                                                     assignment[:-4] + b"\xff\xff\xff\xfe"),
    }
    assert all(record != group_metadata("consumer", "range", SUBSCRIPTION_V3, assignment) for record in cases.values())
    records = list(cases.values())
    assert dict(zip(cases, jvm_decoded(spark, GROUP_METADATA_UDF, records), strict=True)) == dict.fromkeys(cases, False)
    assert_decoded_as_the_pure_decoder_does(decode_raw_records(raw_frame(spark, records)), records)


def test_a_connect_group_s_member_bytes_are_left_undecoded_by_the_jvm_with_the_pure_decoder_s_reason(spark) -> None:
    records = [group_metadata("connect", "sessioned", b"\x00\x01connect-bytes", b"\x00\x01more")]
    assert jvm_decoded(spark, GROUP_METADATA_UDF, records) == [True]
    decoded = decode_raw_records(raw_frame(spark, records))
    assert_decoded_as_the_pure_decoder_does(decoded, records)
    (member,) = group_metadata_records(decoded).first()["group_metadata"]["value"]["members"]
    assert member["undecoded_reason"] == "protocol type 'connect' is not the consumer protocol"


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


def test_the_first_stage_reads_the_records_once_whatever_families_they_hold(spark, tmp_path) -> None:
    from pipelines.decode import FAMILY, PENDING, first_stage, stage_counts

    path = str(tmp_path / "raw")
    gm_key, gm_value = encode_record("group_metadata", {"group": "g"}, None, None)
    records = [*OFFSET_COMMITS[:3], (gm_key, gm_value), (struct.pack(">h", 99) + b"\x00\x01g", b"\x00\x00")]
    raw_frame(spark, records).write.parquet(path)
    stage = first_stage(spark.read.parquet(path))
    counts = stage_counts(stage)
    assert counts._jdf.queryExecution().executedPlan().toString().count("FileScan parquet") == 1
    assert {(r[FAMILY], r[PENDING], r["source_partition"]): r["count"] for r in counts.collect()} == {
        ("offset_commits", False, 0): 1, ("offset_commits", False, 1): 1, ("offset_commits", False, 2): 1,
        ("group_metadata", False, 0): 1, ("unroutable", True, 1): 1}


def test_stage_counts_keep_families_pending_flags_and_partitions_apart_down_to_the_ints_extremes(spark) -> None:
    from pipelines.decode import FAMILY, PENDING, stage_counts

    stage = spark.createDataFrame(
        [(0, True, -1), (0, True, -1), (0, False, -1), (3, False, 2**31 - 1), (2, True, -(2**31)), (1, False, 0)],
        f"{FAMILY} tinyint, {PENDING} boolean, source_partition int")
    assert sorted(tuple(r) for r in stage_counts(stage).collect()) == [
        ("group_metadata", False, 0, 1), ("newer_group_records", True, -(2**31), 1),
        ("offset_commits", False, -1, 1), ("offset_commits", True, -1, 2), ("unroutable", False, 2**31 - 1, 1)]


def test_kafkas_own_classes_decode_every_well_formed_commit_in_the_jvm_and_leave_the_rest_to_python(spark) -> None:
    from pipelines.decode import OFFSET_COMMIT_UDF

    key, value = commit("g", "orders", 9, {"offset": 5, "leader_epoch": 1, "metadata": "", "commit_timestamp": 9}, 4)
    assert value is not None
    unknown_tag = (key, value[:-1] + bytes([1, 7, 2, 0xAA, 0xBB]))
    assert jvm_decoded(spark, OFFSET_COMMIT_UDF, OFFSET_COMMITS) == [True] * len(OFFSET_COMMITS)
    # Malformed commits, and one the reference decoder accepts but Kafka's classes would not write back
    # identically: the Python decoders take them (tests above: same rows, same quarantine reasons).
    commit_cases = [(k, v) for label, k, v in corrupt_cases() if label != "group metadata value cut short"]
    assert jvm_decoded(spark, OFFSET_COMMIT_UDF, [*commit_cases, unknown_tag]) == [False] * (len(commit_cases) + 1)


def _v4_value(tags: bytes, metadata_length: bytes = b"\x01") -> bytes:
    """An OffsetCommitValue v4 laid out by hand (OffsetCommitValue.json): offset, leader epoch, compact
    metadata (``metadata_length``: its uvarint length + 1, b"\x01" for empty), commit timestamp, then the
    tagged-field section ``tags`` (a uvarint count, then tag, size, data each)."""
    return (struct.pack(">hqi", 4, 42, 3) + metadata_length + struct.pack(">q", 1_700_000_000_000) + tags)


def non_canonical_commits() -> list[tuple[str, bytes, bytes | None]]:
    """Commits whose bytes Kafka's reader takes but would not write back identically, or that hold U+FFFD.

    Each one the JVM must leave to the Python decoders (OffsetCommitExpression's class comment says how it
    tells them apart without writing every record back); the reference then decodes or quarantines it.
    """
    good_key, good_v3 = OFFSET_COMMITS[3]
    legacy_key, legacy_value = OFFSET_COMMITS[8]
    assert good_v3 is not None and legacy_value is not None
    topic_id = bytes(TOPIC_ID)
    return [
        ("trailing byte after the key", good_key + b"\x00", good_v3),
        ("trailing byte after a legacy value", legacy_key, legacy_value + b"\x00"),
        ("overlong utf-8 nul in v3 metadata", good_key,
         good_v3[:2 + 8 + 4] + b"\x00\x02\xc0\x80" + good_v3[2 + 8 + 4 + 2:]),
        ("a lone surrogate in the topic", good_key[:2] + struct.pack(">h", 1) + b"g" + struct.pack(">h", 3)
         + b"\xed\xa0\x80" + good_key[-4:], good_v3),
        ("a real U+FFFD in the group", good_key[:2] + struct.pack(">h", 3) + "\ufffd".encode() + good_key[5:],
         good_v3),
        # Strings longer than eight bytes, which the JVM checks for ASCII a word at a time.
        ("invalid utf-8 in the first eight bytes of a long group", _key(b"gr\xffppe-consumers", b"orders"), good_v3),
        ("invalid utf-8 in the second eight bytes of a long topic", _key(b"g", b"orders-of-the-\xffday"), good_v3),
        ("non-minimal metadata length", good_key, _v4_value(b"\x00", metadata_length=b"\x81\x00")),
        ("non-minimal tag count", good_key, _v4_value(b"\x80\x00")),
        ("the topic id written with its default value", good_key, _v4_value(b"\x01\x00\x10" + bytes(16))),
        ("the topic id tag declaring 20 bytes", good_key, _v4_value(b"\x01\x00\x14" + topic_id)),
        ("the topic id tag declaring 15 bytes", good_key, _v4_value(b"\x01\x00\x0f" + topic_id)),
        ("the topic id twice", good_key, _v4_value(b"\x02" + (b"\x00\x10" + topic_id) * 2)),
    ]


def assert_commits_decoded_as_the_pure_decoder_does(decoded, batch: list[tuple[bytes, bytes | None]]) -> None:  # type: ignore[no-untyped-def]
    """Every commit of ``batch`` (source offset = its index) is a row of offset_commits with the fields
    ``decode_record`` gives, or, where it raises, in quarantine with its reason and raw bytes."""
    rows = {row["source_offset"]: row.asDict() for row in offset_commits(decoded).collect()}
    failed = {row["source_offset"]: row for row in quarantine(decoded).collect()}
    assert sorted([*rows, *failed]) == list(range(len(batch)))
    for i, (key, value) in enumerate(batch):
        try:
            expected = expected_offset_commit(key, value)
        except DecodeError as exc:
            assert (failed[i]["quarantine_reason"], failed[i]["raw_key"], failed[i]["raw_value"]) == (
                str(exc), key, value), i
            continue
        assert {name: rows[i][name] for name in expected} == expected, i


def test_commits_kafka_would_not_write_back_identically_are_left_to_python_and_decoded_as_it_decodes(
        spark) -> None:
    from pipelines.decode import OFFSET_COMMIT_UDF

    cases = non_canonical_commits()
    batch = [(key, value) for _, key, value in cases]
    assert dict(zip([label for label, _, _ in cases], jvm_decoded(spark, OFFSET_COMMIT_UDF, batch), strict=True)
                ) == {label: False for label, _, _ in cases}
    assert_commits_decoded_as_the_pure_decoder_does(decode_raw_records(raw_frame(spark, batch)), batch)


def test_one_task_decodes_each_commit_as_if_it_were_the_first_whatever_came_before(spark) -> None:
    """The JVM decodes a task's commits one after another through the same readers, messages and row
    writer (OffsetCommitExpression.Scratch): nothing of one record may reach the next. In one partition,
    each commit the JVM leaves to Python (non-canonical, an unknown tag) is followed by a well-formed one it
    must decode, a commit with a topic id by one without, a key and value larger than the readers' first
    buffers (or than a call's reader keeps) by short ones."""
    from pipelines.decode import OFFSET_COMMIT_UDF

    key, value = OFFSET_COMMITS[4]
    assert value is not None
    unknown_tag = (key, value[:-1] + bytes([1, 7, 2, 0xAA, 0xBB]))
    with_topic_id, without = OFFSET_COMMITS[5], OFFSET_COMMITS[4]
    long_key = commit("g" * 200, "orders", 1, {"offset": 1, "leader_epoch": 0, "metadata": "m" * 500,
                                                "commit_timestamp": 1}, 4)
    no_kafka_commit = (key, value + bytes(70_000))  # trailing bytes, past the 64 KiB a call's reader keeps
    left = [(k, v) for _, k, v in non_canonical_commits()] + [no_kafka_commit]
    batch = [unknown_tag, without, with_topic_id, without, long_key, OFFSET_COMMITS[0], OFFSET_COMMITS[8],
             OFFSET_COMMITS[7], without]
    for record in left:
        batch += [record, without]
    assert jvm_decoded(spark, OFFSET_COMMIT_UDF, batch, one_task=True) == [
        record not in left and record != unknown_tag for record in batch]
    assert_commits_decoded_as_the_pure_decoder_does(decode_raw_records(raw_frame(spark, batch).coalesce(1)), batch)


def _as_commit_struct(key: bytes, value: bytes | None) -> dict[str, Any]:
    """The pure decoder's commit as the JVM function's struct holds it (its fields only)."""
    from pipelines.decode import _udf_type

    expected = expected_offset_commit(key, value)
    return {name: expected[name] for name in _udf_type().fieldNames()}


@pytest.fixture(params=["interpreted", "generated code"])
def codegen_mode(request):  # type: ignore[no-untyped-def]
    """Each test using it runs with the suite's interpreted expressions and with whole-stage generated code."""
    if request.param == "generated code":
        request.getfixturevalue("generated_code")
    return request.param


def test_two_calls_of_the_commit_function_in_one_row_each_return_their_own_record(spark, codegen_mode) -> None:
    """Each call of the function in a plan writes its rows with its own writer: a projection evaluates
    every call of a row before writing any (OffsetCommitExpression.CommitDecode), so two calls sharing a
    writer would both return the second record."""
    from pipelines.decode import OFFSET_COMMIT_UDF

    pairs = list(zip(OFFSET_COMMITS, OFFSET_COMMITS[1:] + OFFSET_COMMITS[:1], strict=True))
    frame = spark.createDataFrame([(i, *first, *second) for i, (first, second) in enumerate(pairs)],
                                  "i int, k1 binary, v1 binary, k2 binary, v2 binary")
    rows = frame.selectExpr("i", f"{OFFSET_COMMIT_UDF}(k1, v1) AS a", f"{OFFSET_COMMIT_UDF}(k2, v2) AS b").collect()
    assert {row["i"]: (row["a"].asDict(), row["b"].asDict()) for row in rows} == {
        i: (_as_commit_struct(*first), _as_commit_struct(*second)) for i, (first, second) in enumerate(pairs)}


def test_commits_an_aggregate_keeps_past_their_row_are_each_their_own_record(spark, codegen_mode) -> None:
    """The function returns the same row object for every record of a call, rewritten each time (Spark's
    contract for values: whatever keeps one past its row copies it, as it must for a struct read from an
    input row). Aggregates that keep structs across rows, in one task, each keep the right record."""
    from pyspark.sql import functions as F

    from pipelines.decode import OFFSET_COMMIT_UDF

    decoded = raw_frame(spark, OFFSET_COMMITS).coalesce(1).selectExpr(
        "offset", f"{OFFSET_COMMIT_UDF}(key, value) AS d")
    row = decoded.agg(F.collect_list("d").alias("all"), F.first("d").alias("first"), F.last("d").alias("last"),
                      F.max_by("d", "offset").alias("newest"), F.min_by("d", "offset").alias("oldest")).head()
    expected = [_as_commit_struct(k, v) for k, v in OFFSET_COMMITS]
    assert [d.asDict() for d in row["all"]] == expected
    assert [row[name].asDict() for name in ("first", "last", "oldest", "newest")] == [
        expected[0], expected[-1], expected[0], expected[-1]]


@st.composite
def mutated_commit_batch(draw: st.DrawFn) -> list[tuple[bytes, bytes | None]]:
    """Commits of every version with their key (after the record type) or value mutated (``mutated``)."""
    data = draw(st.data())
    records = []
    for key, value in draw(st.lists(st.sampled_from(OFFSET_COMMITS), min_size=20, max_size=40)):
        if value is None or draw(st.booleans()):
            records.append((key[:2] + mutated(data, key[2:]), value))
        else:
            records.append((key, mutated(data, value)))
    return records


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=mutated_commit_batch())
def test_a_mutated_commit_is_decoded_or_quarantined_in_spark_as_the_pure_decoder_does(spark, batch) -> None:
    assert_commits_decoded_as_the_pure_decoder_does(decode_raw_records(raw_frame(spark, batch)), batch)


def test_the_jvm_offset_commit_function_returns_the_fields_of_the_offset_commit_schema(spark) -> None:
    from pipelines.decode import OFFSET_COMMIT_UDF, _udf_type

    key, value = OFFSET_COMMITS[4]
    returned = raw_frame(spark, [(key, value)]).selectExpr(f"{OFFSET_COMMIT_UDF}(key, value) AS d").schema["d"]
    assert [(f.name, f.dataType) for f in returned.dataType.fields] == \
        [(f.name, f.dataType) for f in _udf_type().fields]


@pytest.fixture
def generated_code(spark):  # type: ignore[no-untyped-def]
    """Spark's defaults for the test (the suite runs interpreted expressions, tests/spark_conf.py)."""
    keys = ("spark.sql.codegen.factoryMode", "spark.sql.codegen.wholeStage")
    before = {k: spark.conf.get(k) for k in keys}
    spark.conf.set("spark.sql.codegen.factoryMode", "CODEGEN_ONLY")
    spark.conf.set("spark.sql.codegen.wholeStage", "true")
    yield
    for k, v in before.items():
        spark.conf.set(k, v)


def test_offset_commits_decode_the_same_in_generated_code_as_interpreted(spark, generated_code) -> None:
    """Production runs the JVM offset-commit function inside whole-stage generated code; the suite otherwise not."""
    key, value = OFFSET_COMMITS[4]
    assert value is not None
    unknown_tag = (key, value[:-1] + bytes([1, 7, 2, 0xAA, 0xBB]))  # decoded by the Python pass
    cases = corrupt_cases()
    records = [*OFFSET_COMMITS, unknown_tag, *[(k, v) for _, k, v in cases]]
    decoded = decode_raw_records(raw_frame(spark, records))
    plan = offset_commits(decoded)._jdf.queryExecution().executedPlan().toString()
    # "*(n)": an operator inside whole-stage generated code; the commit decode's projection is one of them.
    assert any(line.lstrip(":- +").startswith("*(") and "offsetlake_decode_offset_commit" in line
               for line in plan.splitlines()), plan
    rows = {r["source_offset"]: r.asDict() for r in offset_commits(decoded).collect()}
    expected = {i: expected_offset_commit(k, v) for i, (k, v) in enumerate([*OFFSET_COMMITS, unknown_tag])}
    assert {i: {k: rows[i][k] for k in expected[i]} for i in rows} == expected
    reasons = {r["source_offset"]: r["quarantine_reason"] for r in quarantine(decoded).collect()}
    first_corrupt = len(OFFSET_COMMITS) + 1
    assert set(reasons) == set(range(first_corrupt, len(records)))
    for i, (label, k, v) in enumerate(cases):
        with pytest.raises(DecodeError) as caught:
            decode_record(k, v)
        assert reasons[first_corrupt + i] == str(caught.value), label


KEYS_AND_THEIR_TYPES = [(None, None), (b"", None), (b"\x01", None), (b"\x00\x01", 1), (b"\x00\x02group", 2),
                        (b"\x00\x17", 23), (b"\x01\x00", 256), (b"\x7f\xff", 32767), (b"\xff\xfe\x00", -2)]


def _record_types(spark):  # type: ignore[no-untyped-def]
    """(each key's record type in Spark, the physical plan that computed them)."""
    from pyspark.sql import functions as F

    from pipelines.decode import record_type_column

    frame = raw_frame(spark, [(key, None) for key, _ in KEYS_AND_THEIR_TYPES])
    typed = frame.select("offset", record_type_column(F.col("key")).alias("t"))
    rows = typed.collect()
    return ([row["t"] for row in sorted(rows, key=lambda row: row["offset"])],
            typed._jdf.queryExecution().executedPlan().toString())


def test_the_record_type_is_the_keys_leading_big_endian_int16_and_null_for_a_key_shorter_than_two_bytes(
        spark) -> None:
    """As CoordinatorRecordSerde reads it: a signed int16, so 0xfffe is -2 (an unknown type, quarantined)."""
    types, _ = _record_types(spark)
    assert types == [expected for _, expected in KEYS_AND_THEIR_TYPES]


def test_the_record_type_is_the_same_in_generated_code_as_interpreted(spark, generated_code) -> None:
    types, plan = _record_types(spark)
    assert any(line.lstrip(":- +").startswith("*(") and "offsetlake_record_type" in line
               for line in plan.splitlines()), plan
    assert types == [expected for _, expected in KEYS_AND_THEIR_TYPES]


def test_a_batch_the_jvm_decodes_whole_leaves_nothing_pending_and_starts_no_python(spark) -> None:
    from pipelines.decode import complete, families, family_counts, first_stage

    first = families(first_stage(raw_frame(spark, OFFSET_COMMITS)))
    counts = {(r["family"], r["status"]): r["count"] for r in family_counts(first).collect()}
    assert counts == {("offset_commits", "decoded"): len(OFFSET_COMMITS)}
    done = complete(first, pending=set())
    plans = "".join(frame._jdf.queryExecution().executedPlan().toString() for frame in done.frames().values())
    assert "MapInArrow" not in plans and "PythonMapInArrow" not in plans
    assert offset_commits(done).count() == len(OFFSET_COMMITS)


def test_rows_the_jvm_leaves_are_pending_with_their_raw_bytes_until_the_python_stage(spark) -> None:
    from pipelines.decode import PENDING, complete, families, first_stage

    key, value = OFFSET_COMMITS[4]
    assert value is not None
    unknown_tag = value[:-1] + bytes([1, 7, 2, 0xAA, 0xBB])
    first = families(first_stage(raw_frame(spark, [OFFSET_COMMITS[0], (key, unknown_tag)])))
    rows = {r["source_offset"]: r for r in first.offset_commits.collect()}
    assert (rows[0][PENDING], rows[0]["raw_key"], rows[0]["group"]) == (False, None, "g")
    assert (rows[1][PENDING], bytes(rows[1]["raw_key"]), bytes(rows[1]["raw_value"]), rows[1]["group"]) == \
        (True, key, unknown_tag, None)
    done = {r["source_offset"]: r for r in offset_commits(complete(first, pending={"offset_commits"})).collect()}
    assert sorted(done) == [0, 1]
    assert (done[1]["group"], done[1]["partition"], done[1]["offset"]) == ("g", 4, 14)
    assert "raw_key" not in done[1].asDict()  # decoded rows keep no raw bytes


# ------------------------------------------------------------------ the newer group records in the JVM
NEWER_CASES = [(spec, version) for spec, version in record_cases() if spec.type_id in NEWER_GROUP_RECORD_TYPE_IDS]
NOT_IN_KAFKAS_CLASSES = {9}
"""ShareGroupPartitionMetadata existed only in Kafka 4.0: the shaded Kafka 4.3.1 has no class for it."""


@st.composite
def newer_group_record_batch(draw: st.DrawFn) -> list[tuple[bytes, bytes | None]]:
    """A record of every newer type and version Kafka's classes know, or its tombstone."""
    records = []
    for spec, version in NEWER_CASES:
        if spec.type_id in NOT_IN_KAFKAS_CLASSES:
            continue
        key = draw(struct_strategy(spec.key, 0))
        value = draw(st.none() | struct_strategy(spec.value, version))
        records.append(encode_record(spec.name, key, value, None if value is None else version))
    return records


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=newer_group_record_batch())
def test_kafkas_own_classes_decode_every_newer_group_record_type_and_version_in_the_jvm_as_the_pure_decoder_does(
        spark, batch) -> None:
    assert jvm_decoded(spark, GROUP_RECORD_UDF, batch) == [True] * len(batch)
    decoded = decode_raw_records(raw_frame(spark, batch))
    assert quarantine(decoded).count() == 0
    assert_decoded_as_the_pure_decoder_does(decoded, batch)


def test_the_jvm_group_record_functions_return_the_newer_familys_columns(spark) -> None:
    """The decode returns the family's value_version and is_tombstone and the record's struct as bytes (three
    fields keep the first stage in whole-stage code); the struct function shows those bytes as the family's
    column of each record type."""
    from pipelines.decode import GROUP_RECORD_STRUCT_UDF

    key, value = encode_record("consumer_group_metadata", {"group_id": "g"}, {"epoch": 1})
    decoded = raw_frame(spark, [(key, value)]).selectExpr(f"{GROUP_RECORD_UDF}(key, value) AS d")
    assert [(f.name, f.dataType.simpleString()) for f in decoded.schema["d"].dataType.fields] == [
        ("value_version", "smallint"), ("is_tombstone", "boolean"), ("record", "binary")]
    structs = decoded.selectExpr(*[f"{GROUP_RECORD_STRUCT_UDF}(d.record, '{name}') AS {name}"
                                   for name in NEWER_GROUP_RECORD_TYPES])
    assert [structs.schema[name].dataType for name in NEWER_GROUP_RECORD_TYPES] == [
        NEWER_GROUP_RECORDS_FAMILY[name].dataType for name in NEWER_GROUP_RECORD_TYPES]
    assert structs.first()["consumer_group_metadata"].asDict(recursive=True) == {
        "key": {"group_id": "g"}, "value": {"epoch": 1, "metadata_hash": 0}}


def _member_metadata(**changes: Any) -> tuple[bytes, bytes]:
    value = {"instance_id": None, "rack_id": "rack-1", "client_id": "c-1", "client_host": "/10.0.0.7",
             "subscribed_topic_names": ["orders"], "subscribed_topic_regex": None, "rebalance_timeout_ms": 300_000,
             "server_assignor": "uniform", "classic_member_metadata": None, **changes}
    key, encoded = encode_record("consumer_group_member_metadata", {"group_id": "g", "member_id": "m-1"}, value)
    assert encoded is not None
    return key, encoded


def newer_records_left_to_python() -> dict[str, tuple[bytes, bytes | None]]:
    """Records of the newer family that GroupRecordExpression must leave to the Python decoders (its class
    comment says why), which decode or quarantine them."""
    topic_id = Uuid(bytes(range(1, 17)))
    epoch_key, epoch = encode_record("consumer_group_metadata", {"group_id": "g"}, {"epoch": 7})
    assert epoch is not None and epoch.endswith(b"\x00")  # v0, flexible: an empty tag section at the end
    hash_key, hashed = encode_record("consumer_group_metadata", {"group_id": "g"}, {"epoch": 7, "metadata_hash": -1})
    assert hashed is not None and hashed.endswith(b"\x01\x00\x08" + b"\xff" * 8)  # tag 0, 8 bytes
    member_key, member = _member_metadata()
    endpoint_key, endpoint = encode_record("streams_group_member_metadata", {"group_id": "g", "member_id": "m-1"}, {
        "instance_id": None, "rack_id": None, "client_id": "c", "client_host": "h", "rebalance_timeout_ms": 1,
        "topology_epoch": 1, "process_id": "p", "user_endpoint": {"host": "h", "port": 8080}, "client_tags": []})
    assert endpoint is not None and b"\x01\x02h\x1f\x90" in endpoint  # the endpoint's int8 marker 1, then host, port
    share_9 = encode_record(9, {"group_id": "g"}, {"topics": [{"topic_id": topic_id, "topic_name": "orders",
                                                                "num_partitions": 1, "partition_metadata": []}]})
    return {
        "ShareGroupPartitionMetadata (type 9, Kafka 4.0 only)": share_9,
        "an unknown tagged field": (epoch_key, epoch[:-1] + b"\x01\x07\x02\xaa\xbb"),
        "an unknown tagged field in a nested struct": (  # tag 5 in the endpoint's own tag section
            endpoint_key, endpoint.replace(b"\x01\x02h\x1f\x90\x00", b"\x01\x02h\x1f\x90\x01\x05\x01\x00")),
        "a known tag declaring 9 bytes for its int64": (hash_key, hashed[:-9] + b"\x09" + hashed[-8:]),
        "a known tag written with its default value": (epoch_key, epoch[:-1] + b"\x01\x00\x08" + bytes(8)),
        "a trailing byte after the value": (epoch_key, epoch + b"\x00"),
        "a trailing byte after the key": (epoch_key + b"\x00", epoch),
        "a non-minimal tag count": (epoch_key, epoch[:-1] + b"\x80\x00"),
        "a non-minimal client id length": (member_key, member.replace(b"\x04c-1", b"\x84\x00c-1")),
        "invalid utf-8 in the client host": (member_key, member.replace(b"/10.0.0.7", b"/10.0.0\xff")),
        "a real U+FFFD in the member id": (member_key[:-3] + "\ufffd".encode(), member),
        "value version 1": (epoch_key, b"\x00\x01" + epoch[2:]),
        "the value cut short": (epoch_key, epoch[:-2]),
    }


def test_newer_group_records_kafkas_classes_do_not_decode_exactly_are_left_to_python_and_decoded_as_it_decodes(
        spark) -> None:
    cases = newer_records_left_to_python()
    records = list(cases.values())
    assert dict(zip(cases, jvm_decoded(spark, GROUP_RECORD_UDF, records), strict=True)) == dict.fromkeys(cases, False)
    assert_decoded_as_the_pure_decoder_does(decode_raw_records(raw_frame(spark, records)), records)


def test_a_nullable_structs_marker_other_than_1_is_decoded_in_the_jvm_as_the_pure_decoder_does(spark) -> None:
    """Kafka's reader and the reference both read any int8 marker >= 0 as "present": the same row, so the
    JVM takes it although Kafka would write the marker back as 1 (GroupRecordExpression.sameSize)."""
    key, value = encode_record("streams_group_member_metadata", {"group_id": "g", "member_id": "m-1"}, {
        "instance_id": None, "rack_id": None, "client_id": "c", "client_host": "h", "rebalance_timeout_ms": 1,
        "topology_epoch": 1, "process_id": "p", "user_endpoint": {"host": "h", "port": 8080}, "client_tags": []})
    assert value is not None and value.count(b"\x01\x02h\x1f\x90") == 1
    records = [(key, value.replace(b"\x01\x02h\x1f\x90", bytes([marker]) + b"\x02h\x1f\x90")) for marker in (2, 127)]
    assert jvm_decoded(spark, GROUP_RECORD_UDF, records) == [True, True]
    decoded = decode_raw_records(raw_frame(spark, records))
    assert_decoded_as_the_pure_decoder_does(decoded, records)
    assert [r["streams_group_member_metadata"]["value"]["user_endpoint"]["port"]
            for r in newer_group_records(decoded).collect()] == [8080, 8080]


@st.composite
def mutated_newer_group_record_batch(draw: st.DrawFn) -> list[tuple[bytes, bytes | None]]:
    """Newer group records with their key (after the type) or value mutated (``mutated``), some left whole."""
    data = draw(st.data())
    records = []
    for key, value in draw(newer_group_record_batch()):
        where = draw(st.sampled_from(["key", "value", "none"]))
        if where == "key":
            records.append((key[:2] + mutated(data, key[2:]), value))  # the same record type: the same family
        elif where == "value" and value is not None:
            records.append((key, mutated(data, value)))
        else:
            records.append((key, value))
    return records


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=mutated_newer_group_record_batch())
def test_a_mutated_newer_group_record_is_decoded_or_quarantined_in_spark_as_the_pure_decoder_does(
        spark, batch) -> None:
    assert_decoded_as_the_pure_decoder_does(decode_raw_records(raw_frame(spark, batch)), batch)


def test_kafka_4_3s_tags_are_decoded_in_the_jvm_as_the_pure_decoder_does(spark) -> None:
    """bench/group_records.py's KIP-848 records as a Kafka 4.3 broker writes them: the assignment timestamp (type 6)
    and assignment epochs (type 8) that Kafka 4.3 added, which the shaded Kafka 4.2.1 classes left to Python."""
    from bench.group_records import kip848_records

    records = kip848_records()
    assert jvm_decoded(spark, GROUP_RECORD_UDF, records) == [True] * len(records)
    assert_decoded_as_the_pure_decoder_does(decode_raw_records(raw_frame(spark, records)), records)


def test_newer_group_records_decode_the_same_in_generated_code_as_interpreted(spark, generated_code) -> None:
    """Production runs the JVM group-record function in generated code (a generated projection: its result has
    more leaf fields than spark.sql.codegen.maxFields, so Spark keeps it out of whole-stage code); the suite
    otherwise runs it interpreted."""
    from bench.group_records import kip848_records

    records = [*kip848_records(), *newer_records_left_to_python().values()]
    decoded = decode_raw_records(raw_frame(spark, records))
    assert GROUP_RECORD_UDF in newer_group_records(decoded)._jdf.queryExecution().executedPlan().toString()
    assert_decoded_as_the_pure_decoder_does(decoded, records)
