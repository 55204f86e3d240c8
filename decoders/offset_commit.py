"""Offset commit records: key type 1 (``OffsetCommitKey``/``OffsetCommitValue`` v0–v4)
and the legacy key type 0 (``LegacyOffsetCommitKey``/``LegacyOffsetCommitValue`` v0).

Authority: ``group-coordinator/src/main/resources/common/message/OffsetCommit{Key,Value}.json``
and ``LegacyOffsetCommit{Key,Value}.json`` at Kafka 4.3.1; the hand-written
``OFFSET_COMMIT_VALUE_SCHEMA_V0..V3`` in ``core/.../coordinator/group/GroupMetadataManager.scala``
(2.7) give the same bytes for v0–v3.

Offset commits are more than 90% of the topic's traffic, so this module also holds a
``struct.unpack_from`` fast path for the layouts brokers actually write. It returns
``None`` for anything unusual (negative lengths, bad UTF-8, unexpected tags, trailing
bytes …) and the caller then runs the table-driven codec, which produces the precise
:class:`~decoders.errors.DecodeError`; the tests check both paths agree.
"""

from __future__ import annotations

import struct
from typing import Any

from decoders.spec import RecordSpec, field, versions
from decoders.spec import struct as struct_spec
from decoders.wire import ZERO_UUID, Uuid

_KEY_FIELDS = (
    field("group", "string", "0", note="the consumer group id"),
    field("topic", "string", "0", note="the topic name (not its id)"),
    field("partition", "int32", "0", note="the partition index"),
)

OFFSET_COMMIT_KEY = struct_spec("OffsetCommitKey", *_KEY_FIELDS)
LEGACY_OFFSET_COMMIT_KEY = struct_spec("LegacyOffsetCommitKey", *_KEY_FIELDS)

OFFSET_COMMIT_VALUE = struct_spec(
    "OffsetCommitValue",
    field("offset", "int64", "0+", note="v0: Kafka 0.8.2 (KAFKA-1012)"),
    field("leaderEpoch", "int32", "3+", default=-1, ignorable=True,
          note="v3: KIP-320 (KAFKA-7437), Kafka 2.1; -1 = unknown"),
    field("metadata", "string", "0+", note="client-supplied; compact string from v4"),
    field("commitTimestamp", "int64", "0+", note="epoch ms; called 'timestamp' in the v0 Scala schema"),
    field("expireTimestamp", "int64", "1", default=-1, ignorable=True,
          note="v1 only: Kafka 0.9 (KAFKA-1634); dropped in v2 by KIP-211 (Kafka 2.1). "
               "Brokers up to 4.3 still write v1 when a commit carries a retention time"),
    field("topicId", "uuid", "4+", tag=0, tagged="4+", ignorable=True,
          note="tag 0: Kafka 4.1 (KAFKA-19141); written only when not the zero uuid"),
)
"""v2: KIP-211 (Kafka 2.1). v4, the first flexible version: KIP-915 (Kafka 3.5), written
by default from Kafka 4.1 (``GroupCoordinatorRecordHelpers.offsetCommitValueVersion``)."""

LEGACY_OFFSET_COMMIT_VALUE = struct_spec(
    "LegacyOffsetCommitValue",
    field("offset", "int64", "0", note="Kafka 0.8.2 (KAFKA-1012)"),
    field("metadata", "string", "0"),
    field("commitTimestamp", "int64", "0"),
)


def _offset_commit_version(value: dict[str, Any]) -> int:
    """``offsetCommitValueVersion(expireTimestampMs.isPresent())`` (4.1–4.3): v1 when the
    commit carries an expire timestamp, else v4."""
    expire = value.get("expire_timestamp", -1)
    return 1 if expire is not None and expire != -1 else 4


OFFSET_COMMIT = RecordSpec(
    type_id=1,
    name="offset_commit",
    key=OFFSET_COMMIT_KEY,
    value=OFFSET_COMMIT_VALUE,
    value_versions=versions("0-4"),
    flexible_versions=versions("4+"),
    written_version=4,
    choose_version=_offset_commit_version,
    note="key type 1, written by every broker since 0.9",
)

LEGACY_OFFSET_COMMIT = RecordSpec(
    type_id=0,
    name="legacy_offset_commit",
    key=LEGACY_OFFSET_COMMIT_KEY,
    value=LEGACY_OFFSET_COMMIT_VALUE,
    value_versions=versions("0"),
    flexible_versions=versions("none"),
    written_version=0,
    note="key type 0, written only by Kafka 0.8.2 (with value v0). Kafka <= 4.0 read it with "
    "OffsetCommitValue 0-4; 4.1+ (LegacyOffsetCommitValue.json) accepts only v0, and so do we",
)

RECORDS = (LEGACY_OFFSET_COMMIT, OFFSET_COMMIT)


# --------------------------------------------------------------------------- fast path

_H = struct.Struct(">h")
_I = struct.Struct(">i")
_Q = struct.Struct(">q")
_QI = struct.Struct(">qi")
_QIH = struct.Struct(">qih")
_QH = struct.Struct(">qh")
_QQ = struct.Struct(">qq")
_TOPIC_ID_TAG = b"\x01\x00\x10"  # 1 tagged field, tag 0, 16 bytes


def fast_key(key: bytes) -> dict[str, Any] | None:
    """``group``/``topic``/``partition`` of a well-formed offset key, else ``None``."""
    n = len(key)
    if n < 10:
        return None
    glen = _H.unpack_from(key, 2)[0]
    p = 4 + glen
    if glen < 0 or p + 2 > n:
        return None
    tlen = _H.unpack_from(key, p)[0]
    q = p + 2 + tlen
    if tlen < 0 or q + 4 != n:
        return None
    try:
        group = key[4:p].decode("utf-8")
        topic = key[p + 2 : q].decode("utf-8")
    except UnicodeDecodeError:
        return None
    return {"group": group, "topic": topic, "partition": _I.unpack_from(key, q)[0]}


def fast_value(version: int, value: bytes) -> dict[str, Any] | None:
    """The value dict of a well-formed offset value at ``version``, else ``None``."""
    n = len(value)
    try:
        if version == 3:
            offset, epoch, mlen = _QIH.unpack_from(value, 2)
            p = 16 + mlen
            if mlen < 0 or p + 8 != n:
                return None
            return {"offset": offset, "leader_epoch": epoch, "metadata": value[16:p].decode("utf-8"),
                    "commit_timestamp": _Q.unpack_from(value, p)[0]}
        if version == 4:
            offset, epoch = _QI.unpack_from(value, 2)
            mlen = value[14] - 1  # single-byte varint: metadata shorter than 127 bytes
            if mlen < 0 or value[14] & 0x80:
                return None
            p = 15 + mlen
            if p + 9 > n:
                return None
            metadata = value[15:p].decode("utf-8")
            commit = _Q.unpack_from(value, p)[0]
            p += 8
            if value[p] == 0 and p + 1 == n:
                topic_id = ZERO_UUID
            elif value[p : p + 3] == _TOPIC_ID_TAG and p + 19 == n:
                topic_id = Uuid(value[p + 3 : n])
            else:
                return None
            return {"offset": offset, "leader_epoch": epoch, "metadata": metadata,
                    "commit_timestamp": commit, "topic_id": topic_id}
        if version == 1:
            offset, mlen = _QH.unpack_from(value, 2)
            p = 12 + mlen
            if mlen < 0 or p + 16 != n:
                return None
            commit, expire = _QQ.unpack_from(value, p)
            return {"offset": offset, "metadata": value[12:p].decode("utf-8"),
                    "commit_timestamp": commit, "expire_timestamp": expire}
        if version in (0, 2):
            offset, mlen = _QH.unpack_from(value, 2)
            p = 12 + mlen
            if mlen < 0 or p + 8 != n:
                return None
            return {"offset": offset, "metadata": value[12:p].decode("utf-8"),
                    "commit_timestamp": _Q.unpack_from(value, p)[0]}
    except (struct.error, IndexError, UnicodeDecodeError):
        return None
    return None
