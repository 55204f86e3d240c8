"""The records the coordinator appends to ``__consumer_offsets``, and which value versions it uses.

Builders follow ``GroupCoordinatorRecordHelpers.java``; the version rules come from that file at
each release:

==============================  =======================================================
OffsetCommitValue               v1 when the commit set an expire timestamp (explicit
                                retention, OffsetCommit v2-v4); otherwise v3 up to 4.0
                                and v4 from 4.1 (``offsetCommitValueVersion``)
GroupMetadataValue              v3 from IBP 2.3 on, including every 4.x release
                                (``GROUP_METADATA_VALUE_VERSION = 3``)
empty group record on creation  4.x only (``newEmptyGroupMetadataRecord``, written when a
                                JoinGroup creates a group and nothing else is written)
==============================  =======================================================

Bytes are produced by :func:`decoders.encode_record` (the project's single codec), so this module
only decides *what* is written; :func:`encode` is the one place that calls the codec.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from coordinator.consumer_protocol import Assignment, Subscription
from decoders import encode_record

if TYPE_CHECKING:
    from coordinator.group import ClassicGroup
    from coordinator.offsets import OffsetAndMetadata

OFFSET_COMMIT = "offset_commit"
GROUP_METADATA = "group_metadata"


@dataclass(frozen=True, order=True)
class KafkaVersion:
    """A broker release line, e.g. ``KafkaVersion.parse("4.2")``; decides record value versions."""

    major: int
    minor: int

    SUPPORTED = "2.3 to 4.3"

    @classmethod
    def parse(cls, text: str) -> KafkaVersion:
        match = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)?", str(text).strip())
        if not match:
            raise ValueError(f"kafka_version {text!r} is not like '4.2'")
        version = cls(int(match.group(1)), int(match.group(2)))
        if not (cls(2, 3) <= version <= cls(4, 3)):
            raise ValueError(f"kafka_version {text!r} is outside the supported range {cls.SUPPORTED}")
        return version

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def offset_commit_value_version(self, has_expire_timestamp: bool) -> int:
        if has_expire_timestamp:
            return 1
        return 4 if self >= KafkaVersion(4, 1) else 3

    def group_metadata_value_version(self) -> int:
        return 3

    @property
    def writes_empty_group_on_create(self) -> bool:
        """Only the 4.x (Java) coordinator commits a newly created group with an empty record."""
        return self >= KafkaVersion(4, 0)


@dataclass(frozen=True)
class CoordinatorRecord:
    """One record for ``__consumer_offsets`` before encoding: a type, a key and a value (None is
    a tombstone), in the snake_case field names of Kafka's schemas."""

    record_type: str
    key: dict
    value: dict | None
    value_version: int | None
    partition: int = -1
    timestamp: int = -1
    #: Why a tombstone was written ("deleted", "expired", "offset deleted"); not part of the bytes.
    note: str | None = field(default=None, compare=False)


def _assignment_value(assignment: Assignment | bytes | None) -> dict | bytes:
    if assignment is None:
        return b""  # ClassicGroupMember.EMPTY_ASSIGNMENT
    if isinstance(assignment, Assignment):
        return assignment.as_record_dict()
    return assignment


def _subscription_value(metadata: Subscription | bytes) -> dict | bytes:
    if isinstance(metadata, Subscription):
        return metadata.as_record_dict()
    return metadata


def group_metadata_record(
    group: ClassicGroup, assignment: dict[str, Assignment | bytes | None], version: KafkaVersion
) -> CoordinatorRecord:
    """``newGroupMetadataRecord``: members in the group's ``HashMap`` order, each with the
    metadata of the selected protocol and the given assignment."""
    members = []
    for member in group.all_members():
        if group.protocol_name is None:
            raise AssertionError("Attempted to write non-empty group metadata with no defined protocol.")
        if member.member_id not in assignment:
            raise AssertionError(
                f"Attempted to write member {member.member_id} of group {group.group_id} with no assignment."
            )
        members.append(
            {
                "member_id": member.member_id,
                "group_instance_id": member.group_instance_id,
                "client_id": member.client_id,
                "client_host": member.client_host,
                "rebalance_timeout": member.rebalance_timeout_ms,
                "session_timeout": member.session_timeout_ms,
                "subscription": _subscription_value(member.metadata(group.protocol_name)),
                "assignment": _assignment_value(assignment[member.member_id]),
            }
        )
    return CoordinatorRecord(
        GROUP_METADATA,
        {"group": group.group_id},
        {
            "protocol_type": group.protocol_type or "",
            "generation": group.generation_id,
            "protocol": group.protocol_name,
            "leader": group.leader_id,
            "current_state_timestamp": group.current_state_timestamp_or_default(),
            "members": members,
        },
        version.group_metadata_value_version(),
    )


def empty_group_metadata_record(group: ClassicGroup, version: KafkaVersion) -> CoordinatorRecord:
    """``newEmptyGroupMetadataRecord``: generation 0, no protocol, no leader, no members."""
    return CoordinatorRecord(
        GROUP_METADATA,
        {"group": group.group_id},
        {
            "protocol_type": "",
            "generation": 0,
            "protocol": None,
            "leader": None,
            "current_state_timestamp": group.current_state_timestamp_or_default(),
            "members": [],
        },
        version.group_metadata_value_version(),
    )


def group_tombstone(group_id: str, note: str) -> CoordinatorRecord:
    return CoordinatorRecord(GROUP_METADATA, {"group": group_id}, None, None, note=note)


def offset_commit_record(
    group_id: str, topic: str, partition: int, offset: OffsetAndMetadata, version: KafkaVersion
) -> CoordinatorRecord:
    """``newOffsetCommitRecord``; the expire timestamp only exists in value v1 and the topic id
    only in v4 (a tagged field written when non-zero)."""
    value_version = version.offset_commit_value_version(offset.expire_timestamp_ms is not None)
    value = {
        "offset": offset.committed_offset,
        "leader_epoch": -1 if offset.leader_epoch is None else offset.leader_epoch,
        "metadata": offset.metadata,
        "commit_timestamp": offset.commit_timestamp_ms,
        "expire_timestamp": -1 if offset.expire_timestamp_ms is None else offset.expire_timestamp_ms,
    }
    if offset.topic_id is not None and value_version >= 4:
        value["topic_id"] = offset.topic_id
    return CoordinatorRecord(
        OFFSET_COMMIT, {"group": group_id, "topic": topic, "partition": partition}, value, value_version
    )


def offset_tombstone(group_id: str, topic: str, partition: int, note: str) -> CoordinatorRecord:
    return CoordinatorRecord(
        OFFSET_COMMIT, {"group": group_id, "topic": topic, "partition": partition}, None, None, note=note
    )


def encode(record: CoordinatorRecord) -> tuple[bytes, bytes | None]:
    """Key and value bytes exactly as the broker writes them (via :mod:`decoders`)."""
    return encode_record(record.record_type, record.key, record.value, record.value_version)
