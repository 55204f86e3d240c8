"""Offset commit records: key type 1 (``OffsetCommitKey``/``OffsetCommitValue`` v0–v4)
and the legacy key type 0 (``LegacyOffsetCommitKey``/``LegacyOffsetCommitValue`` v0).

Authority: ``group-coordinator/src/main/resources/common/message/OffsetCommit{Key,Value}.json``
and ``LegacyOffsetCommit{Key,Value}.json`` at Kafka 4.3.1; the hand-written
``OFFSET_COMMIT_VALUE_SCHEMA_V0..V3`` in ``core/.../coordinator/group/GroupMetadataManager.scala``
(2.7) give the same bytes for v0–v3.

Offset commits are more than 90% of the topic's traffic. They decode through the readers
generated from these tables (:mod:`decoders.readers`), which are as fast as the
hand-written ``struct.unpack_from`` path this module used to hold (measured slightly
faster: they build the ``DecodedRecord`` more cheaply) and cover every layout, not only
the ones brokers write.
"""

from __future__ import annotations

from typing import Any

from decoders.spec import RecordSpec, field, versions
from decoders.spec import struct as struct_spec

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
