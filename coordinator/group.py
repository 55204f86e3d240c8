"""A classic consumer group's in-memory state and its legal state machine.

Port of ``group-coordinator/.../classic/ClassicGroup.java`` and ``ClassicGroupState.java``
(Kafka 4.2). Members live in a :class:`~coordinator.java_collections.JavaHashMap` because Kafka's
``HashMap`` order is observable: it is the member order of GroupMetadata records and of the
leader's JoinGroup response, and ``remove`` hands leadership to the first remaining key.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from enum import Enum

from coordinator.consumer_protocol import PROTOCOL_TYPE, Assignment, Subscription
from coordinator.errors import Errors, KafkaError
from coordinator.java_collections import JavaHashMap, JavaHashSet
from coordinator.member import ClassicGroupMember, Protocols, protocol_names
from coordinator.requests import JoinGroupMember, JoinGroupResponse, SyncGroupResponse


class GroupState(Enum):
    """``ClassicGroupState``; the value is the name Kafka prints."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"

    @property
    def valid_previous_states(self) -> frozenset[GroupState]:
        return _VALID_PREVIOUS[self]


_VALID_PREVIOUS: dict[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset({GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
}


class IllegalStateTransition(AssertionError):
    """Kafka's ``assertValidTransition`` throws ``IllegalStateException``; reaching it is a bug."""


class GroupEvents:
    """Hooks the coordinator fires for observers (the timeline); every method is a no-op here."""

    def group_created(self, group: ClassicGroup, at: int) -> None: ...

    def state_changed(self, group: ClassicGroup, previous: GroupState, at: int, reason: str | None) -> None: ...

    def generation_started(self, group: ClassicGroup, at: int) -> None: ...

    def assignment_stored(self, group: ClassicGroup, at: int) -> None: ...

    def static_member_replaced(self, group: ClassicGroup, old_member_id: str, new_member_id: str, at: int) -> None: ...

    def member_added(self, group: ClassicGroup, member: ClassicGroupMember, at: int) -> None: ...

    def member_removed(self, group: ClassicGroup, member: ClassicGroupMember, at: int, reason: str) -> None: ...

    def group_removed(self, group_id: str, at: int, reason: str) -> None: ...


class ClassicGroup:
    """``ClassicGroup``: members, protocol, generation and the state machine of one group."""

    def __init__(self, group_id: str, now: Callable[[], int], events: GroupEvents, new_uuid: Callable[[], uuid.UUID]):
        """A new, Empty group (``new ClassicGroup(logContext, groupId, EMPTY, time)``)."""
        self.group_id = group_id
        self._now = now
        self._events = events
        self._new_uuid = new_uuid
        self.state = GroupState.EMPTY
        self.previous_state = GroupState.DEAD
        self.current_state_timestamp: int | None = now()
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: JavaHashMap[str, ClassicGroupMember] = JavaHashMap()
        self.static_members: JavaHashMap[str, str] = JavaHashMap()
        self.pending_join_members: JavaHashSet[str] = JavaHashSet()
        self.num_members_awaiting_join_response = 0
        self.supported_protocols: JavaHashMap[str, int] = JavaHashMap()
        self.pending_sync_members: JavaHashSet[str] = JavaHashSet()
        self.subscribed_topics: set[str] | None = None
        self.new_member_added = False
        #: Why the current rebalance started (Kafka's log text and a short code for the timeline).
        self.rebalance_reason: str | None = None
        self.rebalance_cause: str | None = None

    # -- simple accessors -------------------------------------------------------------------
    def is_in_state(self, state: GroupState) -> bool:
        return self.state is state

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def member(self, member_id: str) -> ClassicGroupMember:
        return self.members[member_id]

    @property
    def num_members(self) -> int:
        return len(self.members)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id is not None and self.leader_id == member_id

    def current_state_timestamp_or_default(self) -> int:
        return -1 if self.current_state_timestamp is None else self.current_state_timestamp

    def uses_consumer_group_protocol(self) -> bool:
        return self.protocol_type == PROTOCOL_TYPE

    def all_members(self) -> list[ClassicGroupMember]:
        return [self.members[m] for m in self.members]

    def is_empty(self) -> bool:
        return self.is_in_state(GroupState.EMPTY)

    def rebalance_timeout_ms(self) -> int:
        """The largest rebalance timeout among members (0 without members)."""
        return max((m.rebalance_timeout_ms for m in self.all_members()), default=0)

    def generate_member_id(self, client_id: str, group_instance_id: str | None) -> str:
        """Static members get ``instanceId-UUID``, dynamic ones ``clientId-UUID``."""
        prefix = group_instance_id if group_instance_id is not None else client_id
        return f"{prefix}-{self._new_uuid()}"

    # -- membership -------------------------------------------------------------------------
    def add(self, member: ClassicGroupMember, join_callback: Callable | None = None) -> None:
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise IllegalStateTransition(
                    f"Static member {member.group_instance_id} is already a member of {self.group_id}"
                )
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type:
            raise IllegalStateTransition("The group and member's protocol type must be the same.")
        if not self.supports_protocols(member.protocol_type, protocol_names(member.supported_protocols)):
            raise IllegalStateTransition("None of the member's protocols can be supported.")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._increment_supported_protocols(member)
        member.awaiting_join = join_callback
        if member.is_awaiting_join:
            self.num_members_awaiting_join_response += 1
        self.pending_join_members.discard(member.member_id)
        self._events.member_added(self, member, self._now())

    def remove(self, member_id: str, reason: str = "removed") -> None:
        removed = self.members.pop(member_id, None)
        if removed is not None:
            self._decrement_supported_protocols(removed)
            if removed.is_awaiting_join:
                self.num_members_awaiting_join_response -= 1
            if removed.group_instance_id is not None:
                self.static_members.pop(removed.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)
        if removed is not None:
            self._events.member_removed(self, removed, self._now(), reason)

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick the first member (HashMap order) that did."""
        if self.leader_id is None:
            return False
        leader = self.members[self.leader_id]
        if leader.is_awaiting_join:
            return True
        for member in self.all_members():
            if member.is_awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    def replace_static_member(
        self, group_instance_id: str, old_member_id: str, new_member_id: str
    ) -> ClassicGroupMember:
        """Swap a static member's id, fencing whatever the old id was waiting for."""
        removed = self.members.pop(old_member_id, None)
        if removed is None:
            raise ValueError(f"Cannot replace non-existing member id {old_member_id}")
        self.complete_join_future(
            removed, JoinGroupResponse(Errors.FENCED_INSTANCE_ID, member_id=old_member_id, leader="")
        )
        self.complete_sync_future(removed, SyncGroupResponse(Errors.FENCED_INSTANCE_ID, assignment=b""))
        new_member = ClassicGroupMember(
            member_id=new_member_id,
            group_instance_id=removed.group_instance_id,
            client_id=removed.client_id,
            client_host=removed.client_host,
            rebalance_timeout_ms=removed.rebalance_timeout_ms,
            session_timeout_ms=removed.session_timeout_ms,
            protocol_type=removed.protocol_type,
            supported_protocols=removed.supported_protocols,
            assignment=removed.assignment,
        )
        self.members[new_member_id] = new_member
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        self.static_members[group_instance_id] = new_member_id
        return new_member

    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_join_members

    def add_pending_member(self, member_id: str) -> bool:
        if self.has_member(member_id):
            raise IllegalStateTransition(f"Attempt to add pending member {member_id} which is already a stable member")
        added = member_id not in self.pending_join_members
        self.pending_join_members.add(member_id)
        return added

    def add_pending_sync_member(self, member_id: str) -> None:
        if not self.has_member(member_id):
            raise IllegalStateTransition(f"Attempt to add pending sync member {member_id} which is not a member")
        self.pending_sync_members.add(member_id)

    def remove_pending_sync_member(self, member_id: str) -> None:
        if not self.has_member(member_id):
            raise IllegalStateTransition(f"Attempt to remove pending sync member {member_id} which is not a member")
        self.pending_sync_members.discard(member_id)

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    def clear_pending_sync_members(self) -> None:
        for member_id in list(self.pending_sync_members):
            self.pending_sync_members.discard(member_id)

    def has_static_member(self, group_instance_id: str) -> bool:
        return group_instance_id in self.static_members

    def static_member_id(self, group_instance_id: str) -> str | None:
        return self.static_members.get(group_instance_id)

    def not_yet_rejoined_members(self) -> JavaHashMap[str, ClassicGroupMember]:
        result: JavaHashMap[str, ClassicGroupMember] = JavaHashMap()
        for member in self.all_members():
            if not member.is_awaiting_join:
                result[member.member_id] = member
        return result

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_members_awaiting_join_response and not self.pending_join_members

    # -- validation -------------------------------------------------------------------------
    def validate_member(self, member_id: str, group_instance_id: str | None, operation: str) -> None:
        """Raises UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID (``ClassicGroup.validateMember``)."""
        if group_instance_id is not None:
            existing = self.static_member_id(group_instance_id)
            if existing is None:
                raise KafkaError(Errors.UNKNOWN_MEMBER_ID, operation)
            if existing != member_id:
                raise KafkaError(Errors.FENCED_INSTANCE_ID, operation)
        if not self.has_member(member_id):
            raise KafkaError(Errors.UNKNOWN_MEMBER_ID, operation)

    def validate_offset_commit(self, member_id: str, group_instance_id: str | None, generation_id: int) -> None:
        """``ClassicGroup.validateOffsetCommit`` for a non-transactional OffsetCommit."""
        if self.is_in_state(GroupState.DEAD):
            raise KafkaError(Errors.COORDINATOR_NOT_AVAILABLE)
        if generation_id < 0 and self.is_in_state(GroupState.EMPTY):
            return  # admin client or a consumer without group management (simple consumer)
        if generation_id >= 0 or member_id or group_instance_id is not None:
            self.validate_member(member_id, group_instance_id, "offset-commit")
            if generation_id != self.generation_id:
                raise KafkaError(Errors.ILLEGAL_GENERATION)
        elif not self.is_in_state(GroupState.EMPTY):
            raise KafkaError(Errors.UNKNOWN_MEMBER_ID)
        if self.is_in_state(GroupState.COMPLETING_REBALANCE):
            raise KafkaError(Errors.REBALANCE_IN_PROGRESS)

    def validate_offset_delete(self) -> None:
        if self.is_in_state(GroupState.DEAD):
            raise KafkaError(Errors.GROUP_ID_NOT_FOUND)
        if self.state in (GroupState.STABLE, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE):
            if not self.uses_consumer_group_protocol():
                raise KafkaError(Errors.NON_EMPTY_GROUP)

    def validate_delete_group(self) -> None:
        if self.is_in_state(GroupState.DEAD):
            raise KafkaError(Errors.GROUP_ID_NOT_FOUND)
        if self.state in (GroupState.STABLE, GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE):
            raise KafkaError(Errors.NON_EMPTY_GROUP)

    def offset_expiration_base(self) -> Callable[[int], int] | None:
        """``offsetExpirationCondition``: maps an offset's commit timestamp to the start of its
        retention period, or ``None`` when no offset of this group may expire now."""
        if self.protocol_type is not None:
            if self.is_in_state(GroupState.EMPTY):
                state_ts = self.current_state_timestamp
                return lambda commit_ts: state_ts if state_ts is not None else commit_ts
            if (
                self.uses_consumer_group_protocol()
                and self.subscribed_topics is not None
                and self.is_in_state(GroupState.STABLE)
            ):
                return lambda commit_ts: commit_ts
            return None
        return lambda commit_ts: commit_ts

    def can_rebalance(self) -> bool:
        return self.state in GroupState.PREPARING_REBALANCE.valid_previous_states

    # -- state machine ----------------------------------------------------------------------
    def transition_to(self, state: GroupState, reason: str | None = None) -> None:
        if self.state not in state.valid_previous_states:
            raise IllegalStateTransition(
                f"Group {self.group_id} should be in one of {sorted(s.value for s in state.valid_previous_states)} "
                f"states before moving to {state.value} state. Instead it is in {self.state.value} state."
            )
        self.previous_state = self.state
        self.state = state
        self.current_state_timestamp = self._now()
        self._events.state_changed(self, self.previous_state, self.current_state_timestamp, reason)

    def select_protocol(self) -> str:
        """Each member votes for its most preferred protocol that every member supports; the most
        votes wins, ties going to the first protocol in ``HashMap`` order (``Stream.max`` keeps
        the first maximum)."""
        if not self.members:
            raise IllegalStateTransition("Cannot select protocol for empty group")
        candidates = self._candidate_protocols()
        votes: JavaHashMap[str, int] = JavaHashMap()
        for member in self.all_members():
            name = member.vote(candidates)
            votes[name] = votes.get(name, 0) + 1
        best: str | None = None
        for name in votes:
            if best is None or votes[name] > votes[best]:
                best = name
        assert best is not None
        return best

    def _increment_supported_protocols(self, member: ClassicGroupMember) -> None:
        for protocol in member.supported_protocols:
            self.supported_protocols[protocol.name] = self.supported_protocols.get(protocol.name, 0) + 1

    def _decrement_supported_protocols(self, member: ClassicGroupMember) -> None:
        for protocol in member.supported_protocols:
            self.supported_protocols[protocol.name] = self.supported_protocols.get(protocol.name, 0) - 1

    def _candidate_protocols(self) -> set[str]:
        return {name for name in self.supported_protocols if self.supported_protocols[name] == len(self.members)}

    def supports_protocols(self, member_protocol_type: str, member_protocols: set[str]) -> bool:
        if self.is_in_state(GroupState.EMPTY):
            return bool(member_protocol_type) and bool(member_protocols)
        return (
            self.protocol_type is not None
            and self.protocol_type == member_protocol_type
            and any(self.supported_protocols.get(name, 0) == len(self.members) for name in member_protocols)
        )

    def compute_subscribed_topics(self) -> set[str] | None:
        if self.protocol_type != PROTOCOL_TYPE:
            return None
        if not self.members:
            return set()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        for member in self.all_members():
            metadata = member.metadata(self.protocol_name)
            if not isinstance(metadata, Subscription):
                return None  # Kafka fails to parse and stays unaware of the topics
            topics.update(metadata.topics)
        return topics

    def is_subscribed_to_topic(self, topic: str) -> bool:
        if self.subscribed_topics is not None:
            return topic in self.subscribed_topics
        return self.uses_consumer_group_protocol()

    def update_member(
        self,
        member: ClassicGroupMember,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        join_callback: Callable | None,
    ) -> None:
        self._decrement_supported_protocols(member)
        member.supported_protocols = protocols
        self._increment_supported_protocols(member)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if join_callback is not None and not member.is_awaiting_join:
            self.num_members_awaiting_join_response += 1
        elif join_callback is None and member.is_awaiting_join:
            self.num_members_awaiting_join_response -= 1
        member.awaiting_join = join_callback

    def complete_join_future(self, member: ClassicGroupMember, response: JoinGroupResponse) -> bool:
        if member.is_awaiting_join:
            callback = member.awaiting_join
            member.awaiting_join = None
            self.num_members_awaiting_join_response -= 1
            callback(response)
            return True
        return False

    def complete_sync_future(self, member: ClassicGroupMember, response: SyncGroupResponse) -> bool:
        if member.is_awaiting_sync:
            callback = member.awaiting_sync
            member.awaiting_sync = None
            callback(response)
            return True
        return False

    def init_next_generation(self) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(GroupState.EMPTY)
        self.clear_pending_sync_members()
        self._events.generation_started(self, self._now())

    def current_classic_group_members(self) -> tuple[JoinGroupMember, ...]:
        if self.state in (GroupState.DEAD, GroupState.PREPARING_REBALANCE):
            raise IllegalStateTransition(
                f"Cannot obtain member metadata for group {self.group_id} in state {self.state.value}"
            )
        return tuple(
            JoinGroupMember(m.member_id, m.group_instance_id, m.metadata(self.protocol_name or ""))
            for m in self.all_members()
        )

    def group_assignment(self) -> dict[str, Assignment | bytes | None]:
        return {m.member_id: m.assignment for m in self.all_members()}
