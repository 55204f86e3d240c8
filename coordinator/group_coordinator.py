"""The broker side: Kafka's classic group coordinator on a simulated clock.

A port of the classic-group paths of ``GroupMetadataManager.java`` (join, sync, heartbeat, leave,
session and rebalance timeouts, static membership), ``OffsetMetadataManager.java`` (commit, delete,
expiry) and the request checks of ``GroupCoordinatorService.java`` / ``GroupCoordinatorShard.java``
(Kafka 4.2). Method names follow the Java ones so each can be read next to its source.

What differs from a broker, by design:

* appends succeed at once: the "append future" callbacks (e.g. moving to Stable after the leader's
  SyncGroup) run right after the records are appended, at the same simulated millisecond;
* there is one broker, so coordinator moves (NOT_COORDINATOR, group unload to Dead) do not happen;
* each ``__consumer_offsets`` partition is a shard with its own groups and offsets, like Kafka's
  ``GroupCoordinatorShard``; the periodic offset-expiry job runs over all shards in partition order.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from coordinator.clock import SimulatedClock
from coordinator.consumer_protocol import Assignment
from coordinator.errors import Errors, KafkaError
from coordinator.group import ClassicGroup, GroupEvents, GroupState
from coordinator.java_collections import JavaHashMap, JavaHashSet, TimelineHashMap
from coordinator.member import EMPTY_ASSIGNMENT, ClassicGroupMember, protocol_names
from coordinator.offsets import OffsetAndMetadata, OffsetStore
from coordinator.records import (
    CoordinatorRecord,
    KafkaVersion,
    empty_group_metadata_record,
    group_metadata_record,
    group_tombstone,
    offset_commit_record,
    offset_tombstone,
)
from coordinator.requests import (
    UNKNOWN_MEMBER_ID,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from decoders import coordinator_partition

#: ``GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS`` (an internal constant).
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000


@dataclass(frozen=True)
class CoordinatorConfig:
    """Broker settings the classic coordinator reads, with Kafka 4.2 defaults
    (``GroupCoordinatorConfig.java``). Scenario files use the broker property names."""

    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1800000
    group_initial_rebalance_delay_ms: int = 3000
    group_max_size: int = 2**31 - 1
    offsets_retention_minutes: int = 7 * 24 * 60
    offsets_retention_check_interval_ms: int = 600000
    offsets_topic_num_partitions: int = 50
    offset_metadata_max_bytes: int = 4096
    #: KIP-848 groups (:mod:`coordinator.consumer_group`).
    group_consumer_session_timeout_ms: int = 45000
    group_consumer_heartbeat_interval_ms: int = 5000

    PROPERTY_NAMES = {
        "group.min.session.timeout.ms": "group_min_session_timeout_ms",
        "group.max.session.timeout.ms": "group_max_session_timeout_ms",
        "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
        "group.max.size": "group_max_size",
        "offsets.retention.minutes": "offsets_retention_minutes",
        "offsets.retention.check.interval.ms": "offsets_retention_check_interval_ms",
        "offsets.topic.num.partitions": "offsets_topic_num_partitions",
        "offset.metadata.max.bytes": "offset_metadata_max_bytes",
        "group.consumer.session.timeout.ms": "group_consumer_session_timeout_ms",
        "group.consumer.heartbeat.interval.ms": "group_consumer_heartbeat_interval_ms",
    }

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60 * 1000


@dataclass
class _Result:
    """``CoordinatorResult``: records to append, then what to do once they are stored."""

    records: list[CoordinatorRecord] = field(default_factory=list)
    on_append: Callable[[], None] | None = None


@dataclass
class _Shard:
    partition: int
    groups: TimelineHashMap[str, ClassicGroup] = field(default_factory=TimelineHashMap)
    offsets: OffsetStore = field(default_factory=OffsetStore)


class OffsetEvents:
    """Hooks for offset changes (the timeline implements them)."""

    def offset_committed(self, group_id: str, topic: str, partition: int, offset: OffsetAndMetadata) -> None: ...

    def offset_removed(self, group_id: str, topic: str, partition: int, at: int, reason: str) -> None: ...


class GroupCoordinator:
    """All ``__consumer_offsets`` shards of one simulated broker."""

    def __init__(
        self,
        clock: SimulatedClock,
        config: CoordinatorConfig | None = None,
        kafka_version: KafkaVersion | str = "4.2",
        events: GroupEvents | None = None,
        offset_events: OffsetEvents | None = None,
        seed: int = 0,
        known_topics: Callable[[], dict[str, int]] | None = None,
    ):
        self.clock = clock
        self.config = config or CoordinatorConfig()
        self.kafka_version = (
            kafka_version if isinstance(kafka_version, KafkaVersion) else KafkaVersion.parse(kafka_version)
        )
        self.events = events or GroupEvents()
        self.offset_events = offset_events or OffsetEvents()
        self._rng = random.Random(seed)
        self._known_topics = known_topics
        self._shards: dict[int, _Shard] = {}
        #: Every record appended, in append order (records carry their partition and timestamp).
        self.log: list[CoordinatorRecord] = []
        self._schedule_group_metadata_expiration()

    # -- infrastructure ---------------------------------------------------------------------
    def _new_uuid(self) -> uuid.UUID:
        return uuid.UUID(int=self._rng.getrandbits(128), version=4)

    def partition_for(self, group_id: str) -> int:
        return coordinator_partition(group_id, self.config.offsets_topic_num_partitions)

    def _shard(self, group_id: str) -> _Shard:
        partition = self.partition_for(group_id)
        if partition not in self._shards:
            self._shards[partition] = _Shard(partition)
        return self._shards[partition]

    def group(self, group_id: str) -> ClassicGroup | None:
        return self._shard(group_id).groups.get(group_id)

    def groups(self) -> list[ClassicGroup]:
        return [s.groups[g] for p in sorted(self._shards) for s in [self._shards[p]] for g in s.groups]

    def offsets(self, group_id: str) -> list[tuple[str, int, OffsetAndMetadata]]:
        return list(self._shard(group_id).offsets.group_offsets(group_id))

    def _apply(self, shard: _Shard, result: _Result | None) -> None:
        """Append a result's records to the shard's partition, replay them, then complete it."""
        if result is None:
            return
        now = self.clock.now
        for record in result.records:
            stored = CoordinatorRecord(
                record.record_type, record.key, record.value, record.value_version, shard.partition, now, record.note
            )
            self.log.append(stored)
            self._replay(shard, stored)
        if result.on_append is not None:
            result.on_append()

    def _replay(self, shard: _Shard, record: CoordinatorRecord) -> None:
        """The replay effects of offset records and group tombstones (``GroupCoordinatorShard.replay``,
        ``OffsetMetadataManager.replay``); GroupMetadata records are written with
        ``replayRecords = false`` and change nothing here."""
        key, value = record.key, record.value
        if record.record_type == "offset_commit":
            if value is None:
                if shard.offsets.remove(key["group"], key["topic"], key["partition"]) is not None:
                    self.offset_events.offset_removed(
                        key["group"], key["topic"], key["partition"], record.timestamp, record.note or "tombstone"
                    )
                return
            # A commit without a group (simple consumer) creates an empty classic group.
            self._get_or_maybe_create_classic_group(shard, key["group"], True)
            offset = OffsetAndMetadata(
                committed_offset=value["offset"],
                # OffsetAndMetadata.fromRecord: value v1 has no leader epoch field.
                leader_epoch=None if record.value_version == 1 or value["leader_epoch"] < 0 else value["leader_epoch"],
                metadata=value["metadata"],
                commit_timestamp_ms=value["commit_timestamp"],
                expire_timestamp_ms=value["expire_timestamp"] if record.value_version == 1 else None,
                topic_id=value.get("topic_id"),
            )
            shard.offsets.put(key["group"], key["topic"], key["partition"], offset)
            self.offset_events.offset_committed(key["group"], key["topic"], key["partition"], offset)
        elif value is None:
            group_id = key["group"]
            if group_id in shard.groups:
                del shard.groups[group_id]
                self.events.group_removed(group_id, record.timestamp, record.note or "tombstone")

    def _schedule(self, key: str, delay_ms: int, shard: _Shard, operation: Callable[[], _Result | None]) -> None:
        self.clock.after(delay_ms, lambda: self._apply(shard, operation()), key=key)

    @staticmethod
    def _heartbeat_key(group_id: str, member_id: str) -> str:
        return f"heartbeat-{group_id}-{member_id}"

    @staticmethod
    def _join_key(group_id: str) -> str:
        return f"join-{group_id}"

    @staticmethod
    def _sync_key(group_id: str) -> str:
        return f"sync-{group_id}"

    def _get_or_maybe_create_classic_group(self, shard: _Shard, group_id: str, create: bool) -> ClassicGroup | None:
        group = shard.groups.get(group_id)
        if group is None and create:
            group = ClassicGroup(group_id, lambda: self.clock.now, self.events, self._new_uuid)
            shard.groups[group_id] = group
            self.events.group_created(group, self.clock.now)
        return group

    # -- JoinGroup --------------------------------------------------------------------------
    def join_group(self, request: JoinGroupRequest, respond: Callable[[JoinGroupResponse], None]) -> None:
        """``GroupCoordinatorService.joinGroup`` then ``classicGroupJoinToClassicGroup``."""
        if not request.group_id:
            respond(JoinGroupResponse(Errors.INVALID_GROUP_ID, member_id=request.member_id))
            return
        if not (
            self.config.group_min_session_timeout_ms
            <= request.session_timeout_ms
            <= self.config.group_max_session_timeout_ms
        ):
            respond(JoinGroupResponse(Errors.INVALID_SESSION_TIMEOUT, member_id=request.member_id))
            return
        shard = self._shard(request.group_id)
        is_unknown_member = request.member_id == UNKNOWN_MEMBER_ID
        is_new_group = request.group_id not in shard.groups
        group = self._get_or_maybe_create_classic_group(shard, request.group_id, is_unknown_member)
        if group is None:
            respond(JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID, member_id=request.member_id))
            return

        result: _Result | None
        if not self._accept_joining_member(group, request.member_id):
            group.remove(request.member_id, "group max size reached")
            respond(JoinGroupResponse(Errors.GROUP_MAX_SIZE_REACHED, member_id=UNKNOWN_MEMBER_ID))
            result = None
        elif is_unknown_member:
            result = self._join_new_member(request, group, respond)
        else:
            result = self._join_existing_member(request, group, respond)

        if is_new_group and result is None and self.kafka_version.writes_empty_group_on_create:
            # Commit the newly created group to the log (GroupMetadataManager: newEmptyGroupMetadataRecord).
            result = _Result([empty_group_metadata_record(group, self.kafka_version)])
        self._apply(shard, result)

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        if group.state in (GroupState.EMPTY, GroupState.DEAD):
            return True
        if group.is_in_state(GroupState.PREPARING_REBALANCE):
            return (group.has_member(member_id) and group.member(member_id).is_awaiting_join) or (
                group.num_members_awaiting_join_response < self.config.group_max_size
            )
        return group.has_member(member_id) or group.num_members < self.config.group_max_size

    def _join_new_member(self, request: JoinGroupRequest, group: ClassicGroup, respond) -> _Result | None:
        if group.is_in_state(GroupState.DEAD):
            respond(JoinGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE, member_id=UNKNOWN_MEMBER_ID))
            return None
        if not group.supports_protocols(request.protocol_type, protocol_names(request.protocols)):
            respond(JoinGroupResponse(Errors.INCONSISTENT_GROUP_PROTOCOL, member_id=UNKNOWN_MEMBER_ID))
            return None
        new_member_id = group.generate_member_id(request.client_id, request.group_instance_id)
        if request.group_instance_id is not None:
            existing = group.static_member_id(request.group_instance_id)
            if existing is not None:
                return self._update_static_member_then_rebalance_or_complete_join(
                    request, group, existing, new_member_id, respond
                )
            return self._add_member_then_rebalance_or_complete_join(request, group, new_member_id, respond)
        if request.version >= 4:
            # KIP-394: hand out the id and wait for a second JoinGroup carrying it.
            group.add_pending_member(new_member_id)
            shard = self._shard(group.group_id)
            self._schedule(
                self._heartbeat_key(group.group_id, new_member_id),
                request.session_timeout_ms,
                shard,
                lambda: self._expire_member_heartbeat(group.group_id, new_member_id),
            )
            respond(JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id=new_member_id))
            return None
        return self._add_member_then_rebalance_or_complete_join(request, group, new_member_id, respond)

    def _join_existing_member(self, request: JoinGroupRequest, group: ClassicGroup, respond) -> _Result | None:
        member_id = request.member_id
        if group.is_in_state(GroupState.DEAD):
            respond(JoinGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE, member_id=member_id))
            return None
        if not group.supports_protocols(request.protocol_type, protocol_names(request.protocols)):
            respond(JoinGroupResponse(Errors.INCONSISTENT_GROUP_PROTOCOL, member_id=member_id))
            return None
        if group.is_pending_member(member_id):
            if request.group_instance_id is not None:
                raise AssertionError(f"unexpected JoinGroup with groupInstanceId for pending member {member_id}")
            return self._add_member_then_rebalance_or_complete_join(request, group, member_id, respond)
        try:
            group.validate_member(member_id, request.group_instance_id, "join-group")
        except KafkaError as error:
            respond(JoinGroupResponse(error.error, member_id=member_id))
            return None

        member = group.member(member_id)
        if group.is_in_state(GroupState.PREPARING_REBALANCE):
            return self._update_member_then_rebalance_or_complete_join(
                request,
                group,
                member,
                f"Member {member_id} is joining group during PreparingRebalance",
                "member_rejoined",
                respond,
            )
        if group.is_in_state(GroupState.COMPLETING_REBALANCE):
            if member.matches(request.protocols):
                respond(self._current_generation_response(group, member_id, include_members=group.is_leader(member_id)))
                return None
            return self._update_member_then_rebalance_or_complete_join(
                request,
                group,
                member,
                f"Updating metadata for member {member_id} during CompletingRebalance",
                "member_metadata_changed",
                respond,
            )
        if group.is_in_state(GroupState.STABLE):
            if group.is_leader(member_id):
                # The leader rejoins to signal changes the metadata does not show (e.g. new partitions).
                return self._update_member_then_rebalance_or_complete_join(
                    request,
                    group,
                    member,
                    f"Leader {member_id} re-joining group during Stable",
                    "leader_rejoined",
                    respond,
                )
            if not member.matches(request.protocols):
                return self._update_member_then_rebalance_or_complete_join(
                    request,
                    group,
                    member,
                    f"Updating metadata for member {member_id} during Stable",
                    "member_metadata_changed",
                    respond,
                )
            respond(self._current_generation_response(group, member_id, include_members=False))
            return None
        respond(JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID, member_id=member_id))
        return None

    @staticmethod
    def _current_generation_response(group: ClassicGroup, member_id: str, include_members: bool) -> JoinGroupResponse:
        return JoinGroupResponse(
            Errors.NONE,
            member_id=member_id,
            generation_id=group.generation_id,
            protocol_type=group.protocol_type,
            protocol_name=group.protocol_name,
            leader=group.leader_id,
            members=group.current_classic_group_members() if include_members else (),
        )

    def _update_member_then_rebalance_or_complete_join(
        self, request, group, member, reason, cause, respond
    ) -> _Result | None:
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, respond
        )
        return self._maybe_prepare_rebalance_or_complete_join(
            group, f"{reason}; client reason: {request.reason}", cause
        )

    def _add_member_then_rebalance_or_complete_join(
        self, request: JoinGroupRequest, group: ClassicGroup, member_id: str, respond
    ) -> _Result | None:
        member = ClassicGroupMember(
            member_id=member_id,
            group_instance_id=request.group_instance_id,
            client_id=request.client_id,
            client_host=request.client_host,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            session_timeout_ms=request.session_timeout_ms,
            protocol_type=request.protocol_type,
            supported_protocols=request.protocols,
            is_new=True,
        )
        if group.is_in_state(GroupState.PREPARING_REBALANCE) and group.previous_state is GroupState.EMPTY:
            group.new_member_added = True  # extends the initial rebalance delay
        group.add(member, respond)
        # New members cannot heartbeat while their JoinGroup is parked; time them out instead.
        self._reschedule_member_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        return self._maybe_prepare_rebalance_or_complete_join(
            group,
            f"Adding new member {member_id} with group instance id {request.group_instance_id}; "
            f"client reason: {request.reason}",
            "member_joined",
        )

    def _update_static_member_then_rebalance_or_complete_join(
        self, request: JoinGroupRequest, group: ClassicGroup, old_member_id: str, new_member_id: str, respond
    ) -> _Result | None:
        new_member = group.replace_static_member(request.group_instance_id, old_member_id, new_member_id)
        self.events.static_member_replaced(group, old_member_id, new_member_id, self.clock.now)
        self._reschedule_member_heartbeat(group, new_member, new_member.session_timeout_ms)
        group.update_member(
            new_member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, respond
        )

        if group.is_in_state(GroupState.STABLE):
            if (group.protocol_name or "") == group.select_protocol():
                # Same protocol: persist the new member id and answer without a rebalance.
                assignment = group.group_assignment()

                def on_append() -> None:
                    # A static leader that rejoins is told to skip the assignment (and given the
                    # members) only if its JoinGroup version supports it (v9+,
                    # JoinGroupRequest.supportsSkippingAssignment); older leaders get a plain answer.
                    skip = request.version >= 9 and group.is_leader(new_member_id)
                    group.complete_join_future(
                        new_member,
                        JoinGroupResponse(
                            Errors.NONE,
                            member_id=new_member_id,
                            generation_id=group.generation_id,
                            protocol_type=group.protocol_type,
                            protocol_name=group.protocol_name,
                            leader=group.leader_id,
                            skip_assignment=skip,
                            members=group.current_classic_group_members() if skip else (),
                        ),
                    )
                    self.events.assignment_stored(group, self.clock.now)

                return _Result([group_metadata_record(group, assignment, self.kafka_version)], on_append)
            return self._maybe_prepare_rebalance_or_complete_join(
                group,
                f"Group's selectedProtocol will change because static member {new_member_id} joined "
                "with change of protocol",
                "static_member_protocol_changed",
            )
        if group.is_in_state(GroupState.COMPLETING_REBALANCE):
            return self._prepare_rebalance(
                group,
                f"Updating metadata for static member {new_member_id} with instance id {request.group_instance_id}",
                "static_member_rejoined",
            )
        if group.state in (GroupState.EMPTY, GroupState.DEAD):
            raise AssertionError(
                f"Group {group.group_id} was not supposed to be in state {group.state.value} "
                "when the static member rejoins"
            )
        return self._maybe_complete_join_phase(group)

    # -- rebalance machinery ----------------------------------------------------------------
    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup, reason: str, cause: str) -> _Result | None:
        if group.can_rebalance():
            return self._prepare_rebalance(group, reason, cause)
        return self._maybe_complete_join_phase(group)

    def _prepare_rebalance(self, group: ClassicGroup, reason: str, cause: str) -> _Result | None:
        """``prepareRebalance``; ``cause`` is a short code for the timeline's ``end_reason``."""
        if group.is_in_state(GroupState.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_with_error(group, Errors.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        shard = self._shard(group.group_id)
        is_initial_rebalance = group.is_in_state(GroupState.EMPTY)
        if is_initial_rebalance:
            delay = self.config.group_initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule(
                self._join_key(group.group_id),
                delay,
                shard,
                lambda: self._try_complete_initial_rebalance_else_schedule(group.group_id, delay, remaining),
            )
        group.rebalance_reason = reason
        group.rebalance_cause = cause
        group.transition_to(GroupState.PREPARING_REBALANCE, reason)
        return None if is_initial_rebalance else self._maybe_complete_join_else_schedule(group)

    def _maybe_complete_join_else_schedule(self, group: ClassicGroup) -> _Result | None:
        if group.has_all_members_joined():
            return self._complete_classic_group_join(group)
        self._schedule(
            self._join_key(group.group_id),
            group.rebalance_timeout_ms(),
            self._shard(group.group_id),
            lambda: self._complete_classic_group_join_by_id(group.group_id),
        )
        return None

    def _try_complete_initial_rebalance_else_schedule(
        self, group_id: str, delay_ms: int, remaining_ms: int
    ) -> _Result | None:
        shard = self._shard(group_id)
        group = shard.groups.get(group_id)
        if group is None:
            return None
        if group.new_member_added and remaining_ms != 0:
            group.new_member_added = False
            new_delay = min(self.config.group_initial_rebalance_delay_ms, remaining_ms)
            new_remaining = max(remaining_ms - delay_ms, 0)
            self._schedule(
                self._join_key(group_id),
                new_delay,
                shard,
                lambda: self._try_complete_initial_rebalance_else_schedule(group_id, new_delay, new_remaining),
            )
            return None
        return self._complete_classic_group_join(group)

    def _maybe_complete_join_phase(self, group: ClassicGroup) -> _Result | None:
        if not group.is_in_state(GroupState.PREPARING_REBALANCE):
            return None
        if group.previous_state is GroupState.EMPTY:
            return None  # initial rebalance: the delayed join completes it
        if not group.has_all_members_joined():
            return None
        return self._complete_classic_group_join(group)

    def _complete_classic_group_join_by_id(self, group_id: str) -> _Result | None:
        group = self._shard(group_id).groups.get(group_id)
        return None if group is None else self._complete_classic_group_join(group)

    def _complete_classic_group_join(self, group: ClassicGroup) -> _Result | None:
        """End the join phase: drop dynamic members that did not rejoin, then either start the next
        generation (answering every parked JoinGroup) or, without members, become Empty."""
        self.clock.cancel(self._join_key(group.group_id))
        not_rejoined = group.not_yet_rejoined_members()
        dynamic_not_rejoined: JavaHashMap[str, ClassicGroupMember] = JavaHashMap()
        for member_id in not_rejoined:
            if not not_rejoined[member_id].is_static:
                dynamic_not_rejoined[member_id] = not_rejoined[member_id]
        for member_id in dynamic_not_rejoined:
            group.remove(member_id, "did not rejoin before the rebalance timeout")
            self.clock.cancel(self._heartbeat_key(group.group_id, member_id))

        if group.is_in_state(GroupState.DEAD):
            return None
        if not group.maybe_elect_new_joined_leader() and group.all_members():
            # Nobody rejoined: wait another rebalance timeout for session expiry to clean up.
            self._schedule(
                self._join_key(group.group_id),
                group.rebalance_timeout_ms(),
                self._shard(group.group_id),
                lambda: self._complete_classic_group_join_by_id(group.group_id),
            )
            return None

        group.init_next_generation()
        if group.is_in_state(GroupState.EMPTY):
            return _Result([group_metadata_record(group, {}, self.kafka_version)])

        for member in group.all_members():
            members = group.current_classic_group_members() if group.is_leader(member.member_id) else ()
            group.complete_join_future(
                member,
                JoinGroupResponse(
                    Errors.NONE,
                    member_id=member.member_id,
                    generation_id=group.generation_id,
                    protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name,
                    leader=group.leader_id,
                    members=members,
                ),
            )
            self._reschedule_member_heartbeat(group, member, member.session_timeout_ms)
            member.is_new = False
            group.add_pending_sync_member(member.member_id)
        self._schedule_pending_sync(group)
        return None

    def _schedule_pending_sync(self, group: ClassicGroup) -> None:
        generation = group.generation_id
        self._schedule(
            self._sync_key(group.group_id),
            group.rebalance_timeout_ms(),
            self._shard(group.group_id),
            lambda: self._expire_pending_sync(group.group_id, generation),
        )

    def _expire_pending_sync(self, group_id: str, generation_id: int) -> _Result | None:
        group = self._shard(group_id).groups.get(group_id)
        if group is None or generation_id != group.generation_id:
            return None
        if (
            group.state in (GroupState.COMPLETING_REBALANCE, GroupState.STABLE)
            and not group.has_received_sync_from_all_members()
        ):
            pending = list(JavaHashSet(group.pending_sync_members, copy=True))
            for member_id in pending:
                group.remove(member_id, "did not send SyncGroup before the rebalance timeout")
                self.clock.cancel(self._heartbeat_key(group_id, member_id))
            return self._prepare_rebalance(
                group, f"Removing {pending} on pending sync request expiration", "sync_timeout"
            )
        return None

    def _remove_sync_expiration(self, group: ClassicGroup) -> None:
        group.clear_pending_sync_members()
        self.clock.cancel(self._sync_key(group.group_id))

    def _reschedule_member_heartbeat(self, group: ClassicGroup, member: ClassicGroupMember, timeout_ms: int) -> None:
        group_id, member_id = group.group_id, member.member_id
        self._schedule(
            self._heartbeat_key(group_id, member_id),
            timeout_ms,
            self._shard(group_id),
            lambda: self._expire_member_heartbeat(group_id, member_id),
        )

    def _expire_member_heartbeat(self, group_id: str, member_id: str) -> _Result | None:
        group = self._shard(group_id).groups.get(group_id)
        if group is None or group.is_in_state(GroupState.DEAD):
            return None
        if group.is_pending_member(member_id):
            group.remove(member_id, "pending member session expired")
            if group.is_in_state(GroupState.PREPARING_REBALANCE) and group.has_all_members_joined():
                return self._complete_classic_group_join(group)
            return None
        if not group.has_member(member_id):
            return None
        member = group.member(member_id)
        if member.has_satisfied_heartbeat():
            return None
        return self._remove_member_and_update_group(
            group, member, f"removing member {member_id} on heartbeat expiration."
        )

    def _remove_member_and_update_group(
        self, group: ClassicGroup, member: ClassicGroupMember, reason: str
    ) -> _Result | None:
        group.complete_join_future(member, JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID, member_id=UNKNOWN_MEMBER_ID))
        group.remove(member.member_id, reason)
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            return self._maybe_prepare_rebalance_or_complete_join(group, reason, "session_timeout")
        if group.is_in_state(GroupState.PREPARING_REBALANCE) and group.has_all_members_joined():
            return self._complete_classic_group_join(group)
        return None

    def _reset_and_propagate_assignment_with_error(self, group: ClassicGroup, error: Errors) -> None:
        if not group.is_in_state(GroupState.COMPLETING_REBALANCE):
            raise AssertionError(
                f"Group {group.group_id} must be in CompletingRebalance state but is in {group.state.value}."
            )
        for member in group.all_members():
            member.assignment = EMPTY_ASSIGNMENT
        self._propagate_assignment(group, error)

    def _set_and_propagate_assignment(self, group: ClassicGroup, assignment: dict) -> None:
        if not group.is_in_state(GroupState.COMPLETING_REBALANCE):
            raise AssertionError("The group must be in CompletingRebalance state to set and propagate assignment.")
        for member in group.all_members():
            member.assignment = assignment.get(member.member_id, EMPTY_ASSIGNMENT)
        self._propagate_assignment(group, Errors.NONE)

    def _propagate_assignment(self, group: ClassicGroup, error: Errors) -> None:
        ok = error is Errors.NONE
        for member in group.all_members():
            response = SyncGroupResponse(
                error,
                protocol_type=group.protocol_type if ok else None,
                protocol_name=group.protocol_name if ok else None,
                assignment=member.assignment,
            )
            if group.complete_sync_future(member, response):
                self._reschedule_member_heartbeat(group, member, member.session_timeout_ms)

    # -- SyncGroup --------------------------------------------------------------------------
    def sync_group(self, request: SyncGroupRequest, respond: Callable[[SyncGroupResponse], None]) -> None:
        if not request.group_id:
            respond(SyncGroupResponse(Errors.INVALID_GROUP_ID))
            return
        shard = self._shard(request.group_id)
        group = shard.groups.get(request.group_id)
        if group is None or group.is_empty():
            respond(SyncGroupResponse(Errors.UNKNOWN_MEMBER_ID))
            return
        self._apply(shard, self._classic_group_sync(group, request, respond))

    def _validate_sync_group(self, group: ClassicGroup, request: SyncGroupRequest) -> Errors | None:
        if group.is_in_state(GroupState.DEAD):
            return Errors.COORDINATOR_NOT_AVAILABLE
        try:
            group.validate_member(request.member_id, request.group_instance_id, "sync-group")
        except KafkaError as error:
            return error.error
        if request.generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        for sent, current in (
            (request.protocol_type, group.protocol_type),
            (request.protocol_name, group.protocol_name),
        ):
            if sent is not None and current is not None and sent != current:
                return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _remove_pending_sync_member(self, group: ClassicGroup, member_id: str) -> None:
        group.remove_pending_sync_member(member_id)
        if (
            group.state in (GroupState.DEAD, GroupState.EMPTY, GroupState.PREPARING_REBALANCE)
            or group.has_received_sync_from_all_members()
        ):
            self.clock.cancel(self._sync_key(group.group_id))

    def _classic_group_sync(self, group: ClassicGroup, request: SyncGroupRequest, respond) -> _Result | None:
        error = self._validate_sync_group(group, request)
        if error is not None:
            respond(SyncGroupResponse(error))
            return None
        if group.is_in_state(GroupState.PREPARING_REBALANCE):
            respond(SyncGroupResponse(Errors.REBALANCE_IN_PROGRESS))
            return None
        if group.is_in_state(GroupState.COMPLETING_REBALANCE):
            group.member(request.member_id).awaiting_sync = respond
            self._remove_pending_sync_member(group, request.member_id)
            if not group.is_leader(request.member_id):
                return None
            assignment: dict[str, Assignment | bytes | None] = dict(request.assignments)
            for member in group.all_members():
                assignment.setdefault(member.member_id, EMPTY_ASSIGNMENT)
            generation = request.generation_id

            def on_append() -> None:
                if group.is_in_state(GroupState.COMPLETING_REBALANCE) and generation == group.generation_id:
                    self._set_and_propagate_assignment(group, assignment)
                    group.transition_to(GroupState.STABLE)
                    self.events.assignment_stored(group, self.clock.now)

            return _Result([group_metadata_record(group, assignment, self.kafka_version)], on_append)
        if group.is_in_state(GroupState.STABLE):
            self._remove_pending_sync_member(group, request.member_id)
            member = group.member(request.member_id)
            respond(SyncGroupResponse(Errors.NONE, group.protocol_type, group.protocol_name, member.assignment))
            return None
        raise AssertionError(f"Reached unexpected condition for Dead group {group.group_id}")

    # -- Heartbeat ----------------------------------------------------------------------------
    def heartbeat(self, request: HeartbeatRequest) -> Errors:
        group = self._shard(request.group_id).groups.get(request.group_id)
        if group is None:
            return Errors.UNKNOWN_MEMBER_ID
        if group.is_in_state(GroupState.DEAD):
            return Errors.COORDINATOR_NOT_AVAILABLE
        try:
            group.validate_member(request.member_id, request.group_instance_id, "heartbeat")
        except KafkaError as error:
            return error.error
        if request.generation_id != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        if group.is_in_state(GroupState.EMPTY):
            return Errors.UNKNOWN_MEMBER_ID
        member = group.member(request.member_id)
        self._reschedule_member_heartbeat(group, member, member.session_timeout_ms)
        if group.is_in_state(GroupState.PREPARING_REBALANCE):
            return Errors.REBALANCE_IN_PROGRESS
        return Errors.NONE

    # -- LeaveGroup ---------------------------------------------------------------------------
    def leave_group(self, request: LeaveGroupRequest) -> LeaveGroupResponse:
        shard = self._shard(request.group_id)
        group = shard.groups.get(request.group_id)
        if group is None:
            return LeaveGroupResponse(Errors.UNKNOWN_MEMBER_ID)
        if group.is_in_state(GroupState.DEAD):
            return LeaveGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE)
        responses = []
        for identity in request.members:
            reason = identity.reason or "not provided"
            if identity.member_id == UNKNOWN_MEMBER_ID:
                # Administrative removal of a static member by instance id.
                if identity.group_instance_id is not None and group.has_static_member(identity.group_instance_id):
                    self._remove_current_member(group, group.static_member_id(identity.group_instance_id), reason)
                    responses.append((identity, Errors.NONE))
                else:
                    responses.append((identity, Errors.UNKNOWN_MEMBER_ID))
            elif group.is_pending_member(identity.member_id):
                group.remove(identity.member_id, f"pending member left: {reason}")
                self.clock.cancel(self._heartbeat_key(group.group_id, identity.member_id))
                responses.append((identity, Errors.NONE))
            else:
                try:
                    group.validate_member(identity.member_id, identity.group_instance_id, "leave-group")
                    self._remove_current_member(group, identity.member_id, reason)
                    responses.append((identity, Errors.NONE))
                except KafkaError as error:
                    responses.append((identity, error.error))
        left = [identity.member_id for identity, error in responses if error is Errors.NONE]
        if left:
            reason = f"explicit `LeaveGroup` request for ({', '.join(left)}) members."
            if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
                self._apply(shard, self._maybe_prepare_rebalance_or_complete_join(group, reason, "member_left"))
            elif group.is_in_state(GroupState.PREPARING_REBALANCE):
                self._apply(shard, self._maybe_complete_join_phase(group))
        return LeaveGroupResponse(Errors.NONE, tuple(responses))

    def _remove_current_member(self, group: ClassicGroup, member_id: str, reason: str) -> None:
        member = group.member(member_id)
        self.clock.cancel(self._heartbeat_key(group.group_id, member_id))
        group.complete_join_future(member, JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID, member_id=UNKNOWN_MEMBER_ID))
        group.remove(member_id, f"LeaveGroup: {reason}")

    # -- OffsetCommit -------------------------------------------------------------------------
    def commit_offsets(self, request: OffsetCommitRequest) -> OffsetCommitResponse:
        """``KafkaApis.handleOffsetCommitRequest`` (unknown topics and partitions are answered
        without reaching the coordinator) then ``OffsetMetadataManager.commitOffset``."""
        if not request.group_id:
            return OffsetCommitResponse(Errors.INVALID_GROUP_ID)
        known = self._known_topics() if self._known_topics else None
        errors: list[tuple[str, int, Errors]] = []
        valid = []
        for p in request.partitions:
            if known is not None and (p.topic not in known or not 0 <= p.partition < known[p.topic]):
                errors.append((p.topic, p.partition, Errors.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                valid.append(p)
        if not valid:
            return OffsetCommitResponse(Errors.NONE, tuple(errors))

        shard = self._shard(request.group_id)
        group = shard.groups.get(request.group_id)
        if group is None:
            if request.generation_id >= 0:
                return OffsetCommitResponse(Errors.GROUP_ID_NOT_FOUND)  # OffsetCommit v9+
            group = self._get_or_maybe_create_classic_group(shard, request.group_id, True)  # simple group
        try:
            group.validate_offset_commit(request.member_id, request.group_instance_id, request.generation_id)
        except KafkaError as error:
            return OffsetCommitResponse(error.error)
        if group.state in (GroupState.STABLE, GroupState.PREPARING_REBALANCE):
            # Classic-protocol commits keep the member's session alive.
            member = group.member(request.member_id)
            self._reschedule_member_heartbeat(group, member, member.session_timeout_ms)

        now = self.clock.now
        expire = now + request.retention_time_ms if request.retention_time_ms != -1 else None
        records: list[CoordinatorRecord] = []
        for p in valid:
            if p.metadata is not None and len(p.metadata) > self.config.offset_metadata_max_bytes:
                errors.append((p.topic, p.partition, Errors.OFFSET_METADATA_TOO_LARGE))
                continue
            value = OffsetAndMetadata(
                committed_offset=p.offset,
                leader_epoch=None if p.leader_epoch < 0 else p.leader_epoch,
                metadata=p.metadata or "",
                commit_timestamp_ms=now,
                expire_timestamp_ms=expire,
                topic_id=request.topic_ids.get(p.topic),
            )
            records.append(offset_commit_record(request.group_id, p.topic, p.partition, value, self.kafka_version))
            errors.append((p.topic, p.partition, Errors.NONE))
        self._apply(shard, _Result(records))
        return OffsetCommitResponse(Errors.NONE, tuple(errors))

    def committed_offset(self, group_id: str, topic: str, partition: int) -> OffsetAndMetadata | None:
        """OffsetFetch for one partition."""
        return self._shard(group_id).offsets.get(group_id, topic, partition)

    # -- OffsetDelete / DeleteGroups -----------------------------------------------------------
    def delete_offsets(
        self, group_id: str, partitions: list[tuple[str, int]]
    ) -> dict[tuple[str, int], Errors] | Errors:
        """``OffsetMetadataManager.deleteOffsets``; partitions of subscribed topics are refused."""
        shard = self._shard(group_id)
        group = shard.groups.get(group_id)
        if group is None:
            return Errors.GROUP_ID_NOT_FOUND
        try:
            group.validate_offset_delete()
        except KafkaError as error:
            return error.error
        records, result = [], {}
        for topic, partition in partitions:
            if group.is_subscribed_to_topic(topic):
                result[(topic, partition)] = Errors.GROUP_SUBSCRIBED_TO_TOPIC
                continue
            result[(topic, partition)] = Errors.NONE
            if shard.offsets.get(group_id, topic, partition) is not None:
                records.append(offset_tombstone(group_id, topic, partition, "offset deleted"))
        self._apply(shard, _Result(records))
        return result

    def delete_groups(self, group_ids: list[str]) -> dict[str, Errors]:
        """``GroupCoordinatorShard.deleteGroups``: offset tombstones, then the group tombstone."""
        result: dict[str, Errors] = {}
        by_shard: dict[int, list[CoordinatorRecord]] = {}
        for group_id in group_ids:
            shard = self._shard(group_id)
            group = shard.groups.get(group_id)
            if group is None:
                result[group_id] = Errors.GROUP_ID_NOT_FOUND
                continue
            try:
                group.validate_delete_group()
            except KafkaError as error:
                result[group_id] = error.error
                continue
            records = by_shard.setdefault(shard.partition, [])
            for topic, partition, _ in shard.offsets.group_offsets(group_id):
                records.append(offset_tombstone(group_id, topic, partition, "group deleted"))
            records.append(group_tombstone(group_id, "deleted"))
            result[group_id] = Errors.NONE
        for partition, records in by_shard.items():
            self._apply(self._shards[partition], _Result(records))
        return result

    # -- offset expiry --------------------------------------------------------------------------
    def _schedule_group_metadata_expiration(self) -> None:
        self.clock.after(
            self.config.offsets_retention_check_interval_ms, self._cleanup_group_metadata, key="group-expiration"
        )

    def _cleanup_group_metadata(self) -> None:
        """``GroupCoordinatorShard.cleanupGroupMetadata``, shard by shard."""
        for partition in sorted(self._shards):
            shard = self._shards[partition]
            records: list[CoordinatorRecord] = []
            for group_id in list(shard.groups):
                if self._cleanup_expired_offsets(shard, group_id, records):
                    group = shard.groups.get(group_id)
                    if group is not None and group.is_empty():
                        records.append(group_tombstone(group_id, "expired"))
            self._apply(shard, _Result(records))
        self._schedule_group_metadata_expiration()

    def _cleanup_expired_offsets(self, shard: _Shard, group_id: str, records: list[CoordinatorRecord]) -> bool:
        """Tombstones for expired offsets; True when the group has no offsets left."""
        if not shard.offsets.has_group(group_id):
            return True
        group = shard.groups[group_id]
        base = group.offset_expiration_base()
        if base is None:
            return False
        now = self.clock.now
        all_expired = True
        for topic in shard.offsets.topics_of(group_id):
            if group.is_subscribed_to_topic(topic):
                all_expired = False
                continue
            for partition, offset in shard.offsets.partitions_of(group_id, topic):
                if offset.expire_timestamp_ms is not None:
                    expired = now >= offset.expire_timestamp_ms
                else:
                    expired = now - base(offset.commit_timestamp_ms) >= self.config.offsets_retention_ms
                if expired:
                    records.append(offset_tombstone(group_id, topic, partition, "expired"))
                else:
                    all_expired = False
        return all_expired
