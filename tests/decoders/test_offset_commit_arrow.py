"""decoders/offset_commit_arrow.py: the vectorized offset-commit decoder agrees with decode_record.

Two properties: every well-formed offset commit of every version is accepted
(``ok``) with the same values as the table-driven decoder; and whatever bytes
come in, a row marked ``ok`` is one decode_record also decodes, to the same values.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from decoders import DecodedRecord, DecodeError, Uuid, decode_record, encode_record
from decoders.layout import BY_NAME
from decoders.offset_commit_arrow import decode_offset_commits
from tests.decoders.strategies import struct_strategy

OFFSET = BY_NAME["offset_commit"]
LEGACY = BY_NAME["legacy_offset_commit"]


@st.composite
def offset_commit_records(draw: st.DrawFn) -> tuple[bytes, bytes | None]:
    spec = draw(st.sampled_from([OFFSET, OFFSET, OFFSET, LEGACY]))
    key = draw(struct_strategy(spec.key, 0))
    versions = spec.value_versions.members(spec.max_value_version)
    version = draw(st.sampled_from(versions))
    value = draw(st.none() | struct_strategy(spec.value, version))
    if value is not None and "metadata" in value:
        value["metadata"] = draw(st.sampled_from(["", value["metadata"], "x" * 130, "é" * 200]))
    return encode_record(spec.name, key, value, None if value is None else version)


def columns_of(batch: Any, i: int) -> dict[str, Any]:
    return {name: array[i].as_py() for name, array in batch.columns.items()}


def expected_columns(record: DecodedRecord) -> dict[str, Any]:
    expected: dict[str, Any] = dict.fromkeys(
        ("offset", "leader_epoch", "metadata", "commit_timestamp", "expire_timestamp", "topic_id"))
    expected.update(record.key)
    for name, value in (record.value or {}).items():
        expected[name] = str(value) if isinstance(value, Uuid) else value
    if expected["topic_id"] == str(Uuid(bytes(16))):
        expected["topic_id"] = None  # the tag's default value is not on the wire
    return expected


@settings(max_examples=150, deadline=None)
@given(st.lists(offset_commit_records(), min_size=1, max_size=20))
def test_well_formed_offset_commits_are_all_accepted_with_the_decoders_values(records) -> None:
    batch = decode_offset_commits(pa.array([k for k, _ in records], pa.binary()),
                                  pa.array([v for _, v in records], pa.binary()))
    assert batch.ok.all()
    for i, (key, value) in enumerate(records):
        record = decode_record(key, value)
        assert isinstance(record, DecodedRecord)
        assert columns_of(batch, i) == expected_columns(record)
        assert batch.is_tombstone[i] == record.is_tombstone
        assert batch.record_type[i] == record.key_version
        if not record.is_tombstone:
            assert batch.value_version[i] == record.value_version


@st.composite
def mangled(draw: st.DrawFn) -> tuple[bytes, bytes | None]:
    key, value = draw(offset_commit_records())
    which = draw(st.sampled_from(["key", "value", "both", "random"]))
    if which == "random":
        return draw(st.binary(max_size=40)), draw(st.none() | st.binary(max_size=60))

    def mangle(data: bytes) -> bytes:
        op = draw(st.sampled_from(["cut", "append", "flip"]))
        if op == "cut" and data:
            return data[: draw(st.integers(0, len(data) - 1))]
        if op == "append":
            return data + draw(st.binary(min_size=1, max_size=4))
        if not data:
            return data
        i = draw(st.integers(0, len(data) - 1))
        return data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1:]

    if which in ("key", "both"):
        key = mangle(key)
    if which in ("value", "both") and value is not None:
        value = mangle(value)
    return key, value


@settings(max_examples=300, deadline=None)
@given(st.lists(mangled(), min_size=1, max_size=20), offset_commit_records())
def test_a_row_marked_ok_is_never_one_the_decoder_rejects_or_reads_differently(records, well_formed) -> None:
    # One well-formed record rides along at the end, so the property is checked on at least one
    # accepted row of every example (mangled rows are all rejected more often than not).
    records = [*records, well_formed]
    batch = decode_offset_commits(pa.array([k for k, _ in records], pa.binary()),
                                  pa.array([v for _, v in records], pa.binary()))
    assert batch.ok[-1], "a well-formed offset commit beside mangled ones was rejected"
    checked = 0
    for i, (key, value) in enumerate(records):
        if not batch.ok[i]:
            continue
        checked += 1
        try:
            record = decode_record(key, value)
        except DecodeError as exc:  # pragma: no cover - the property under test
            raise AssertionError(f"vectorized path accepted {key.hex()}/{value and value.hex()}: {exc}") from exc
        assert isinstance(record, DecodedRecord) and record.type in ("offset_commit", "legacy_offset_commit")
        assert columns_of(batch, i) == expected_columns(record)
    assert checked >= 1


def test_null_keys_and_non_offset_records_are_left_to_the_table_driven_decoder() -> None:
    group_key, group_value = encode_record("group_metadata", {"group": "g"}, None, None)
    batch = decode_offset_commits(pa.array([None, group_key, b"\x00"], pa.binary()),
                                  pa.array([b"\x00\x01", group_value, None], pa.binary()))
    assert not batch.ok.any()


def test_a_sliced_arrow_array_is_read_from_its_own_offset() -> None:
    records = [encode_record("offset_commit", {"group": f"g{i}", "topic": "t", "partition": i},
                             {"offset": i, "metadata": "", "commit_timestamp": 0}, 4) for i in range(6)]
    keys = pa.array([k for k, _ in records], pa.binary()).slice(2, 3)
    values = pa.array([v for _, v in records], pa.binary()).slice(2, 3)
    batch = decode_offset_commits(keys, values)
    assert batch.ok.all()
    assert batch.columns["group"].to_pylist() == ["g2", "g3", "g4"]
    assert batch.columns["offset"].to_pylist() == [2, 3, 4]
