"""The broker side of KIP-848 (``group.protocol=consumer``): ConsumerGroupHeartbeat on a simulated clock.

A port, as far as a scenario needs it, of Kafka 4.2's consumer-group paths (confluentinc/kafka at
"Bump version to 4.2.0", ``a18251bae0``; ``group-coordinator/src/main/java/org/apache/kafka/coordinator/group/``):

* ``GroupMetadataManager.consumerGroupHeartbeat`` -- get or create the group and the member, write the
  member's ConsumerGroupMemberMetadata when it changed, bump the group epoch when the group is new or
  the subscribed topic names changed (``hasMemberSubscriptionChanged``, ``updateSubscriptionMetadata``),
  recompute the target assignment when the group epoch is ahead of the assignment epoch
  (``updateTargetAssignment``), then reconcile the member (``maybeReconcile``);
* ``consumerGroupLeave`` / ``consumerGroupFenceMembers`` / ``removeMember`` -- a member leaving (member
  epoch -1), its session expiring (``scheduleConsumerGroupSessionTimeout``) or its rebalance timeout
  passing while it holds partitions to revoke (``scheduleConsumerGroupRebalanceTimeout``): tombstones for
  its current assignment, target assignment and member metadata, then the group epoch bumped -- and no
  new target assignment in that write (the next heartbeat of a remaining member computes it);
* ``modern/TargetAssignmentBuilder.build`` -- one ConsumerGroupTargetAssignmentMember record per member
  whose target changed (members in Java ``HashMap`` order), then ConsumerGroupTargetAssignmentMetadata;
* ``modern/consumer/CurrentAssignmentBuilder`` -- the member state machine (STABLE,
  UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS) and ``computeNextAssignment``/``updateCurrentAssignment``;
* ``modern/consumer/ConsumerGroup`` -- members, target assignment, partition epochs, the group state
  (``maybeUpdateGroupState``: Empty, Assigning, Reconciling, Stable), the preferred server assignor
  (``computePreferredServerAssignor``), all rebuilt by replaying the records written (as Kafka does);
* ``assignor/RangeAssignor`` -- the ``range`` server assignor. Only ``range`` is modelled: ``uniform``
  (the broker's default) is not ported, so KIP-848 consumers in a scenario name
  ``group_remote_assignor: range``.

Records are built as ``GroupCoordinatorRecordHelpers`` builds them and encoded by
:func:`decoders.encode_record` (through :func:`coordinator.records.encode`). Kafka-version rules:

===============  =================================================================================
4.1 - 4.3        ConsumerGroupMetadata carries ``MetadataHash`` (KIP-1101); no PartitionMetadata
4.0              ConsumerGroupPartitionMetadata (type 4) before the epoch record whenever the
                 subscribed topics' metadata changes; no ``MetadataHash``
before 4.0       not modelled (3.7's early-access records had other layouts): a scenario with
                 KIP-848 consumers raises
===============  =================================================================================

Simplifications, on purpose (each is visible in the records only as timing):

* **the metadata hash is a stand-in**: Kafka hashes each subscribed topic's id, name, partition count and
  racks with streaming XXH3 (``Utils.computeTopicHash``/``computeGroupHash``); here the same inputs go
  through BLAKE2b. It changes exactly when Kafka's does (the subscribed topics or their partition counts
  change), but its value is not Kafka's;
* **topic ids**: a topic's ``topic_id`` from the scenario, else one derived from its name
  (:func:`topic_id_for`) -- stable across runs, never a real cluster's;
* **reconciliation is instantaneous on the client**: a member that receives a new assignment revokes and
  assigns at once (no commit, no callback time) and acknowledges with an immediate heartbeat, as the Java
  ``AsyncKafkaConsumer`` does once its reconciliation completes; otherwise members heartbeat every
  ``group.consumer.heartbeat.interval.ms``;
* **not modelled**: regular-expression subscriptions (ConsumerGroupRegularExpression records), static
  members (instance ids), rack-aware assignment, the ``uniform`` and ``simple`` assignors, topic metadata
  changes (partitions added to a subscribed topic), classic members inside a consumer group (online
  upgrade/downgrade), offset commits and group deletion of KIP-848 groups, member-epoch validation
  errors other than an unknown member (``throwIfConsumerGroupMemberEpochIsInvalid``).
"""

from __future__ import annotations

import base64
import hashlib
import random
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from coordinator.clock import SimulatedClock
from coordinator.errors import Errors
from coordinator.java_collections import JavaHashMap, to_int32
from coordinator.records import CoordinatorRecord, KafkaVersion

#: Record type names (``decoders`` spelling).
MEMBER_METADATA = "consumer_group_member_metadata"
GROUP_METADATA = "consumer_group_metadata"
PARTITION_METADATA = "consumer_group_partition_metadata"
TARGET_MEMBER = "consumer_group_target_assignment_member"
TARGET_METADATA = "consumer_group_target_assignment_metadata"
CURRENT_ASSIGNMENT = "consumer_group_current_member_assignment"

#: ``ConsumerGroupHeartbeatRequest.LEAVE_GROUP_MEMBER_EPOCH``.
LEAVE_GROUP_MEMBER_EPOCH = -1
RANGE_ASSIGNOR = "range"

#: (topic id, partition)
TopicIdPartition = tuple[str, int]
Partitions = frozenset[TopicIdPartition]
NO_PARTITIONS: Partitions = frozenset()


class MemberState(Enum):
    """``modern/MemberState.java``: the int8 ``State`` of ConsumerGroupCurrentMemberAssignmentValue."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2


class ConsumerGroupState(Enum):
    """``ConsumerGroup.ConsumerGroupState`` (Dead is never reached here: no deletion)."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"


@dataclass(frozen=True)
class ConsumerGroupConfig:
    """The broker's KIP-848 settings (``GroupCoordinatorConfig``, 4.2 defaults)."""

    session_timeout_ms: int = 45000  # group.consumer.session.timeout.ms
    heartbeat_interval_ms: int = 5000  # group.consumer.heartbeat.interval.ms


# ------------------------------------------------------------------------------ topic metadata

def topic_id_for(name: str, declared: str | None = None) -> str:
    """A topic's id in Kafka's text form (22 characters of URL-safe base64).

    ``declared`` (the scenario's ``topic_id``) wins; otherwise the id is derived from the name, never
    zero and never starting with '-' (``Uuid.randomUuid`` re-draws those; ``Uuid.toString``)."""
    if declared:
        return declared
    digest = hashlib.sha256(f"offsetlake-topic:{name}".encode()).digest()
    for i in range(0, 16):
        raw = digest[i:] + digest[:i]
        text = base64.urlsafe_b64encode(raw[:16]).rstrip(b"=").decode("ascii")
        if not text.startswith("-") and any(raw[:16]):
            return text
    raise AssertionError("unreachable")


def _uuid_bits(topic_id: str) -> int:
    return int.from_bytes(base64.urlsafe_b64decode(topic_id + "=="), "big")


class _Uuid:
    """A topic id as a ``HashMap`` key: ``Uuid.hashCode`` (xor of the 64-bit halves, folded to 32 bits)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def java_hash_code(self) -> int:
        bits = _uuid_bits(self.text)
        hilo = (bits >> 64) ^ (bits & ((1 << 64) - 1))
        return to_int32((hilo >> 32) ^ hilo)

    def __hash__(self) -> int:
        return hash(self.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Uuid) and other.text == self.text


def by_topic(partitions: Partitions, capacity: int | None = None) -> list[dict[str, Any]]:
    """``[{"topic_id", "partitions"}]`` as ``toTopicPartitions`` writes a ``Map<Uuid, Set<Integer>>``:
    topics in ``HashMap`` order (``capacity``: the map's initial capacity, None = default), partitions
    ascending (``RangeSet`` and small-``Integer`` ``HashSet`` iteration)."""
    grouped: dict[str, list[int]] = {}
    for topic_id, partition in sorted(partitions):
        grouped.setdefault(topic_id, []).append(partition)
    ordered: JavaHashMap[_Uuid, list[int]] = JavaHashMap(capacity)
    for topic_id, parts in grouped.items():
        ordered[_Uuid(topic_id)] = parts
    return [{"topic_id": key.text, "partitions": ordered[key]} for key in ordered]


def stand_in_metadata_hash(topics: Mapping[str, tuple[str, int]]) -> int:
    """The group's metadata hash over its subscribed topics (name -> (topic id, partitions)); 0 for none.

    Same inputs as ``Utils.computeTopicHash`` / ``computeGroupHash`` (magic byte, topic id, name,
    partition count; topics sorted by name) but BLAKE2b instead of XXH3 -- see the module docstring."""
    if not topics:
        return 0
    group = hashlib.blake2b(digest_size=8)
    for name in sorted(topics):
        topic_id, count = topics[name]
        topic = hashlib.blake2b(b"\x00" + _uuid_bits(topic_id).to_bytes(16, "big") + name.encode()
                                + count.to_bytes(4, "big"), digest_size=8)
        group.update(topic.digest())
    return int.from_bytes(group.digest(), "big", signed=True)


# ------------------------------------------------------------------------------------ members

@dataclass(frozen=True)
class ConsumerGroupMember:
    """``modern/consumer/ConsumerGroupMember`` (defaults of its ``Builder``)."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: frozenset[str] = frozenset()
    subscribed_topic_regex: str = ""
    server_assignor: str | None = None
    assigned: Partitions = NO_PARTITIONS
    pending_revocation: Partitions = NO_PARTITIONS

    def is_reconciled_to(self, assignment_epoch: int) -> bool:
        """``ModernGroupMember.isReconciledTo``."""
        return self.state is MemberState.STABLE and self.member_epoch == assignment_epoch

    def update_member_epoch(self, epoch: int, **changes: Any) -> ConsumerGroupMember:
        """``Builder.updateMemberEpoch``: the old epoch becomes the previous one."""
        return replace(self, member_epoch=epoch, previous_member_epoch=self.member_epoch, **changes)


@dataclass(frozen=True)
class HeartbeatRequest:
    """The ConsumerGroupHeartbeat fields a scenario's consumers send (``None``: not sent)."""

    group_id: str
    member_id: str
    member_epoch: int
    client_id: str
    client_host: str
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    server_assignor: str | None = None
    owned: Partitions | None = None


@dataclass(frozen=True)
class HeartbeatResponse:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    error: Errors = Errors.NONE
    #: The member's assigned partitions, when the response carries them.
    assignment: Partitions | None = None


class ConsumerGroupEvents:
    """Hooks for the timeline: the group after each write (``cause``: why the write bumped the epoch)."""

    def consumer_group_written(self, group: ConsumerGroup, at: int, bumped_epoch: bool, cause: str | None) -> None:
        ...


# -------------------------------------------------------------------------------------- group

class ConsumerGroup:
    """``modern/consumer/ConsumerGroup``: the in-memory group, changed only by :meth:`replay`."""

    def __init__(self, group_id: str):
        self.group_id = group_id
        self.group_epoch = 0
        self.metadata_hash = 0
        self.subscription_metadata: dict[str, tuple[str, int]] = {}  # 4.0's PartitionMetadata
        self.assignment_epoch = 0
        self.members: dict[str, ConsumerGroupMember] = {}
        self.target: dict[str, Partitions] = {}
        self.partition_epochs: dict[TopicIdPartition, int] = {}
        self.created = False  # materialised by its first record

    # -- ConsumerGroup's derived views ----------------------------------------------------------
    @property
    def state(self) -> ConsumerGroupState:
        """``maybeUpdateGroupState``."""
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def current_partition_epoch(self, tp: TopicIdPartition) -> int:
        """``currentPartitionEpoch``: the owner's member epoch, -1 if nobody owns it."""
        return self.partition_epochs.get(tp, -1)

    def preferred_server_assignor(self, member: ConsumerGroupMember | None,
                                  updated: ConsumerGroupMember | None) -> str | None:
        """``computePreferredServerAssignor``: the assignor most members name (ties: Kafka picks by its
        count map's order; the scenarios never tie), the updated member counted instead of the old one."""
        votes: Counter[str] = Counter(m.server_assignor for m in self.members.values() if m.server_assignor)
        if member is not None and member.member_id in self.members and member.server_assignor:
            votes[member.server_assignor] -= 1
        if updated is not None and updated.server_assignor:
            votes[updated.server_assignor] += 1
        votes = Counter({name: n for name, n in votes.items() if n > 0})
        return min(votes, key=lambda name: (-votes[name], name)) if votes else None

    def subscribed_topic_names(self, member: ConsumerGroupMember | None,
                               updated: ConsumerGroupMember | None) -> set[str]:
        """``computeSubscribedTopicNames``: the union of members' subscriptions with ``member`` replaced by
        ``updated`` (None: removed)."""
        members = dict(self.members)
        if member is not None:
            members.pop(member.member_id, None)
        if updated is not None:
            members[updated.member_id] = updated
        return {t for m in members.values() for t in m.subscribed_topic_names}

    # -- replay (GroupMetadataManager.replay for the consumer-group record types) -----------------
    def replay(self, record: CoordinatorRecord) -> None:
        key, value, kind = record.key, record.value, record.record_type
        self.created = True
        if kind == GROUP_METADATA:
            if value is not None:
                self.group_epoch = value["epoch"]
                self.metadata_hash = value.get("metadata_hash", 0)
        elif kind == PARTITION_METADATA:
            self.subscription_metadata = {} if value is None else {
                t["topic_name"]: (t["topic_id"], t["num_partitions"]) for t in value["topics"]}
        elif kind == MEMBER_METADATA:
            member_id = key["member_id"]
            if value is None:
                old = self.members.pop(member_id, None)
                if old is not None:
                    self._remove_partition_epochs(old)
            else:
                old = self.members.get(member_id) or ConsumerGroupMember(member_id)
                self.members[member_id] = replace(
                    old, instance_id=value["instance_id"], rack_id=value["rack_id"], client_id=value["client_id"],
                    client_host=value["client_host"], subscribed_topic_names=frozenset(value["subscribed_topic_names"]),
                    subscribed_topic_regex=value["subscribed_topic_regex"] or "",
                    rebalance_timeout_ms=value["rebalance_timeout_ms"], server_assignor=value["server_assignor"])
        elif kind == TARGET_MEMBER:
            if value is None:
                self.target.pop(key["member_id"], None)
            else:
                self.target[key["member_id"]] = _partitions(value["topic_partitions"])
        elif kind == TARGET_METADATA:
            self.assignment_epoch = 0 if value is None else value["assignment_epoch"]
        elif kind == CURRENT_ASSIGNMENT:
            member_id = key["member_id"]
            old = self.members.get(member_id)
            if old is None:
                return
            self._remove_partition_epochs(old)
            if value is None:  # the member's epoch becomes LEAVE_GROUP_MEMBER_EPOCH, nothing owned
                new = replace(old, member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                              previous_member_epoch=LEAVE_GROUP_MEMBER_EPOCH,
                              assigned=NO_PARTITIONS, pending_revocation=NO_PARTITIONS)
            else:
                new = replace(old, member_epoch=value["member_epoch"],
                              previous_member_epoch=value["previous_member_epoch"], state=MemberState(value["state"]),
                              assigned=_partitions(value["assigned_partitions"]),
                              pending_revocation=_partitions(value["partitions_pending_revocation"]))
                for tp in new.assigned | new.pending_revocation:
                    if self.partition_epochs.get(tp, -1) >= new.member_epoch:
                        raise AssertionError(f"partition {tp} already owned at epoch {self.partition_epochs[tp]}")
                    self.partition_epochs[tp] = new.member_epoch
            self.members[member_id] = new

    def _remove_partition_epochs(self, member: ConsumerGroupMember) -> None:
        for tp in member.assigned | member.pending_revocation:
            if self.partition_epochs.get(tp) == member.member_epoch:
                del self.partition_epochs[tp]


def _partitions(topics: list[dict]) -> Partitions:
    return frozenset((str(t["topic_id"]), p) for t in topics for p in t["partitions"])


# ----------------------------------------------------------------------------------- assignor

def range_assign(members: Mapping[str, ConsumerGroupMember], topics: Mapping[str, tuple[str, int]]
                 ) -> dict[str, Partitions]:
    """``assignor/RangeAssignor.assign`` (server side): members sorted by instance id, then member id
    (``sortMemberIds``, ``String.compareTo``); per topic, its subscribers take contiguous ranges in that
    order, the first ``numPartitions % numSubscribers`` one partition more. This is
    ``assignHeterogeneousGroup``; ``assignHomogeneousGroup`` gives the same result when every member
    subscribes to the same topics (each topic's subscribers are then all members)."""
    from coordinator.java_collections import java_string_key

    order = sorted(members, key=lambda m: (members[m].instance_id is None,
                                           java_string_key(members[m].instance_id or ""), java_string_key(m)))
    subscribers: dict[str, int] = Counter(t for m in order for t in members[m].subscribed_topic_names if t in topics)
    next_range: dict[str, int] = dict.fromkeys(subscribers, 0)
    handed_extra: dict[str, int] = dict.fromkeys(subscribers, 0)
    result: dict[str, Partitions] = {}
    for member_id in order:
        owned: set[TopicIdPartition] = set()
        for topic in members[member_id].subscribed_topic_names:
            if topic not in topics:
                continue  # Kafka raises for a topic that does not exist; the scenarios declare theirs
            topic_id, count = topics[topic]
            quota, extra = divmod(count, subscribers[topic])
            if handed_extra[topic] < extra:
                quota += 1
                handed_extra[topic] += 1
            start = next_range[topic]
            end = min(start + quota, count)
            next_range[topic] = end
            owned.update((topic_id, p) for p in range(start, end))
        result[member_id] = frozenset(owned)
    return result


# ------------------------------------------------------------------------ reconciliation

def next_assignment(member: ConsumerGroupMember, assignment_epoch: int, target: Partitions,
                    subscribed_topic_ids: set[str], has_subscription_changed: bool,
                    owned: Partitions | None, current_partition_epoch: Callable[[TopicIdPartition], int]
                    ) -> ConsumerGroupMember:
    """``CurrentAssignmentBuilder.build``: the member's next state towards ``target`` at ``assignment_epoch``."""

    def owns_revoked(pending: Partitions) -> bool:  # ownsRevokedPartitions
        return owned is None or bool(owned & pending)

    def update_current_assignment() -> ConsumerGroupMember:  # updateCurrentAssignment
        removed = frozenset(tp for tp in member.assigned if tp[0] not in subscribed_topic_ids)
        if not removed:
            return member
        assigned, pending = member.assigned - removed, member.pending_revocation | removed
        if pending and owns_revoked(pending):
            return replace(member, state=MemberState.UNREVOKED_PARTITIONS, assigned=assigned,
                           pending_revocation=pending)
        return replace(member, assigned=assigned)

    def compute_next_assignment() -> ConsumerGroupMember:  # computeNextAssignment
        wanted = frozenset(tp for tp in target if tp[0] in subscribed_topic_ids)
        assigned = member.assigned & wanted
        pending_revocation = member.assigned - assigned
        pending_assignment = wanted - assigned
        unreleased = frozenset(tp for tp in pending_assignment if current_partition_epoch(tp) != -1
                               and tp not in member.pending_revocation)
        pending_assignment -= unreleased
        if pending_revocation and owns_revoked(pending_revocation):
            return replace(member, state=MemberState.UNREVOKED_PARTITIONS, assigned=assigned,
                           pending_revocation=pending_revocation,
                           member_epoch=member.member_epoch, previous_member_epoch=member.member_epoch)
        state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
        return member.update_member_epoch(assignment_epoch, state=state, assigned=assigned | pending_assignment,
                                          pending_revocation=NO_PARTITIONS)

    if member.state is MemberState.STABLE:
        if member.member_epoch != assignment_epoch:
            return compute_next_assignment()
        return update_current_assignment() if has_subscription_changed else member
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if owns_revoked(member.pending_revocation):
            return update_current_assignment() if has_subscription_changed else member
        return compute_next_assignment()
    return compute_next_assignment()  # UNRELEASED_PARTITIONS


# ---------------------------------------------------------------------------- coordinator

@dataclass
class _Write:
    records: list[CoordinatorRecord] = field(default_factory=list)
    cause: str | None = None


class ConsumerGroupCoordinator:
    """KIP-848 groups of one simulated broker, appending to the classic coordinator's ``log``.

    ``topics()`` gives the cluster's topics now: name -> (topic id, partition count).
    ``append(group_id, records)`` stores records (partition and timestamp set by the caller).
    """

    def __init__(self, clock: SimulatedClock, kafka_version: KafkaVersion,
                 topics: Callable[[], dict[str, tuple[str, int]]],
                 append: Callable[[str, list[CoordinatorRecord]], None], config: ConsumerGroupConfig | None = None,
                 events: ConsumerGroupEvents | None = None):
        if kafka_version < KafkaVersion(4, 0):
            raise ValueError(f"KIP-848 consumer groups are simulated for Kafka 4.0 and later, not {kafka_version} "
                             "(3.7-3.9 wrote early-access record layouts)")
        self.clock = clock
        self.kafka_version = kafka_version
        self.topics = topics
        self._append = append
        self.config = config or ConsumerGroupConfig()
        self.events = events or ConsumerGroupEvents()
        self.groups: dict[str, ConsumerGroup] = {}

    # -- writes ------------------------------------------------------------------------------
    def _write(self, group: ConsumerGroup, write: _Write) -> None:
        if not write.records:
            return
        self._append(group.group_id, write.records)
        epoch = group.group_epoch
        for record in write.records:
            group.replay(record)
        self.groups[group.group_id] = group
        self.events.consumer_group_written(group, self.clock.now, group.group_epoch != epoch, write.cause)

    def _subscribed_metadata(self, names: set[str]) -> dict[str, tuple[str, int]]:
        known = self.topics()
        return {n: known[n] for n in names if n in known}

    def _bump_epoch(self, group: ConsumerGroup, epoch: int, names: set[str], records: list[CoordinatorRecord],
                    bump: bool) -> int:
        """``updateSubscriptionMetadata`` (4.2: metadata hash; 4.0: PartitionMetadata) and the epoch record."""
        metadata = self._subscribed_metadata(names)
        gid = {"group_id": group.group_id}
        if self.kafka_version >= KafkaVersion(4, 1):
            metadata_hash = stand_in_metadata_hash(metadata)
            bump = bump or metadata_hash != group.metadata_hash
            if bump:
                epoch += 1
                value = {"epoch": epoch, "metadata_hash": metadata_hash}
                records.append(CoordinatorRecord(GROUP_METADATA, gid, value, 0))
        else:
            if metadata != group.subscription_metadata:
                bump = True
                ordered: JavaHashMap[str, tuple[str, int]] = JavaHashMap(len(names))
                for name in sorted(metadata):
                    ordered[name] = metadata[name]
                records.append(CoordinatorRecord(PARTITION_METADATA, gid, {"topics": [
                    {"topic_id": ordered[n][0], "topic_name": n, "num_partitions": ordered[n][1],
                     "partition_metadata": []} for n in ordered]}, 0))
            if bump:
                epoch += 1
                records.append(CoordinatorRecord(GROUP_METADATA, gid, {"epoch": epoch}, 0))
        return epoch

    # -- ConsumerGroupHeartbeat --------------------------------------------------------------
    def heartbeat(self, request: HeartbeatRequest) -> HeartbeatResponse:
        """``GroupMetadataManager.consumerGroupHeartbeat`` (and ``consumerGroupLeave`` for epoch -1)."""
        interval = self.config.heartbeat_interval_ms
        group = self.groups.get(request.group_id)
        if request.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if group is None or request.member_id not in group.members:
                return HeartbeatResponse(request.member_id, request.member_epoch, interval, Errors.UNKNOWN_MEMBER_ID)
            self._fence(group, group.members[request.member_id], "member_left")
            return HeartbeatResponse(request.member_id, LEAVE_GROUP_MEMBER_EPOCH, interval)
        joining = request.member_epoch == 0
        if group is None:
            if not joining:
                return HeartbeatResponse(request.member_id, request.member_epoch, interval, Errors.GROUP_ID_NOT_FOUND)
            group = ConsumerGroup(request.group_id)  # materialised by the replay of its first records
        member = group.members.get(request.member_id)
        if member is None:
            if not joining:  # getOrMaybeCreateMember: UnknownMemberIdException
                return HeartbeatResponse(request.member_id, request.member_epoch, interval, Errors.UNKNOWN_MEMBER_ID)
            member = ConsumerGroupMember(request.member_id)
        write = _Write()
        records = write.records

        # 1. Create or update the member (ConsumerGroupMember.Builder.maybeUpdate*).
        updated = replace(
            member,
            rebalance_timeout_ms=request.rebalance_timeout_ms if request.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms,
            server_assignor=request.server_assignor if request.server_assignor is not None else member.server_assignor,
            subscribed_topic_names=frozenset(request.subscribed_topic_names)
            if request.subscribed_topic_names is not None else member.subscribed_topic_names,
            client_id=request.client_id, client_host=request.client_host)
        names_changed = False
        if updated != member:  # hasMemberSubscriptionChanged
            records.append(self._member_record(group.group_id, updated))
            names_changed = updated.subscribed_topic_names != member.subscribed_topic_names
        group_epoch = group.group_epoch
        if group_epoch == 0 or names_changed:
            names = group.subscribed_topic_names(member, updated)
            group_epoch = self._bump_epoch(group, group_epoch, names, records, bump=True)
            write.cause = "member_joined" if request.member_id not in group.members else "subscription_changed"

        # 2. Update the target assignment if the group epoch is ahead of the assignment epoch.
        if group_epoch > group.assignment_epoch:
            target = self._update_target_assignment(group, group_epoch, member, updated, records)
            assignment_epoch = group_epoch
        else:
            assignment_epoch = group.assignment_epoch
            target = group.target.get(updated.member_id, NO_PARTITIONS)

        # 3. Reconcile (maybeReconcile).
        reconciled = updated
        if names_changed or not updated.is_reconciled_to(assignment_epoch):
            subscribed_ids = {self.topics()[n][0] for n in updated.subscribed_topic_names if n in self.topics()}
            reconciled = next_assignment(updated, assignment_epoch, target, subscribed_ids, names_changed,
                                         request.owned, group.current_partition_epoch)
            if reconciled != updated:
                records.append(self._current_assignment_record(group.group_id, reconciled))
                key = f"kip848-rebalance-timeout:{group.group_id}:{reconciled.member_id}"
                if reconciled.state is MemberState.UNREVOKED_PARTITIONS:
                    self.clock.after(reconciled.rebalance_timeout_ms,
                                     lambda: self._rebalance_timeout(group.group_id, reconciled.member_id,
                                                                     reconciled.member_epoch), key=key)
                else:
                    self.clock.cancel(key)
        self._write(group, write)
        self._schedule_session_timeout(group.group_id, updated.member_id)
        full = request.rebalance_timeout_ms != -1 and request.subscribed_topic_names is not None \
            and request.owned is not None
        changed = reconciled.assigned != member.assigned
        return HeartbeatResponse(reconciled.member_id, reconciled.member_epoch, interval,
                                 assignment=reconciled.assigned if joining or full or changed else None)

    def _update_target_assignment(self, group: ConsumerGroup, group_epoch: int, member: ConsumerGroupMember,
                                  updated: ConsumerGroupMember, records: list[CoordinatorRecord]) -> Partitions:
        """``updateTargetAssignment`` + ``TargetAssignmentBuilder.build``."""
        assignor = group.preferred_server_assignor(member, updated)
        if assignor != RANGE_ASSIGNOR:
            raise NotImplementedError(f"server assignor {assignor or 'uniform (the default)'!r} is not modelled; "
                                      "only 'range' is (consumers name it with group_remote_assignor: range)")
        members = dict(group.members)
        members[updated.member_id] = updated
        # memberSpecs is a HashMap filled in the group's member order, then the updated member.
        specs: JavaHashMap[str, ConsumerGroupMember] = JavaHashMap()
        for member_id, m in members.items():
            specs[member_id] = m
        topics = self._subscribed_metadata({t for m in members.values() for t in m.subscribed_topic_names})
        new_target = range_assign(members, topics)
        for member_id in specs:
            partitions = new_target.get(member_id, NO_PARTITIONS)
            if group.target.get(member_id) != partitions:
                capacity = int(len({tp[0] for tp in partitions}) / 0.75 + 1)
                records.append(CoordinatorRecord(TARGET_MEMBER, {"group_id": group.group_id, "member_id": member_id},
                                                 {"topic_partitions": by_topic(partitions, capacity)}, 0))
        records.append(CoordinatorRecord(TARGET_METADATA, {"group_id": group.group_id},
                                         {"assignment_epoch": group_epoch}, 0))
        return new_target.get(updated.member_id, NO_PARTITIONS)

    @staticmethod
    def _member_record(group_id: str, member: ConsumerGroupMember) -> CoordinatorRecord:
        """``newConsumerGroupMemberSubscriptionRecord``: topic names sorted."""
        return CoordinatorRecord(MEMBER_METADATA, {"group_id": group_id, "member_id": member.member_id}, {
            "instance_id": member.instance_id, "rack_id": member.rack_id, "client_id": member.client_id,
            "client_host": member.client_host, "subscribed_topic_names": sorted(member.subscribed_topic_names),
            "subscribed_topic_regex": member.subscribed_topic_regex,
            "rebalance_timeout_ms": member.rebalance_timeout_ms, "server_assignor": member.server_assignor,
            "classic_member_metadata": None}, 0)

    @staticmethod
    def _current_assignment_record(group_id: str, member: ConsumerGroupMember) -> CoordinatorRecord:
        """``newConsumerGroupCurrentAssignmentRecord``."""
        return CoordinatorRecord(CURRENT_ASSIGNMENT, {"group_id": group_id, "member_id": member.member_id}, {
            "member_epoch": member.member_epoch, "previous_member_epoch": member.previous_member_epoch,
            "state": member.state.value, "assigned_partitions": by_topic(member.assigned),
            "partitions_pending_revocation": by_topic(member.pending_revocation)}, 0)

    # -- fencing --------------------------------------------------------------------------------
    def _fence(self, group: ConsumerGroup, member: ConsumerGroupMember, cause: str) -> None:
        """``consumerGroupFenceMembers`` for one member: ``removeMember``'s three tombstones, the
        subscription metadata without it, the group epoch bumped; timers cancelled."""
        gid, key = group.group_id, {"group_id": group.group_id, "member_id": member.member_id}
        write = _Write(cause=cause)
        write.records += [CoordinatorRecord(CURRENT_ASSIGNMENT, key, None, None),
                          CoordinatorRecord(TARGET_MEMBER, key, None, None),
                          CoordinatorRecord(MEMBER_METADATA, key, None, None)]
        self._bump_epoch(group, group.group_epoch, group.subscribed_topic_names(member, None), write.records, bump=True)
        self.clock.cancel(f"kip848-session-timeout:{gid}:{member.member_id}")
        self.clock.cancel(f"kip848-rebalance-timeout:{gid}:{member.member_id}")
        self._write(group, write)

    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        """``scheduleConsumerGroupSessionTimeout``: fenced when no heartbeat comes within the timeout."""
        def expire() -> None:
            group = self.groups.get(group_id)
            if group is not None and member_id in group.members:
                self._fence(group, group.members[member_id], "session_timeout")

        self.clock.after(self.config.session_timeout_ms, expire, key=f"kip848-session-timeout:{group_id}:{member_id}")

    def _rebalance_timeout(self, group_id: str, member_id: str, member_epoch: int) -> None:
        """``scheduleConsumerGroupRebalanceTimeout``: still revoking at the same epoch -> fenced."""
        group = self.groups.get(group_id)
        member = group.members.get(member_id) if group else None
        if group is not None and member is not None and member.member_epoch == member_epoch \
                and member.state is MemberState.UNREVOKED_PARTITIONS:
            self._fence(group, member, "rebalance_timeout")


def new_member_id(rng: random.Random) -> str:
    """``Uuid.randomUuid().toString()``, as a 4.x consumer generates its own member id (KIP-1082)."""
    while True:
        raw = rng.getrandbits(128).to_bytes(16, "big")
        text = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
        if any(raw) and not text.startswith("-"):
            return text


__all__ = [
    "ConsumerGroup",
    "ConsumerGroupConfig",
    "ConsumerGroupCoordinator",
    "ConsumerGroupEvents",
    "ConsumerGroupMember",
    "ConsumerGroupState",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "MemberState",
    "by_topic",
    "new_member_id",
    "next_assignment",
    "range_assign",
    "stand_in_metadata_hash",
    "topic_id_for",
]
