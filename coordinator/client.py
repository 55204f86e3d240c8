"""The client side: a Java ``KafkaConsumer`` (classic protocol) in a group, on the simulated clock.

Models ``AbstractCoordinator``/``ConsumerCoordinator`` and the poll loop of ``ClassicKafkaConsumer``
(Kafka 4.2, ``clients/.../consumer/internals``):

* the application thread calls ``poll()`` every ``poll_interval_ms`` unless it is *stalled*
  (processing a batch); each poll resets the poll timer, (re)joins when needed, auto-commits
  when due (before fetching, so a commit carries what earlier polls returned) and then consumes
  up to each assigned partition's log end offset;
* joining is non-blocking, as in ``ClassicKafkaConsumer.poll`` (``waitForJoinGroup = false``):
  JoinGroup -> (MEMBER_ID_REQUIRED -> JoinGroup) -> SyncGroup, with ``onJoinPrepare`` first
  (auto-commit, then revoke: everything under EAGER, only unsubscribed topics under COOPERATIVE);
  responses wake the application thread immediately when it is inside ``poll`` (it blocks in the
  network client), or at its next poll when it is stalled;
* the heartbeat thread sends heartbeats every ``heartbeat_interval_ms`` between JoinGroup response
  and leaving, reacts to REBALANCE_IN_PROGRESS / ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID, and sends
  LeaveGroup when ``max.poll.interval.ms`` passes without a poll (static members only reset
  their member id: they never send LeaveGroup, KIP-345);
* the leader runs the protocol's assignor over every member's subscription and notices partition
  count changes at its next metadata refresh (``metadata.max.age.ms``), then rejoins.

Not modelled: coordinator discovery and failover, request timeouts, fetch sizes
(``max.poll.records``: a poll consumes everything available), pattern subscriptions, racks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from coordinator.assignors import DEFAULT_ASSIGNMENT_STRATEGY, PartitionAssignor, RebalanceProtocol, new_assignor
from coordinator.clock import SimulatedClock
from coordinator.cluster import Cluster
from coordinator.consumer_protocol import PROTOCOL_TYPE, Assignment, Subscription, subscription
from coordinator.errors import Errors
from coordinator.group_coordinator import GroupCoordinator
from coordinator.java_collections import JavaHashMap
from coordinator.member import Protocol
from coordinator.requests import (
    UNKNOWN_GENERATION_ID,
    UNKNOWN_MEMBER_ID,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetCommitResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from coordinator.topic_partition import TopicPartition, by_topic_then_partition

#: Errors after which ``joinGroupIfNeeded`` retries at once (``AbstractCoordinator``).
_REJOIN_AT_ONCE = {
    Errors.UNKNOWN_MEMBER_ID,
    Errors.ILLEGAL_GENERATION,
    Errors.REBALANCE_IN_PROGRESS,
    Errors.MEMBER_ID_REQUIRED,
}
#: Errors the consumer throws from poll(); the simulated application then stops.
_FATAL = {
    Errors.INCONSISTENT_GROUP_PROTOCOL,
    Errors.INVALID_SESSION_TIMEOUT,
    Errors.INVALID_GROUP_ID,
    Errors.GROUP_MAX_SIZE_REACHED,
    Errors.FENCED_INSTANCE_ID,
}


class MemberState(Enum):
    UNJOINED = "UNJOINED"
    PREPARING_REBALANCE = "PREPARING_REBALANCE"
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
    STABLE = "STABLE"


@dataclass(frozen=True)
class Generation:
    generation_id: int = UNKNOWN_GENERATION_ID
    member_id: str = UNKNOWN_MEMBER_ID
    protocol_name: str | None = None


NO_GENERATION = Generation()


@dataclass(frozen=True)
class ConsumerConfig:
    """Consumer settings, with the Java client's 4.2 defaults (``ConsumerConfig.java``)."""

    name: str
    group_id: str
    topics: tuple[str, ...]
    client_id: str = ""
    client_host: str = "/127.0.0.1"
    group_instance_id: str | None = None
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 3000
    max_poll_interval_ms: int = 300000
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5000
    assignors: tuple[str, ...] = DEFAULT_ASSIGNMENT_STRATEGY
    auto_offset_reset: str = "latest"
    metadata_max_age_ms: int = 300000
    retry_backoff_ms: int = 100
    #: How often the application calls poll() (its processing time per batch).
    poll_interval_ms: int = 100
    #: Send topic ids in OffsetCommit (v10+, KIP-848 era clients); classic Java clients do not.
    commit_topic_ids: bool = False
    #: ``group.protocol``: ``classic`` (JoinGroup/SyncGroup, this module) or ``consumer`` (KIP-848,
    #: ConsumerGroupHeartbeat: :mod:`coordinator.consumer_group_client`).
    group_protocol: str = "classic"
    #: ``group.remote.assignor`` (KIP-848 only): the server assignor the member asks for.
    group_remote_assignor: str | None = None

    @property
    def effective_client_id(self) -> str:
        return self.client_id or self.name


class ClientEvents:
    """Hook for the timeline's event log."""

    def client_event(self, consumer: str, at: int, kind: str, **detail: Any) -> None: ...


class Network:
    """Request/response delivery with a fixed one-way latency, in clock order."""

    def __init__(self, clock: SimulatedClock, latency_ms: int = 0):
        self.clock = clock
        self.latency_ms = latency_ms

    def send(self, handler: Callable[[Callable[[Any], None]], None], on_response: Callable[[Any], None]) -> None:
        """Run ``handler(respond)`` on the broker after the latency; ``respond`` delivers back."""

        def respond(response: Any) -> None:
            self.clock.after(self.latency_ms, lambda: on_response(response))

        self.clock.after(self.latency_ms, lambda: handler(respond))


@dataclass
class _Position:
    offset: int
    leader_epoch: int | None


@dataclass
class _Pending:
    """A JoinGroup+SyncGroup round trip (``joinFuture``) or an OffsetCommit in flight."""

    done: bool = False
    error: Errors | None = None
    assignment: Any = None


class Consumer:
    def __init__(
        self,
        config: ConsumerConfig,
        clock: SimulatedClock,
        network: Network,
        coordinator: GroupCoordinator,
        cluster: Cluster,
        events: ClientEvents | None = None,
    ):
        self.config = config
        self.clock = clock
        self.network = network
        self.coordinator = coordinator
        self.cluster = cluster
        self.events = events or ClientEvents()
        self.assignors: list[PartitionAssignor] = [new_assignor(name) for name in config.assignors]
        common = set(RebalanceProtocol)
        for a in self.assignors:
            common &= set(a.supported_protocols())
        if not common:
            raise ValueError(f"assignors {list(config.assignors)} have no common rebalance protocol")
        self.protocol = max(common)  # the newest protocol every configured assignor supports
        self.running = False
        self.failed: Errors | None = None
        self._incarnation = 0
        self._reset_state()

    def _reset_state(self) -> None:
        self.state = MemberState.UNJOINED
        self.generation = NO_GENERATION
        self.rejoin_needed = True
        self.rejoin_reason = ""
        self.needs_join_prepare = True
        self.join_future: _Pending | None = None
        self.commit_in_join_prepare: _Pending | None = None
        self.is_leader = False
        self.subscription: set[str] = set(self.config.topics)
        self.joined_subscription: set[str] | None = None
        self.group_subscription: set[str] = set()
        self.assigned: list[TopicPartition] = []
        self.positions: dict[TopicPartition, _Position] = {}
        self.metadata_snapshot: dict[str, int] = {}
        self.assignment_snapshot: dict[str, int] | None = None
        self.last_metadata_refresh = -(10**15)
        self.stalled_until = -1
        self._inbox: list[Callable[[], None]] = []
        self.next_auto_commit = 0
        self.heartbeat_enabled = False
        self.heartbeat_due = 0
        self.poll_deadline = 0

    # -- lifecycle (scenario actions) ----------------------------------------------------------
    def _event(self, kind: str, **detail: Any) -> None:
        self.events.client_event(self.config.name, self.clock.now, kind, **detail)

    def start(self) -> None:
        self._incarnation += 1
        self._reset_state()
        self.assignors = [new_assignor(name) for name in self.config.assignors]  # a fresh process
        self.running = True
        self.failed = None
        self.next_auto_commit = self.clock.now + self.config.auto_commit_interval_ms
        self._event("start", client_id=self.config.effective_client_id, group_instance_id=self.config.group_instance_id)
        self._schedule_poll(self.clock.now)

    def crash(self) -> None:
        """The process dies: no LeaveGroup, no more heartbeats; the session times out."""
        self._stop("crash")

    def close(self) -> None:
        """``KafkaConsumer.close()``: sync auto-commit, revoke, then LeaveGroup (dynamic members only)."""
        if not self.running:
            return
        self._maybe_commit(self._all_consumed(), reason="close")
        self._event("close", partitions=[str(tp) for tp in self.assigned])
        self.assigned, self.positions = [], {}
        self._maybe_leave_group("the consumer is being closed")
        self._stop("closed")

    def stall(self, duration_ms: int) -> None:
        """The application spends ``duration_ms`` between two polls (the heartbeat thread runs on)."""
        self.stalled_until = self.clock.now + duration_ms
        self._event("stall", until=self.stalled_until)

    def subscribe(self, topics: list[str]) -> None:
        self.subscription = set(topics)
        self._event("subscribe", topics=sorted(topics))

    def commit_sync(self, offsets: dict[TopicPartition, int] | None = None, metadata: str = "") -> None:
        """``commitSync()``: the consumed positions, or the given offsets."""
        if offsets is None:
            to_commit = self._all_consumed()
        else:
            to_commit = JavaHashMap()
            for tp, offset in offsets.items():
                to_commit[tp] = _Position(offset, self.positions.get(tp, _Position(offset, None)).leader_epoch)
        self._maybe_commit(to_commit, reason="commitSync", metadata=metadata)

    def _stop(self, kind: str) -> None:
        self.running = False
        self._incarnation += 1  # responses to the old incarnation are dropped
        self.heartbeat_enabled = False
        self._event(kind)

    def _alive(self, incarnation: int) -> bool:
        return self.running and incarnation == self._incarnation

    def _send(self, handler, on_response) -> None:
        incarnation = self._incarnation
        self.network.send(handler, lambda response: on_response(response) if self._alive(incarnation) else None)

    # -- the poll loop ---------------------------------------------------------------------------
    def _schedule_poll(self, at: int) -> None:
        self.clock.at(at, self._poll_tick, key=f"poll-{self.config.name}")

    def _poll_tick(self) -> None:
        if not self.running:
            return
        if self.clock.now < self.stalled_until:
            self._schedule_poll(self.stalled_until)
            return
        self.poll()
        if self.running:
            self._schedule_poll(self.clock.now + self.config.poll_interval_ms)

    def _in_poll(self) -> bool:
        return self.running and self.clock.now >= self.stalled_until

    def _on_application_thread(self, work: Callable[[], None]) -> None:
        if self._in_poll():
            work()
        else:
            self._inbox.append(work)

    def poll(self) -> None:
        """One ``KafkaConsumer.poll()``: coordinator work, auto-commit, then fetch."""
        now = self.clock.now
        inbox, self._inbox = self._inbox, []
        for work in inbox:  # responses that arrived while the application was busy
            work()
            if not self.running:
                return
        self._maybe_refresh_metadata(now)
        self.poll_deadline = now + self.config.max_poll_interval_ms  # pollHeartbeat
        joined = self._join_group_if_needed()
        if not self.running:
            return
        if joined:  # ConsumerCoordinator.poll returns early while a rebalance is pending
            self._maybe_auto_commit_async(now)
        self._fetch(now, initialize=joined)

    def _maybe_refresh_metadata(self, now: int) -> None:
        if now - self.last_metadata_refresh < self.config.metadata_max_age_ms:
            return
        self._refresh_metadata(now)

    def _refresh_metadata(self, now: int) -> None:
        self.last_metadata_refresh = now
        topics = self.subscription | self.group_subscription
        counts = self.cluster.partition_counts()
        self.metadata_snapshot = {t: counts[t] for t in topics if t in counts}

    def _fetch(self, now: int, initialize: bool) -> None:
        """Consume everything available; new partitions first get a position (OffsetFetch or
        reset) unless a rebalance is pending (``updateFetchPositions`` is skipped then)."""
        for tp in self.assigned:
            position = self.positions.get(tp)
            if position is None:
                if not initialize:
                    continue
                position = self._initial_position(tp, now)
                self.positions[tp] = position
            end = self.cluster.log_end_offset(tp.topic, tp.partition, now)
            if end > position.offset:
                self.positions[tp] = _Position(end, self.cluster.leader_epoch(tp.topic))

    def _initial_position(self, tp: TopicPartition, now: int) -> _Position:
        """OffsetFetch, else ``auto.offset.reset`` through ListOffsets."""
        committed = self.coordinator.committed_offset(self.config.group_id, tp.topic, tp.partition)
        if committed is not None:
            return _Position(committed.committed_offset, committed.leader_epoch)
        if self.config.auto_offset_reset == "earliest":
            return _Position(0, self.cluster.leader_epoch(tp.topic))
        if self.config.auto_offset_reset == "latest":
            return _Position(
                self.cluster.log_end_offset(tp.topic, tp.partition, now), self.cluster.leader_epoch(tp.topic)
            )
        raise ValueError(f"auto.offset.reset={self.config.auto_offset_reset!r} and no committed offset for {tp}")

    # -- rejoin decisions ------------------------------------------------------------------------
    def _request_rejoin(self, reason: str) -> None:
        self.rejoin_needed = True
        self.rejoin_reason = reason

    def _rejoin_needed_or_pending(self) -> bool:
        if self.assignment_snapshot is not None and self.assignment_snapshot != self.metadata_snapshot:
            if not self.rejoin_needed:
                self._request_rejoin("cached metadata has changed")
            return True
        if self.joined_subscription is not None and self.joined_subscription != self.subscription:
            if not self.rejoin_needed:
                self._request_rejoin("subscription has changed")
            return True
        return self.rejoin_needed or self.join_future is not None

    def _reset_state_and_generation(self, reset_member_id: bool) -> None:
        self.state = MemberState.UNJOINED
        if reset_member_id:
            self.generation = NO_GENERATION
        else:
            self.generation = Generation(UNKNOWN_GENERATION_ID, self.generation.member_id, None)

    def _reset_state_and_rejoin(self, reason: str, reset_member_id: bool) -> None:
        self._reset_state_and_generation(reset_member_id)
        self._request_rejoin(reason)
        self.needs_join_prepare = True

    def _join_group_if_needed(self) -> bool:
        """``AbstractCoordinator.joinGroupIfNeeded`` with a zero timer: never blocks. True when
        no rebalance is pending any more."""
        while self.running and self._rejoin_needed_or_pending():
            if self.needs_join_prepare:
                self.needs_join_prepare = False
                if not self._on_join_prepare():
                    self.needs_join_prepare = True
                    return False
            if self.join_future is None:
                self._initiate_join_group()
            future = self.join_future
            if not future.done:
                return False
            self.join_future = None
            if future.error is None:
                if self.generation.generation_id != UNKNOWN_GENERATION_ID and self.state is MemberState.STABLE:
                    self._on_join_complete(future.assignment)
                    self.needs_join_prepare = True
                else:
                    self._reset_state_and_rejoin("generation/state was modified by the heartbeat thread", True)
                continue
            error = future.error
            if error is not Errors.MEMBER_ID_REQUIRED:
                self._request_rejoin(f"rebalance failed due to {error.name}")
            if error in _REJOIN_AT_ONCE:
                continue
            if error in _FATAL:
                self._fail(error)
                return False
            # retriable (e.g. COORDINATOR_NOT_AVAILABLE): back off, then try again
            self.clock.after(self.config.retry_backoff_ms, self._wake)
            return False
        return self.running

    def _wake(self) -> None:
        """A response arrived while the application thread waits inside poll()."""
        if self._in_poll():
            self._join_group_if_needed()

    def _fail(self, error: Errors) -> None:
        self.failed = error
        self._event("fatal_error", error=error.name)
        self._stop("stopped")

    # -- onJoinPrepare / JoinGroup / SyncGroup ------------------------------------------------
    def _on_join_prepare(self) -> bool:
        if self.config.enable_auto_commit and self.commit_in_join_prepare is None:
            self.commit_in_join_prepare = self._maybe_commit(self._all_consumed(), reason="before rebalance", wake=True)
        pending = self.commit_in_join_prepare
        if pending is not None and not pending.done:
            return False
        self.commit_in_join_prepare = None

        if self.generation.generation_id == UNKNOWN_GENERATION_ID or self.generation.member_id == UNKNOWN_MEMBER_ID:
            if self.assigned:
                self._event("partitions_lost", partitions=[str(tp) for tp in self.assigned])
            self._assign_from_subscribed([])
        elif self.protocol is RebalanceProtocol.EAGER:
            if self.assigned:
                self._event("partitions_revoked", partitions=[str(tp) for tp in self.assigned])
            self._assign_from_subscribed([])
        else:
            revoked = [tp for tp in self.assigned if tp.topic not in self.subscription]
            if revoked:
                self._event("partitions_revoked", partitions=[str(tp) for tp in revoked])
                self._assign_from_subscribed([tp for tp in self.assigned if tp not in revoked])
        self.is_leader = False
        self.group_subscription = set()
        return True

    def _metadata(self) -> tuple[Protocol, ...]:
        """``ConsumerCoordinator.metadata()``: one protocol per configured assignor, in order."""
        self.joined_subscription = set(self.subscription)
        return tuple(
            Protocol(
                assignor.name,
                subscription(
                    self.joined_subscription,
                    assignor.subscription_user_data(self.joined_subscription),
                    self.assigned,
                    self.generation.generation_id,
                ),
            )
            for assignor in self.assignors
        )

    def _initiate_join_group(self) -> None:
        self.state = MemberState.PREPARING_REBALANCE
        future = _Pending()
        self.join_future = future
        request = JoinGroupRequest(
            group_id=self.config.group_id,
            session_timeout_ms=self.config.session_timeout_ms,
            rebalance_timeout_ms=self.config.max_poll_interval_ms,
            member_id=self.generation.member_id,
            group_instance_id=self.config.group_instance_id,
            protocol_type=PROTOCOL_TYPE,
            protocols=self._metadata(),
            client_id=self.config.effective_client_id,
            client_host=self.config.client_host,
            reason=self.rejoin_reason,
        )
        sent = self.generation
        self._event("join_group", member_id=request.member_id, generation=sent.generation_id)
        # Nothing polls the network while a JoinGroup is in flight except the application thread
        # (the heartbeat thread is disabled), so the response waits for the next poll() if the
        # application is busy: that is how a slow consumer misses a rebalance's sync deadline.
        self._send(
            lambda respond: self.coordinator.join_group(request, respond),
            lambda r: self._on_application_thread(lambda: self._on_join_response(future, sent, r)),
        )

    def _finish(self, future: _Pending, error: Errors | None = None, assignment: Any = None) -> None:
        future.done, future.error, future.assignment = True, error, assignment
        self._wake()

    def _on_join_response(self, future: _Pending, sent: Generation, response: JoinGroupResponse) -> None:
        error = response.error
        self._event(
            "join_group_response", error=error.name, member_id=response.member_id, generation=response.generation_id
        )
        if error is Errors.NONE:
            if self.state is not MemberState.PREPARING_REBALANCE:
                self._finish(future, Errors.UNKNOWN_MEMBER_ID)
                return
            self.state = MemberState.COMPLETING_REBALANCE
            self._enable_heartbeat()
            self.generation = Generation(response.generation_id, response.member_id, response.protocol_name)
            if response.leader == response.member_id:
                assignments = self._on_leader_elected(response)
            else:
                assignments = {}
            request = SyncGroupRequest(
                group_id=self.config.group_id,
                member_id=self.generation.member_id,
                generation_id=self.generation.generation_id,
                group_instance_id=self.config.group_instance_id,
                protocol_type=PROTOCOL_TYPE,
                protocol_name=self.generation.protocol_name,
                assignments=assignments,
            )
            generation = self.generation
            self._send(
                lambda respond: self.coordinator.sync_group(request, respond),
                lambda r: self._on_sync_response(future, generation, r),
            )
            return
        if error is Errors.UNKNOWN_MEMBER_ID:
            if self.generation == sent:  # generationUnchanged
                self._reset_state_and_rejoin("JoinGroup: UNKNOWN_MEMBER_ID", True)
        elif error is Errors.MEMBER_ID_REQUIRED:
            self.generation = Generation(UNKNOWN_GENERATION_ID, response.member_id, None)
            self._request_rejoin(f"need to re-join with the given member-id: {response.member_id}")
        self._finish(future, error)

    def _on_sync_response(self, future: _Pending, sent: Generation, response: SyncGroupResponse) -> None:
        error = response.error
        self._event("sync_group_response", error=error.name, generation=sent.generation_id)
        if error is Errors.NONE:
            if (
                self.generation.generation_id != UNKNOWN_GENERATION_ID
                and self.state is MemberState.COMPLETING_REBALANCE
            ):
                self.state = MemberState.STABLE
                self.rejoin_needed = False
                self._finish(future, None, response.assignment)
            else:
                self._finish(future, Errors.ILLEGAL_GENERATION)
            return
        if error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION) and self.generation == sent:
            self._reset_state_and_rejoin(f"SyncGroup: {error.name}", error is not Errors.ILLEGAL_GENERATION)
        self._finish(future, error)

    def _on_leader_elected(self, response: JoinGroupResponse) -> dict[str, Assignment]:
        """``ConsumerCoordinator.onLeaderElected``: run the selected assignor for everyone."""
        assignor = next(a for a in self.assignors if a.name == response.protocol_name)
        subscriptions: JavaHashMap[str, Subscription] = JavaHashMap()
        all_topics: set[str] = set()
        for member in response.members:
            sub = member.metadata
            assert isinstance(sub, Subscription)
            subscriptions[member.member_id] = sub.with_instance_id(member.group_instance_id)
            all_topics.update(sub.topics)
        self.group_subscription = all_topics
        self._refresh_metadata(self.clock.now)  # updateGroupSubscription -> ensureFreshMetadata
        self.is_leader = True
        self.assignment_snapshot = dict(self.metadata_snapshot)
        if response.skip_assignment:
            self._event("assignment_skipped", generation=response.generation_id)
            return {}
        counts = self.cluster.partition_counts()
        result = assignor.assign(counts, subscriptions)
        assignments = {member_id: Assignment(tuple(result[member_id])) for member_id in result}
        self._event(
            "assignment_computed",
            generation=response.generation_id,
            assignor=assignor.name,
            assignments={m: [str(tp) for tp in a.partitions] for m, a in assignments.items()},
        )
        return assignments

    def _on_join_complete(self, assignment_value: Any) -> None:
        """``ConsumerCoordinator.onJoinComplete``: apply the assignment, revoke (COOPERATIVE), notify."""
        if not self.is_leader:
            self.assignment_snapshot = None
        assignor = next(a for a in self.assignors if a.name == self.generation.protocol_name)
        assignment = assignment_value if isinstance(assignment_value, Assignment) else Assignment()
        owned = sorted(self.assigned, key=by_topic_then_partition)
        assigned = sorted(set(assignment.partitions), key=by_topic_then_partition)
        if any(tp.topic not in self.subscription for tp in assigned):
            self._request_rejoin("received assignment does not match the current subscription")
            return
        added = [tp for tp in assigned if tp not in owned]
        if self.protocol is RebalanceProtocol.COOPERATIVE:
            revoked = [tp for tp in owned if tp not in assigned]
            if revoked:
                self._event("partitions_revoked", partitions=[str(tp) for tp in revoked])
                self._request_rejoin("need to revoke partitions and re-join")
        assignor.on_assignment(list(assignment.partitions), self.generation.generation_id)
        if self.config.enable_auto_commit:
            self.next_auto_commit = self.clock.now + self.config.auto_commit_interval_ms
        self._assign_from_subscribed(assigned)
        self._event(
            "partitions_assigned",
            generation=self.generation.generation_id,
            member_id=self.generation.member_id,
            assigned=[str(tp) for tp in assigned],
            added=[str(tp) for tp in added],
        )

    def _assign_from_subscribed(self, partitions: list[TopicPartition]) -> None:
        """``SubscriptionState.assignFromSubscribed``: positions survive for partitions kept."""
        self.assigned = sorted(partitions, key=by_topic_then_partition)
        self.positions = {tp: self.positions[tp] for tp in self.assigned if tp in self.positions}

    # -- heartbeat thread --------------------------------------------------------------------------
    def _enable_heartbeat(self) -> None:
        now = self.clock.now
        self.heartbeat_enabled = True
        self.poll_deadline = now + self.config.max_poll_interval_ms  # Heartbeat.resetTimeouts
        self.heartbeat_due = now + self.config.heartbeat_interval_ms
        self._schedule_heartbeat_tick()

    def _schedule_heartbeat_tick(self) -> None:
        at = min(self.heartbeat_due, self.poll_deadline)
        self.clock.at(at, self._heartbeat_tick, key=f"heartbeat-thread-{self.config.name}")

    def _heartbeat_tick(self) -> None:
        if not self.running or not self.heartbeat_enabled:
            return
        if self.state in (MemberState.UNJOINED, MemberState.PREPARING_REBALANCE):
            self.heartbeat_enabled = False
            return
        now = self.clock.now
        if now >= self.poll_deadline:
            self._event("poll_timeout_expired", max_poll_interval_ms=self.config.max_poll_interval_ms)
            self._maybe_leave_group("consumer poll timeout has expired.")
            return
        if now >= self.heartbeat_due:
            self.heartbeat_due = now + self.config.heartbeat_interval_ms
            self._send_heartbeat()
        self._schedule_heartbeat_tick()

    def _send_heartbeat(self) -> None:
        sent = self.generation
        request = HeartbeatRequest(
            self.config.group_id, sent.member_id, sent.generation_id, self.config.group_instance_id
        )
        self._send(
            lambda respond: respond(self.coordinator.heartbeat(request)),
            lambda error: self._on_heartbeat_response(sent, error),
        )

    def _on_heartbeat_response(self, sent: Generation, error: Errors) -> None:
        if error is Errors.NONE:
            return
        self._event("heartbeat_error", error=error.name, generation=sent.generation_id)
        if error is Errors.REBALANCE_IN_PROGRESS:
            if self.state is MemberState.STABLE:
                self._request_rejoin("group is already rebalancing")
        elif error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID):
            if self.generation == sent:
                if error is Errors.FENCED_INSTANCE_ID:
                    self._fail(error)
                    return
                self._reset_state_and_rejoin(f"Heartbeat: {error.name}", error is not Errors.ILLEGAL_GENERATION)
        else:
            self.heartbeat_due = self.clock.now + self.config.retry_backoff_ms

    # -- LeaveGroup --------------------------------------------------------------------------------
    def _maybe_leave_group(self, reason: str) -> None:
        """``AbstractCoordinator.maybeLeaveGroup``: dynamic members send LeaveGroup; every member
        resets its generation and member id."""
        if (
            self.state is not MemberState.UNJOINED
            and self.generation.member_id
            and self.config.group_instance_id is None
        ):
            request = LeaveGroupRequest(
                self.config.group_id, (MemberIdentity(self.generation.member_id, reason=reason),)
            )
            self._event("leave_group", member_id=self.generation.member_id, reason=reason)
            self.network.send(lambda respond: respond(self.coordinator.leave_group(request)), lambda _r: None)
        self._reset_state_and_rejoin("consumer pro-actively leaving the group", True)
        self.heartbeat_enabled = False

    # -- offset commits ------------------------------------------------------------------------------
    def _all_consumed(self) -> JavaHashMap[TopicPartition, _Position]:
        """``SubscriptionState.allConsumed``: a HashMap filled in assignment order."""
        consumed: JavaHashMap[TopicPartition, _Position] = JavaHashMap()
        for tp in self.assigned:
            if tp in self.positions:
                consumed[tp] = self.positions[tp]
        return consumed

    def _maybe_auto_commit_async(self, now: int) -> None:
        if self.config.enable_auto_commit and now >= self.next_auto_commit:
            self.next_auto_commit = now + self.config.auto_commit_interval_ms
            self._maybe_commit(self._all_consumed(), reason="auto-commit")

    def _maybe_commit(
        self, offsets: JavaHashMap[TopicPartition, _Position], reason: str, metadata: str = "", wake: bool = False
    ) -> _Pending | None:
        """``sendOffsetCommitRequest``: only a member of a stable generation commits (or a
        consumer without group management). Returns the in-flight commit, or None if none was sent."""
        if not offsets:
            return None
        if self.state is not MemberState.STABLE:
            self._event("commit_skipped", reason=reason, state=self.state.value)
            return None
        sent = self.generation
        by_topic: JavaHashMap[str, list[OffsetCommitPartition]] = JavaHashMap()
        for tp in offsets:
            position = offsets[tp]
            epoch = -1 if position.leader_epoch is None else position.leader_epoch
            partition = OffsetCommitPartition(tp.topic, tp.partition, position.offset, epoch, metadata)
            by_topic[tp.topic] = by_topic.get(tp.topic, []) + [partition]
        topic_ids = {}
        if self.config.commit_topic_ids:
            topic_ids = {t: self.cluster.topics[t].topic_id for t in by_topic if self.cluster.topics[t].topic_id}
        request = OffsetCommitRequest(
            self.config.group_id,
            sent.member_id,
            sent.generation_id,
            self.config.group_instance_id,
            tuple(p for topic in by_topic for p in by_topic[topic]),
            topic_ids=topic_ids,
        )
        pending = _Pending()
        self._event(
            "commit",
            reason=reason,
            generation=sent.generation_id,
            offsets={str(p.topic) + "-" + str(p.partition): p.offset for p in request.partitions},
        )

        def on_response(response: OffsetCommitResponse) -> None:
            self._on_commit_response(sent, response)
            pending.done = True
            if wake:
                self._wake()

        self._send(lambda respond: respond(self.coordinator.commit_offsets(request)), on_response)
        return pending

    def _on_commit_response(self, sent: Generation, response: OffsetCommitResponse) -> None:
        error = response.error
        if error is Errors.NONE:
            error = next((e for _t, _p, e in response.partition_errors if e is not Errors.NONE), Errors.NONE)
        if error is Errors.NONE:
            return
        self._event("commit_failed", error=error.name, generation=sent.generation_id)
        if error is Errors.FENCED_INSTANCE_ID and self.generation == sent:
            self._fail(error)  # asyncCommitFenced: the next poll() throws FencedInstanceIdException
        elif error is Errors.REBALANCE_IN_PROGRESS:
            self._request_rejoin("offset commit failed since group is already rebalancing")
        elif error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            if not (self.generation != sent and self.state is MemberState.PREPARING_REBALANCE):
                self._reset_state_and_rejoin(f"OffsetCommit: {error.name}", error is not Errors.ILLEGAL_GENERATION)
