"""A classic group member as the coordinator keeps it.

Port of ``group-coordinator/.../classic/ClassicGroupMember.java`` (Kafka 4.2). The member's
pending JoinGroup/SyncGroup responses ("awaiting futures" in Java) are callbacks here: the
coordinator answers a parked request by calling them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from coordinator.consumer_protocol import Assignment, Subscription


@dataclass(frozen=True)
class Protocol:
    """``JoinGroupRequestProtocol``: an assignor name and the member's metadata for it.

    Metadata is a :class:`~coordinator.consumer_protocol.Subscription` for protocol type
    "consumer" and raw bytes otherwise; equality stands in for ``Arrays.equals`` on the bytes.
    """

    name: str
    metadata: Subscription | bytes


Protocols = tuple[Protocol, ...]
#: ``ClassicGroupMember.EMPTY_ASSIGNMENT``: zero-length assignment bytes.
EMPTY_ASSIGNMENT = None


@dataclass
class ClassicGroupMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    supported_protocols: Protocols
    #: ``None`` is Kafka's empty assignment (zero bytes).
    assignment: Assignment | bytes | None = EMPTY_ASSIGNMENT
    awaiting_join: Callable[[Any], None] | None = field(default=None, repr=False)
    awaiting_sync: Callable[[Any], None] | None = field(default=None, repr=False)
    #: Set for members added by a JoinGroup until their first JoinGroup response.
    is_new: bool = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    def metadata(self, protocol_name: str) -> Subscription | bytes:
        for protocol in self.supported_protocols:
            if protocol.name == protocol_name:
                return protocol.metadata
        raise ValueError(f"Member does not support protocol {protocol_name}")

    def has_satisfied_heartbeat(self) -> bool:
        """An existing member parked in JoinGroup or SyncGroup counts as alive (KAFKA-9752)."""
        if self.is_new:
            return False
        return self.is_awaiting_join or self.is_awaiting_sync

    def matches(self, protocols: Protocols) -> bool:
        return protocols == self.supported_protocols

    def vote(self, candidates: set[str]) -> str:
        """The first of the member's protocols, in its preference order, among the candidates."""
        for protocol in self.supported_protocols:
            if protocol.name in candidates:
                return protocol.name
        raise ValueError("Member does not support any of the candidate protocols")


def protocol_names(protocols: Protocols) -> set[str]:
    """``ClassicGroupMember.plainProtocolSet``."""
    return {p.name for p in protocols}
