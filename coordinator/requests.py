"""The group-protocol requests and responses exchanged between simulated clients and the coordinator.

Only the fields the classic protocol's behaviour depends on are kept (``JoinGroupRequest.json``,
``SyncGroupRequest.json``, ``HeartbeatRequest.json``, ``LeaveGroupRequest.json``,
``OffsetCommitRequest.json`` and their responses in ``clients/src/main/resources/common/message``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coordinator.consumer_protocol import Assignment, Subscription
from coordinator.errors import Errors
from coordinator.member import Protocols

UNKNOWN_MEMBER_ID = ""  # JoinGroupRequest.UNKNOWN_MEMBER_ID
UNKNOWN_GENERATION_ID = -1  # JoinGroupRequest.UNKNOWN_GENERATION_ID / OffsetCommitRequest.DEFAULT_GENERATION_ID
NO_PARTITION_LEADER_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH


@dataclass(frozen=True)
class JoinGroupRequest:
    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str
    protocols: Protocols
    client_id: str
    client_host: str
    reason: str = ""
    #: JoinGroup v4+ requires a known member id (KIP-394); v9+ can skip assignment for a
    #: returning static leader (KIP-814). Java 4.x clients send the latest version.
    version: int = 9


@dataclass(frozen=True)
class JoinGroupMember:
    member_id: str
    group_instance_id: str | None
    metadata: Subscription | bytes


@dataclass(frozen=True)
class JoinGroupResponse:
    error: Errors
    member_id: str = UNKNOWN_MEMBER_ID
    generation_id: int = UNKNOWN_GENERATION_ID
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str | None = None
    skip_assignment: bool = False
    members: tuple[JoinGroupMember, ...] = ()


@dataclass(frozen=True)
class SyncGroupRequest:
    group_id: str
    member_id: str
    generation_id: int
    group_instance_id: str | None
    protocol_type: str | None
    protocol_name: str | None
    assignments: dict[str, Assignment | bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class SyncGroupResponse:
    error: Errors
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: Assignment | bytes | None = None


@dataclass(frozen=True)
class HeartbeatRequest:
    group_id: str
    member_id: str
    generation_id: int
    group_instance_id: str | None


@dataclass(frozen=True)
class MemberIdentity:
    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class LeaveGroupRequest:
    group_id: str
    members: tuple[MemberIdentity, ...]


@dataclass(frozen=True)
class LeaveGroupResponse:
    error: Errors
    member_errors: tuple[tuple[MemberIdentity, Errors], ...] = ()


@dataclass(frozen=True)
class OffsetCommitPartition:
    topic: str
    partition: int
    offset: int
    leader_epoch: int = NO_PARTITION_LEADER_EPOCH
    metadata: str = ""


@dataclass(frozen=True)
class OffsetCommitRequest:
    group_id: str
    member_id: str
    generation_id: int
    group_instance_id: str | None
    #: Partitions grouped by topic in request order (the order records are written in).
    partitions: tuple[OffsetCommitPartition, ...]
    #: OffsetCommit v2-v4 ``RetentionTimeMs``; -1 (the default) means broker retention.
    retention_time_ms: int = -1
    #: Topic ids are sent by OffsetCommit v10+ only (KIP-848 clients); classic clients send names.
    topic_ids: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class OffsetCommitResponse:
    error: Errors
    partition_errors: tuple[tuple[str, int, Errors], ...] = ()
