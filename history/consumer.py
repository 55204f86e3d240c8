"""KIP-848 consumer groups (``group.protocol=consumer``): their history, replayed from their records.

A KIP-848 group writes no GroupMetadata record. The coordinator persists its state as separate
records (``GroupCoordinatorRecordHelpers``; layouts in ``decoders/consumer_group.py``):

* ConsumerGroupMetadata (type 3): the **group epoch**, bumped when membership or subscriptions
  (or the subscribed topics' metadata) change; a tombstone when the group is deleted;
* ConsumerGroupMemberMetadata (5): one per member (client, host, instance id, subscription,
  server assignor); a tombstone when the member leaves or is fenced;
* ConsumerGroupTargetAssignmentMember (7) and ...Metadata (6): the **target assignment** the
  assignor computed and its **assignment epoch**. Only members whose target changed get a
  member record, so a member's target is its latest record at or before the epoch record;
* ConsumerGroupCurrentMemberAssignment (8): what each member owns now, its **member epoch**,
  the partitions it still has to give up (**pending revocation**) and its reconciliation state
  (0 STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS).

What the broker keeps in memory is exactly the replay of these records (that is how a new
coordinator loads a group), so the rows come from replaying them in log order and looking
at the group after each write. Records of one coordinator write share one append time; the
replay looks at the group after the last record of each append time, so a half-applied write
is never seen. The group state is Kafka's ``ConsumerGroup.maybeUpdateGroupState``: Empty
without members; Assigning while the group epoch is ahead of the assignment epoch; Reconciling
while a member is not ``isReconciledTo`` the assignment epoch (member epoch below it, or its
state not STABLE: partitions pending revocation, or waiting for partitions others still own);
Stable otherwise; and Dead on the group tombstone.

Topic ids, not names, identify partitions in these records: assignment rows keep the id, and their ``topic`` is the
name the group's own PartitionMetadata records give it (``GroupHistory.topic_names``; Kafka 4.1+ stopped writing
them, KIP-1101), else null: readers join the other names at read (``pipelines/sql_views/topic_names.sql``), so a
name that arrives late needs no replay.

Share groups (KIP-932, :mod:`history.share`) and streams groups (KIP-1071, :mod:`history.streams`) keep the same
records under other types and are the same replay (:class:`GroupReplay`) with their own states, record types
(:class:`RecordRoles`) and assigned units: Kafka builds them alike (``ModernGroup``, ``StreamsGroup``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import groupby
from typing import Any

from history import ASSIGNMENTS, GENERATIONS, MEMBERSHIP, REBALANCES, STATES, TASKS, TOPOLOGY

GROUP_TYPE = "consumer"
PROTOCOL_TYPE = "consumer"  # ConsumerGroup.protocolType(): ConsumerProtocol.PROTOCOL_TYPE
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID: "no topic id" (classic clients' commits)
STABLE_MEMBER = 0  # MemberState.STABLE

GROUP_METADATA = "consumer_group_metadata"
PARTITION_METADATA = "consumer_group_partition_metadata"
MEMBER_METADATA = "consumer_group_member_metadata"
TARGET_METADATA = "consumer_group_target_assignment_metadata"
TARGET_MEMBER = "consumer_group_target_assignment_member"
CURRENT_ASSIGNMENT = "consumer_group_current_member_assignment"
RECORD_TYPES = (GROUP_METADATA, PARTITION_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER,
                CURRENT_ASSIGNMENT, "consumer_group_regular_expression")

Partitions = frozenset[tuple[str, int]]  # (topic id, partition)
NO_PARTITIONS: Partitions = frozenset()
Units = frozenset[tuple[Any, ...]]  # what members are assigned: partitions here, tasks in streams groups


@dataclass(frozen=True)
class RecordRoles:
    """The record type names of one protocol, by the part of the group each record keeps."""

    group: str
    partition_metadata: str | None
    member: str
    target_metadata: str
    target_member: str
    current: str


CONSUMER_ROLES = RecordRoles(GROUP_METADATA, PARTITION_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER,
                             CURRENT_ASSIGNMENT)


# ------------------------------------------------------------------------------------- input

@dataclass(frozen=True)
class MemberInfo:
    """What a ConsumerGroupMemberMetadata record says about a member."""

    client_id: str | None = None
    client_host: str | None = None
    instance_id: str | None = None
    rack_id: str | None = None
    subscribed_topics: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int | None = None
    server_assignor: str | None = None
    session_timeout_ms: int | None = None  # only for classic-protocol members of a consumer group (upgrade path)


@dataclass(frozen=True)
class CurrentAssignment:
    """A ConsumerGroupCurrentMemberAssignment record's value."""

    member_epoch: int
    previous_member_epoch: int = 0
    state: int = STABLE_MEMBER
    assigned: Units = NO_PARTITIONS
    pending_revocation: Units = NO_PARTITIONS


@dataclass(frozen=True)
class GroupRecord:
    """One record of a KIP-848 group, as silver.consumer_group_records holds it.

    ``at_ms`` is the append time (epoch ms); ``position`` orders records within one append
    time ((source partition, source offset): one group's records share a partition).
    Exactly the fields of the record's type are set; ``value`` is None for a tombstone.
    """

    at_ms: int
    position: tuple[int, int]
    type: str
    member_id: str | None = None
    is_tombstone: bool = False
    epoch: int | None = None  # group epoch (type 3) or assignment epoch (type 6)
    metadata_hash: int | None = None
    member: MemberInfo | None = None
    target: Units | None = None
    current: CurrentAssignment | None = None
    topic_names: tuple[tuple[str, str], ...] = ()  # (topic id, name) of a PartitionMetadata record
    initialized_topics: tuple[str, ...] = ()  # topic ids a ShareGroupStatePartitionMetadata record says initialized


# ------------------------------------------------------------------------------------ output

@dataclass
class Generation:
    incarnation: int
    generation: int
    member_count: int
    protocol: str | None
    started_at: int
    stable_at: int | None = None
    ended_at: int | None = None
    end_reason: str | None = None
    records: int = 0


@dataclass
class Membership:
    member_id: str
    valid_from: int
    first_generation: int
    info: MemberInfo
    valid_to: int | None = None
    last_generation: int = 0
    first_member_epoch: int | None = None
    last_member_epoch: int | None = None


@dataclass
class Assignment:
    member_id: str
    kind: str  # 'current' | 'target' | 'pending_revocation'
    generation: int
    topic_id: str
    partition: int
    client_id: str | None
    group_instance_id: str | None
    valid_from: int
    valid_to: int | None = None
    task_role: str | None = None  # streams groups: 'active' | 'standby' | 'warmup' (topic_id is the subtopology)


@dataclass
class State:
    state: str
    at: int
    generation: int | None
    assignment_epoch: int | None
    evidence: str
    until: int | None = None


@dataclass
class Rebalance:
    from_generation: int
    to_generation: int
    started_at: int
    last_stable_at: int | None
    join_completed_at: int | None
    stable_at: int
    members_before: int
    members_after: int
    members_joined: list[str]
    members_left: list[str]
    members_kept: int
    partitions_moved: int
    partitions_kept: int
    likely_cause: str
    protocol: str | None


@dataclass
class GroupHistory:
    """Every gold row of one KIP-848 group (times in epoch ms), and the topic names its records gave."""

    generations: list[Generation] = field(default_factory=list)
    membership: list[Membership] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    states: list[State] = field(default_factory=list)
    rebalances: list[Rebalance] = field(default_factory=list)
    topic_names: dict[str, str] = field(default_factory=dict)


# ------------------------------------------------------------------------------------ replay

def _subscription(info: MemberInfo) -> tuple[tuple[str, ...], str | None]:
    """What a member subscribed to: a change of it closes the member's gold.group_membership row.

    KIP-848's ConsumerGroupMemberMetadataValue carries ``SubscribedTopicNames`` and
    ``SubscribedTopicRegex``. The coordinator rewrites the record whenever a heartbeat changes the
    member, and bumps the group epoch when one of these two fields changed
    (``GroupMetadataManager.consumerGroupHeartbeat`` via ``hasMemberSubscriptionChanged``). The
    names are a set on the broker (``ConsumerGroupMember.subscribedTopicNames``), written in no
    particular order, so they compare sorted. A record that changes other fields (client host,
    rack, rebalance timeout, server assignor) updates the row in place.
    """
    return tuple(sorted(info.subscribed_topics)), info.subscribed_topic_regex or None


def _identity(member_id: str, info: MemberInfo) -> str:
    """A static member is its instance id across member ids; a dynamic one is its member id."""
    return f"i:{info.instance_id}" if info.instance_id else f"m:{member_id}"


@dataclass
class Snapshot:
    """The group at one moment (members, owners, subscriptions): what epoch bumps and rebalances are measured by."""

    generation: int
    at: int
    identities: dict[str, str]  # identity -> member id
    owners: dict[tuple[Any, ...], str]  # (topic id, partition), or a streams task -> identity
    subscriptions: dict[str, Any]  # identity -> what it asks for (GroupReplay.wants)
    metadata_hash: int | None


class GroupReplay:
    """The coordinator's in-memory view of one KIP-848 consumer group, rebuilt record by record.

    Share and streams groups subclass it: their record types (``roles``), what a member asks for (``wants``), their
    states (``state_now``), when a rebalance is complete (``reconciled``) and how an assigned unit becomes a row.
    """

    roles: RecordRoles = CONSUMER_ROLES
    wants_changed = "subscription_changed"  # likely_cause when what members ask for changed
    history_type: type[GroupHistory] = GroupHistory

    def __init__(self, history: GroupHistory) -> None:
        self.out = history
        self.incarnation = 0
        self._reset()

    def _reset(self) -> None:
        self.group_epoch: int | None = None
        self.metadata_hash: int | None = None
        self.assignment_epoch = 0
        self.assignment_at: int | None = None
        self.members: dict[str, MemberInfo] = {}
        self.targets: dict[str, Partitions] = {}
        self.currents: dict[str, CurrentAssignment] = {}
        self.generation: Generation | None = None
        self.stays: dict[str, Membership] = {}
        self.facts: dict[tuple[Any, ...], Assignment] = {}
        self.state: State | None = None
        self.settled: Snapshot | None = None
        self.bump_at: int | None = None  # first epoch bump since the group last settled

    # -- one append time ---------------------------------------------------------------

    def apply_batch(self, at: int, records: Sequence[GroupRecord]) -> None:
        before, generation = self._snapshot(at), self.generation
        for record in records:
            self._apply(at, record)
        # A write counts for the epoch current after it (its own bump), or before it (the tombstone).
        counted = self.generation or generation
        if counted is not None:
            counted.records += len(records)
        if self.group_epoch is None:
            return  # nothing group-level known yet (e.g. a log compacted mid-way): wait for the epoch
        self._track_members(at)
        self._track_assignments(at)
        self._track_state(at, before)

    def _apply(self, at: int, r: GroupRecord) -> None:
        roles = self.roles
        if r.type == roles.group:
            if r.is_tombstone:
                self._dead(at)
            else:
                self.metadata_hash = r.metadata_hash
                if r.epoch is not None and r.epoch != self.group_epoch:
                    self._bump(at, r.epoch)
        elif r.type == roles.partition_metadata:
            self.out.topic_names.update(dict(r.topic_names))
        elif r.type == roles.member and r.member_id is not None:
            if r.is_tombstone or r.member is None:
                self.members.pop(r.member_id, None)
            else:
                self.members[r.member_id] = r.member
        elif r.type == roles.target_metadata:
            if r.is_tombstone:
                self.assignment_epoch, self.assignment_at = 0, None
            elif r.epoch is not None:
                if r.epoch != self.assignment_epoch:
                    self.assignment_at = at
                self.assignment_epoch = r.epoch
        elif r.type == roles.target_member and r.member_id is not None:
            if r.is_tombstone or r.target is None:
                self.targets.pop(r.member_id, None)
            else:
                self.targets[r.member_id] = r.target
        elif r.type == roles.current and r.member_id is not None:
            if r.is_tombstone or r.current is None:
                self.currents.pop(r.member_id, None)
            else:
                self.currents[r.member_id] = r.current

    def _bump(self, at: int, epoch: int) -> None:
        if self.generation is not None:
            self.generation.ended_at = at
        self.generation = Generation(self.incarnation, epoch, 0, None, at)
        self.out.generations.append(self.generation)
        self.group_epoch = epoch
        if self.bump_at is None:
            self.bump_at = at

    def _dead(self, at: int) -> None:
        """The group tombstone: everything open ends; the next records start a new incarnation."""
        if self.generation is not None:
            self.generation.ended_at = at
            self.generation.end_reason = "group_removed"
        for stay in self.stays.values():
            stay.valid_to = at
        for fact in self.facts.values():
            fact.valid_to = at
        if self.state is not None:
            self.state.until = at
        self.out.states.append(State("Dead", at, None, None, "tombstone"))
        self.incarnation += 1
        self._reset()
        self.state = self.out.states[-1]

    # -- what changed after a batch ------------------------------------------------------

    def _track_members(self, at: int) -> None:
        epoch = self.group_epoch or 0
        for member_id in [m for m in self.stays if m not in self.members]:
            self.stays.pop(member_id).valid_to = at
        for member_id, info in self.members.items():
            stay = self.stays.get(member_id)
            if stay is not None and self.wants(stay.info) != self.wants(info):
                stay.valid_to = at  # the member stays; its row for the old subscription ends here
                stay = None
            if stay is None:
                stay = Membership(member_id, at, epoch, info, last_generation=epoch)
                self.stays[member_id] = stay
                self.out.membership.append(stay)
            stay.info, stay.last_generation = info, epoch
            current = self.currents.get(member_id)
            if current is not None:
                epochs = [e for e in (stay.first_member_epoch, stay.last_member_epoch) if e is not None]
                stay.first_member_epoch = min([current.member_epoch, *epochs])
                stay.last_member_epoch = max([current.member_epoch, *epochs])
        if self.generation is not None and self.generation.started_at == at:
            self.generation.member_count = len(self.members)
            self.generation.protocol = self._assignor()

    def wants(self, info: MemberInfo) -> Any:
        """What a member asks for: a change of it bumps the group epoch and starts the member's next row."""
        return _subscription(info)

    def _assignor(self) -> str | None:
        """The server assignor most members ask for (``ConsumerGroup.computePreferredServerAssignor``).

        None when no member names one: the broker's default (first of ``group.consumer.assignors``)
        is not in any record.
        """
        votes = Counter(info.server_assignor for info in self.members.values() if info.server_assignor)
        return min(votes, key=lambda name: (-votes[name], name)) if votes else None

    def _track_assignments(self, at: int) -> None:
        now: set[tuple[Any, ...]] = set()
        for member_id, current in self.currents.items():
            now.update((member_id, "current", current.member_epoch, *u) for u in current.assigned)
            now.update((member_id, "pending_revocation", current.member_epoch, *u) for u in current.pending_revocation)
        if self.assignment_epoch > 0:
            for member_id, target in self.targets.items():
                now.update((member_id, "target", self.assignment_epoch, *u) for u in target)
        for key in [k for k in self.facts if k not in now]:
            self.facts.pop(key).valid_to = at
        for key in sorted(now - self.facts.keys()):
            member_id, kind, generation, *unit = key
            info = self.members.get(member_id, MemberInfo())
            fact = self.fact(member_id, kind, generation, tuple(unit), info, at)
            self.facts[key] = fact
            self.out.assignments.append(fact)

    def fact(self, member_id: str, kind: str, generation: int, unit: tuple[Any, ...], info: MemberInfo,
             at: int) -> Assignment:
        """One assigned unit as a row: a partition (topic id, partition)."""
        topic_id, partition = unit
        return Assignment(member_id, kind, generation, topic_id, partition, info.client_id, info.instance_id, at)

    def state_now(self) -> tuple[str, str]:
        """Kafka's ``ConsumerGroup.maybeUpdateGroupState``, with the reason it holds."""
        if not self.members:
            return "Empty", "no_members"
        if (self.group_epoch or 0) > self.assignment_epoch:
            return "Assigning", "group_epoch_above_assignment_epoch"
        for member_id in self.members:
            current = self.currents.get(member_id)
            if current is None or current.state != STABLE_MEMBER or current.member_epoch != self.assignment_epoch:
                return "Reconciling", "member_not_reconciled"
        return "Stable", "members_reconciled"

    def reconciled(self, state: str) -> bool:
        """Every member reached the target of the current group epoch: the rebalance is complete."""
        return state == "Stable"

    def _track_state(self, at: int, before: Snapshot) -> None:
        name, evidence = self.state_now()
        reconciled = self.reconciled(name)
        previous = self.state
        if previous is None or previous.state != name or previous.generation != self.group_epoch:
            if previous is not None:
                previous.until = at
            self.state = State(name, at, self.group_epoch, self.assignment_epoch, evidence)
            self.out.states.append(self.state)
        if reconciled and self.generation is not None and self.generation.stable_at is None \
                and self.generation.generation == self.group_epoch:
            self.generation.stable_at = at
        if self.generation is not None and self.generation.started_at == at and len(self.out.generations) > 1:
            ended = self.out.generations[-2]
            if ended.incarnation == self.incarnation and ended.end_reason is None:
                ended.end_reason = self.cause(before, self._snapshot(at), ended.started_at)
        if (reconciled or name == "Empty") and (self.settled is None or self.settled.generation != self.group_epoch):
            self._settle(at, reconciled)

    def _snapshot(self, at: int) -> Snapshot:
        identities = {_identity(m, info): m for m, info in self.members.items()}
        owners = {tp: _identity(m, self.members.get(m, MemberInfo()))
                  for m, current in self.currents.items() for tp in self.owned(current)}
        subscriptions = {_identity(m, info): self.wants(info) for m, info in self.members.items()}
        return Snapshot(self.group_epoch or 0, at, identities, owners, subscriptions, self.metadata_hash)

    def cause(self, before: Snapshot, after: Snapshot, since: int) -> str:
        """Why the epoch moved from ``before`` to ``after`` (:func:`likely_cause`); ``since``: when the ended epoch
        or the last settled one began, for causes only a record in between tells."""
        return likely_cause(before, after, self.wants_changed)

    def owned(self, current: CurrentAssignment) -> Units:
        """What a member owns, for the rebalance's moved and kept counts."""
        return current.assigned | current.pending_revocation

    def _settle(self, at: int, reconciled: bool) -> None:
        """The group is reconciled (Stable) or Empty at a new group epoch: one completed rebalance."""
        after = self._snapshot(at)
        before = self.settled or Snapshot(0, at, {}, {}, {}, None)  # a new group: epoch 0, no members
        common = before.owners.keys() & after.owners.keys()
        kept = sum(1 for tp in common if before.owners[tp] == after.owners[tp])
        self.out.rebalances.append(Rebalance(
            from_generation=before.generation, to_generation=after.generation,
            started_at=self.bump_at if self.bump_at is not None else at,
            last_stable_at=self.settled.at if self.settled else None,
            join_completed_at=self.assignment_at if reconciled else None, stable_at=at,
            members_before=len(before.identities), members_after=len(after.identities),
            members_joined=sorted(after.identities[i] for i in after.identities.keys() - before.identities.keys()),
            members_left=sorted(before.identities[i] for i in before.identities.keys() - after.identities.keys()),
            members_kept=len(before.identities.keys() & after.identities.keys()),
            partitions_moved=len(common) - kept, partitions_kept=kept,
            likely_cause=self.cause(before, after, before.at),
            protocol=self.generation.protocol if self.generation else None,
        ))
        self.settled = after
        self.bump_at = None

    def finish(self) -> GroupHistory:
        return self.out


def likely_cause(before: Snapshot, after: Snapshot, wants_changed: str = "subscription_changed") -> str:
    """Why the group epoch moved between two views of the group, as far as records tell.

    The coordinator bumps the epoch when a member joins, leaves or is fenced (LeaveGroup with
    epoch -1, session timeout, rebalance timeout: the records look the same), when a member's
    subscription changes, or when the subscribed topics' metadata changes (partitions added;
    ``MetadataHash``). Same vocabulary as the classic groups' ``rebalance_events.likely_cause``; ``wants_changed``
    names a change of what members ask for (a streams member's topology: 'topology_changed').
    """
    joined = after.identities.keys() - before.identities.keys()
    left = before.identities.keys() - after.identities.keys()
    if joined and left:
        return "members_joined_and_left"
    if joined:
        return "member_joined"
    if left:
        return "member_left_or_vanished"
    if before.subscriptions != after.subscriptions:
        return wants_changed
    if before.metadata_hash != after.metadata_hash:
        return "metadata_changed"
    return "unknown"


def derive(records: Iterable[GroupRecord], replay_type: type[GroupReplay] = GroupReplay) -> GroupHistory:
    """Replay one group's records (any order; sorted here by append time and position)."""
    replay = replay_type(replay_type.history_type())
    ordered = sorted(records, key=_log_order)
    for at, batch in groupby(ordered, key=lambda r: r.at_ms):
        replay.apply_batch(at, list(batch))
    return replay.finish()


def _log_order(record: GroupRecord) -> tuple[int, tuple[int, int]]:
    return record.at_ms, record.position


# ------------------------------------------------------------------------- rows for the tables

def replay(records: Iterable[GroupRecord]) -> dict[str, list[dict[str, Any]]]:
    """Every row of one KIP-848 group, per kind (``history.KINDS``), from its records (any order). Times are epoch
    ms; assignment rows carry the topic id and a null ``topic``; rebalance rows lack the storm columns."""
    return rows_of(derive(records))


def merged_assignments(history: GroupHistory) -> list[Assignment]:
    """The assignment facts, one per unit, member, kind and epoch: a fact that came back within one epoch is one
    row, from its first start to its last end."""
    merged: dict[tuple[Any, ...], Assignment] = {}
    for a in history.assignments:
        key = (a.generation, a.member_id, a.kind, a.task_role, a.topic_id, a.partition)
        if key in merged:
            merged[key].valid_to = a.valid_to
        else:
            merged[key] = replace(a)  # a copy: the replay's own fact is left as it is
    return list(merged.values())


def rows_of(history: GroupHistory, group_type: str = GROUP_TYPE,
            protocol_type: str = PROTOCOL_TYPE) -> dict[str, list[dict[str, Any]]]:
    """The rows of :func:`replay` from a replayed :class:`GroupHistory` (share groups: ``group_type`` 'share')."""
    kind = {"group_type": group_type}
    return {
        GENERATIONS: [{
            "incarnation": g.incarnation, "generation": g.generation, "protocol_type": protocol_type,
            "protocol": g.protocol, "leader": None, "member_count": g.member_count, "started_at": g.started_at,
            "stable_at": g.stable_at, "ended_at": g.ended_at,
            "end_reason": g.end_reason if g.ended_at is not None else None, "records": g.records, **kind,
        } for g in history.generations],
        MEMBERSHIP: [{
            "member_id": m.member_id, "group_instance_id": m.info.instance_id, "client_id": m.info.client_id,
            "client_host": m.info.client_host, "session_timeout_ms": m.info.session_timeout_ms,
            "rebalance_timeout_ms": m.info.rebalance_timeout_ms, "valid_from": m.valid_from, "valid_to": m.valid_to,
            "first_generation": m.first_generation, "last_generation": m.last_generation,
            "rack_id": m.info.rack_id, "subscribed_topics": list(m.info.subscribed_topics),
            "subscribed_topic_regex": m.info.subscribed_topic_regex or None,
            "server_assignor": m.info.server_assignor, "first_member_epoch": m.first_member_epoch,
            "last_member_epoch": m.last_member_epoch, "process_id": None, "user_endpoint": None,
            "topology_epoch": None, **kind,  # streams members' (history.streams)
        } for m in history.membership],
        ASSIGNMENTS: [{
            "topic": history.topic_names.get(a.topic_id), "topic_id": a.topic_id, "partition": a.partition,
            "member_id": a.member_id, "client_id": a.client_id, "group_instance_id": a.group_instance_id,
            "generation": a.generation,
            "valid_from": a.valid_from, "valid_to": a.valid_to, "assignment_kind": a.kind, **kind,
        } for a in merged_assignments(history)],
        STATES: [{"state": s.state, "at": s.at, "until": s.until, "generation": s.generation, "evidence": s.evidence,
                  "assignment_epoch": s.assignment_epoch, **kind} for s in history.states],
        REBALANCES: [rebalance_row(r, group_type) for r in history.rebalances],
        TASKS: [], TOPOLOGY: [],  # streams groups' (history.streams)
    }


def rebalance_row(r: Rebalance, group_type: str = GROUP_TYPE) -> dict[str, Any]:
    # No member stops before the first bump (members learn of a new target at their next heartbeat); nobody was
    # there to stop in a group that had no members.
    stopped = r.members_before > 0
    return {
        "event_type": "rebalance", "from_generation": r.from_generation, "to_generation": r.to_generation,
        "last_stable_at": r.last_stable_at, "join_completed_at": r.join_completed_at, "stable_at": r.stable_at,
        "stopped_at_lower_bound": r.started_at if stopped else None,
        "stopped_at_upper_bound": r.stable_at if stopped else None,
        "stopped_ms_lower_bound": 0 if stopped else None,
        "stopped_ms_upper_bound": r.stable_at - r.started_at if stopped else None,
        "members_before": r.members_before, "members_after": r.members_after, "members_joined": r.members_joined,
        "members_left": r.members_left, "members_kept": r.members_kept, "static_restarts": [],
        "partitions_moved": r.partitions_moved, "partitions_kept": r.partitions_kept, "likely_cause": r.likely_cause,
        "triggered_by": None, "protocol": r.protocol, "rebalance_protocol": "cooperative",
        "group_type": group_type, "started_at": r.started_at,
    }
