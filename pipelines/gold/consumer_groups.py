"""KIP-848 consumer groups (``group.protocol=consumer``): their gold rows, replayed from their records.

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
coordinator loads a group), so the gold rows come from replaying them in log order and looking
at the group after each write. Records of one coordinator write share one append time; the
replay looks at the group after the last record of each append time, so a half-applied write
is never seen. The group state is Kafka's ``ConsumerGroup.maybeUpdateGroupState``: Empty
without members; Assigning while the group epoch is ahead of the assignment epoch; Reconciling
while a member is not ``isReconciledTo`` the assignment epoch (member epoch below it, or its
state not STABLE: partitions pending revocation, or waiting for partitions others still own);
Stable otherwise; and Dead on the group tombstone.

Topic ids, not names, identify partitions in these records; names are joined later
(:func:`topic_names`), and an id without a name is kept with a null name.

The core (:func:`derive`) is plain Python over :class:`GroupRecord` objects, tested with
hand-built sequences. Two ways to run it in Spark: :func:`consumer_group_tables` replays every group from
all its records with ``applyInPandas`` (a rebuild, and the reference); a query of its own, run by each
gold refresh (:func:`replay_stream`), keeps each group's replay in Spark's state store (:class:`GroupReplay`
over ``transformWithStateInPandas``, issue 14 item 1) and advances it by the new records alone
(:func:`advance_replay`), giving the rows :func:`derive` of everything gives.
"""

from __future__ import annotations

import gc
import json
import pickle
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import groupby
from typing import TYPE_CHECKING, Any

from pyspark.sql import types as T
from pyspark.sql.streaming.stateful_processor import StatefulProcessor

from pipelines.gold.group_generations import TABLE as GENERATIONS
from pipelines.gold.group_membership import TABLE as MEMBERSHIP
from pipelines.gold.group_state_history import TABLE as STATES
from pipelines.gold.partition_assignments import TABLE as ASSIGNMENTS
from pipelines.gold.rebalance_events import TABLE as EVENTS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from conf.settings import Settings


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
    assigned: Partitions = NO_PARTITIONS
    pending_revocation: Partitions = NO_PARTITIONS


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
    target: Partitions | None = None
    current: CurrentAssignment | None = None
    topic_names: tuple[tuple[str, str], ...] = ()  # (topic id, name) of a PartitionMetadata record


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
class _Snapshot:
    """The group at one moment (members, owners, subscriptions): what epoch bumps and rebalances are measured by."""

    generation: int
    at: int
    identities: dict[str, str]  # identity -> member id
    owners: dict[tuple[str, int], str]  # (topic id, partition) -> identity
    subscriptions: dict[str, tuple[tuple[str, ...], str | None]]
    metadata_hash: int | None


class _Replay:
    """The coordinator's in-memory view of one group, rebuilt record by record."""

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
        self.facts: dict[tuple[str, str, int, str, int], Assignment] = {}
        self.state: State | None = None
        self.settled: _Snapshot | None = None
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
        if r.type == GROUP_METADATA:
            if r.is_tombstone:
                self._dead(at)
            else:
                self.metadata_hash = r.metadata_hash
                if r.epoch is not None and r.epoch != self.group_epoch:
                    self._bump(at, r.epoch)
        elif r.type == PARTITION_METADATA:
            self.out.topic_names.update(dict(r.topic_names))
        elif r.type == MEMBER_METADATA and r.member_id is not None:
            if r.is_tombstone or r.member is None:
                self.members.pop(r.member_id, None)
            else:
                self.members[r.member_id] = r.member
        elif r.type == TARGET_METADATA:
            if r.is_tombstone:
                self.assignment_epoch, self.assignment_at = 0, None
            elif r.epoch is not None:
                if r.epoch != self.assignment_epoch:
                    self.assignment_at = at
                self.assignment_epoch = r.epoch
        elif r.type == TARGET_MEMBER and r.member_id is not None:
            if r.is_tombstone or r.target is None:
                self.targets.pop(r.member_id, None)
            else:
                self.targets[r.member_id] = r.target
        elif r.type == CURRENT_ASSIGNMENT and r.member_id is not None:
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
            if stay is not None and _subscription(stay.info) != _subscription(info):
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

    def _assignor(self) -> str | None:
        """The server assignor most members ask for (``ConsumerGroup.computePreferredServerAssignor``).

        None when no member names one: the broker's default (first of ``group.consumer.assignors``)
        is not in any record.
        """
        votes = Counter(info.server_assignor for info in self.members.values() if info.server_assignor)
        return min(votes, key=lambda name: (-votes[name], name)) if votes else None

    def _track_assignments(self, at: int) -> None:
        now: set[tuple[str, str, int, str, int]] = set()
        for member_id, current in self.currents.items():
            now.update((member_id, "current", current.member_epoch, t, p) for t, p in current.assigned)
            now.update((member_id, "pending_revocation", current.member_epoch, t, p)
                       for t, p in current.pending_revocation)
        if self.assignment_epoch > 0:
            for member_id, target in self.targets.items():
                now.update((member_id, "target", self.assignment_epoch, t, p) for t, p in target)
        for key in [k for k in self.facts if k not in now]:
            self.facts.pop(key).valid_to = at
        for key in sorted(now - self.facts.keys()):
            member_id, kind, generation, topic_id, partition = key
            info = self.members.get(member_id, MemberInfo())
            fact = Assignment(member_id, kind, generation, topic_id, partition, info.client_id, info.instance_id, at)
            self.facts[key] = fact
            self.out.assignments.append(fact)

    def _state_now(self) -> tuple[str, str]:
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

    def _track_state(self, at: int, before: _Snapshot) -> None:
        name, evidence = self._state_now()
        previous = self.state
        if previous is None or previous.state != name or previous.generation != self.group_epoch:
            if previous is not None:
                previous.until = at
            self.state = State(name, at, self.group_epoch, self.assignment_epoch, evidence)
            self.out.states.append(self.state)
        if name == "Stable" and self.generation is not None and self.generation.stable_at is None \
                and self.generation.generation == self.group_epoch:
            self.generation.stable_at = at
        if self.generation is not None and self.generation.started_at == at and len(self.out.generations) > 1:
            ended = self.out.generations[-2]
            if ended.incarnation == self.incarnation and ended.end_reason is None:
                ended.end_reason = likely_cause(before, self._snapshot(at))
        if name in ("Stable", "Empty") and (self.settled is None or self.settled.generation != self.group_epoch):
            self._settle(at, name)

    def _snapshot(self, at: int) -> _Snapshot:
        identities = {_identity(m, info): m for m, info in self.members.items()}
        owners = {tp: _identity(m, self.members.get(m, MemberInfo()))
                  for m, current in self.currents.items() for tp in current.assigned | current.pending_revocation}
        subscriptions = {_identity(m, info): (tuple(sorted(info.subscribed_topics)), info.subscribed_topic_regex)
                         for m, info in self.members.items()}
        return _Snapshot(self.group_epoch or 0, at, identities, owners, subscriptions, self.metadata_hash)

    def _settle(self, at: int, name: str) -> None:
        """The group is Stable or Empty at a new group epoch: one completed rebalance."""
        after = self._snapshot(at)
        before = self.settled or _Snapshot(0, at, {}, {}, {}, None)  # a new group: epoch 0, no members
        common = before.owners.keys() & after.owners.keys()
        kept = sum(1 for tp in common if before.owners[tp] == after.owners[tp])
        self.out.rebalances.append(Rebalance(
            from_generation=before.generation, to_generation=after.generation,
            started_at=self.bump_at if self.bump_at is not None else at,
            last_stable_at=self.settled.at if self.settled else None,
            join_completed_at=self.assignment_at if name == "Stable" else None, stable_at=at,
            members_before=len(before.identities), members_after=len(after.identities),
            members_joined=sorted(after.identities[i] for i in after.identities.keys() - before.identities.keys()),
            members_left=sorted(before.identities[i] for i in before.identities.keys() - after.identities.keys()),
            members_kept=len(before.identities.keys() & after.identities.keys()),
            partitions_moved=len(common) - kept, partitions_kept=kept,
            likely_cause=likely_cause(before, after),
            protocol=self.generation.protocol if self.generation else None,
        ))
        self.settled = after
        self.bump_at = None

    def finish(self) -> GroupHistory:
        return self.out


def likely_cause(before: _Snapshot, after: _Snapshot) -> str:
    """Why the group epoch moved between two views of the group, as far as records tell.

    The coordinator bumps the epoch when a member joins, leaves or is fenced (LeaveGroup with
    epoch -1, session timeout, rebalance timeout: the records look the same), when a member's
    subscription changes, or when the subscribed topics' metadata changes (partitions added;
    ``MetadataHash``). Same vocabulary as the classic groups' ``rebalance_events.likely_cause``.
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
        return "subscription_changed"
    if before.metadata_hash != after.metadata_hash:
        return "metadata_changed"
    return "unknown"


def derive(records: Iterable[GroupRecord]) -> GroupHistory:
    """Replay one group's records (any order; sorted here by append time and position)."""
    replay = _Replay(GroupHistory())
    ordered = sorted(records, key=_log_order)
    for at, batch in groupby(ordered, key=lambda r: r.at_ms):
        replay.apply_batch(at, list(batch))
    return replay.finish()


def _log_order(record: GroupRecord) -> tuple[int, tuple[int, int]]:
    return record.at_ms, record.position


# ------------------------------------------------------------ the replay resumed (Spark's state store)

#: The shape of what ``ReplayTail`` pickles. Bumped when ``_Replay`` or the records change their fields: a state of
#: another format is refused (``ReplayTail.loads``) rather than unpickled into a replay that would run wrong.
REPLAY_STATE_FORMAT = 1


class ReplayStateError(RuntimeError):
    """The state store holds a group's replay in a format this offsetlake does not read."""


@dataclass(frozen=True)
class ReplayTail:
    """What the state store keeps of one group between micro-batches (issue 14, item 1): the replay as it stood
    before the group's newest append time, pickled, and that append time's records.

    Not the replay after them: :func:`derive` applies every record of one append time as one write (a coordinator
    write shares one append time) and looks at the group only after it. Records of that same millisecond may
    still come in a later micro-batch (two writes in one millisecond, ingested apart); resumed from before that
    time, the replay applies them with the ones kept, as :func:`derive` of everything does.

    A pickle, not JSON: the replay is a graph of the coordinator's view and the rows it has produced (an open
    generation is both the replay's ``generation`` and an element of ``out.generations``), which pickle keeps
    and a JSON layout would have to rebuild by hand. It is only ever read back by the state store of the same
    checkpoint, written by offsetlake itself.
    """

    before_last: bytes  # pickle of a _Replay
    last: tuple[GroupRecord, ...]

    def dumps(self) -> bytes:
        return pickle.dumps((REPLAY_STATE_FORMAT, self.before_last, self.last), protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def loads(cls, data: bytes) -> ReplayTail:
        saved = pickle.loads(data)  # noqa: S301 - the state store of offsetlake's own checkpoint
        if not isinstance(saved, tuple) or len(saved) != 3 or saved[0] != REPLAY_STATE_FORMAT:
            found = saved[0] if isinstance(saved, tuple) and saved else "unknown"
            raise ReplayStateError(f"a KIP-848 group's replay state is in format {found}, this offsetlake reads "
                                   f"{REPLAY_STATE_FORMAT}: delete <warehouse>/_checkpoints/gold_consumer_groups "
                                   "to replay every group anew")
        return cls(saved[1], tuple(saved[2]))


def advance_replay(tail: ReplayTail | None, new: Iterable[GroupRecord]) -> tuple[GroupHistory, ReplayTail]:
    """One group's history after ``new`` records, resumed from ``tail`` (None: a group seen for the first time), and
    the tail to keep: what :func:`derive` of every record so far gives, replaying only the new ones.

    A record already kept (the same position) is not applied twice. Known corner: a record older than the kept
    append time (a broker clock set back between two writes) is applied after everything before that time, where
    :func:`derive` would sort it among them.
    """
    replay = pickle.loads(tail.before_last) if tail is not None else _Replay(GroupHistory())  # noqa: S301 - as above
    kept = tail.last if tail is not None else ()
    seen = {r.position for r in kept}
    pending = sorted([*kept, *(r for r in new if r.position not in seen)], key=_log_order)
    if not pending:
        return replay.finish(), tail or ReplayTail(pickle.dumps(replay, protocol=pickle.HIGHEST_PROTOCOL), ())
    writes = [(at, list(batch)) for at, batch in groupby(pending, key=lambda r: r.at_ms)]
    for at, batch in writes[:-1]:
        replay.apply_batch(at, batch)
    before_last = pickle.dumps(replay, protocol=pickle.HIGHEST_PROTOCOL)
    at, batch = writes[-1]
    replay.apply_batch(at, batch)
    return replay.finish(), ReplayTail(before_last, tuple(batch))


# ------------------------------------------------------------------------- rows for the tables

def history_rows(history: GroupHistory) -> Iterator[tuple[str, dict[str, Any]]]:
    """(table name, row) for every gold row of one group; times stay epoch ms, names unresolved."""
    for g in history.generations:
        yield GENERATIONS.name, {
            "incarnation": g.incarnation, "generation": g.generation, "protocol_type": PROTOCOL_TYPE,
            "protocol": g.protocol, "leader": None, "member_count": g.member_count, "started_at": g.started_at,
            "stable_at": g.stable_at, "ended_at": g.ended_at,
            "end_reason": g.end_reason if g.ended_at is not None else None, "records": g.records,
        }
    for m in history.membership:
        yield MEMBERSHIP.name, {
            "member_id": m.member_id, "group_instance_id": m.info.instance_id, "client_id": m.info.client_id,
            "client_host": m.info.client_host, "session_timeout_ms": m.info.session_timeout_ms,
            "rebalance_timeout_ms": m.info.rebalance_timeout_ms, "valid_from": m.valid_from, "valid_to": m.valid_to,
            "first_generation": m.first_generation, "last_generation": m.last_generation,
            "rack_id": m.info.rack_id, "subscribed_topics": list(m.info.subscribed_topics),
            "subscribed_topic_regex": m.info.subscribed_topic_regex or None,
            "server_assignor": m.info.server_assignor, "first_member_epoch": m.first_member_epoch,
            "last_member_epoch": m.last_member_epoch,
        }
    merged: dict[tuple[Any, ...], Assignment] = {}
    for a in history.assignments:  # a fact that came back within one epoch: one row, first start to last end
        key = (a.generation, a.member_id, a.kind, a.topic_id, a.partition)
        if key in merged:
            merged[key].valid_to = a.valid_to
        else:
            merged[key] = replace(a)  # a copy: the replay's own fact is left as it is
    for a in merged.values():
        yield ASSIGNMENTS.name, {
            "topic_id": a.topic_id, "partition": a.partition, "member_id": a.member_id, "client_id": a.client_id,
            "group_instance_id": a.group_instance_id, "generation": a.generation, "valid_from": a.valid_from,
            "valid_to": a.valid_to, "assignment_kind": a.kind,
        }
    for s in history.states:
        yield STATES.name, {"state": s.state, "at": s.at, "until": s.until, "generation": s.generation,
                            "evidence": s.evidence, "assignment_epoch": s.assignment_epoch}
    for r in history.rebalances:
        yield EVENTS.name, {
            "event_type": "rebalance", "from_generation": r.from_generation, "to_generation": r.to_generation,
            "last_stable_at": r.last_stable_at, "join_completed_at": r.join_completed_at, "stable_at": r.stable_at,
            # no member stops before the first bump (members learn of a new target at their next
            # heartbeat); nobody was there to stop in a group that had no members
            **({"stopped_at_lower_bound": r.started_at, "stopped_at_upper_bound": r.stable_at,
                "stopped_ms_lower_bound": 0, "stopped_ms_upper_bound": r.stable_at - r.started_at}
               if r.members_before else {}),
            "members_before": r.members_before,
            "members_after": r.members_after, "members_joined": r.members_joined, "members_left": r.members_left,
            "members_kept": r.members_kept, "static_restarts": [], "partitions_moved": r.partitions_moved,
            "partitions_kept": r.partitions_kept, "likely_cause": r.likely_cause, "triggered_by": None,
            "protocol": r.protocol,
            "rebalance_protocol": "cooperative", "started_at": r.started_at,
        }


# ------------------------------------------------------------------- silver rows <-> records

def _partitions(value: Any) -> Partitions:
    """``[{"topic_id": ..., "partitions": [...]}, ...]`` (JSON text or parsed) as a set of pairs."""
    if isinstance(value, str):
        value = json.loads(value)
    return frozenset((tp["topic_id"], int(p)) for tp in value or () for p in tp.get("partitions") or ())


def record_from_row(row: dict[str, Any]) -> GroupRecord:
    """A :class:`GroupRecord` from a row of :func:`flat_records` (JSON text for the nested parts)."""
    kind, tombstone = row["type"], bool(row["is_tombstone"])
    base = {"at_ms": int(row["at_ms"]), "position": (int(row["source_partition"]), int(row["source_offset"])),
            "type": kind, "member_id": row.get("member_id"), "is_tombstone": tombstone}
    value = None if tombstone or row.get("value") is None else json.loads(row["value"])
    if value is None:
        return GroupRecord(**base)
    if kind == GROUP_METADATA:
        return GroupRecord(**base, epoch=value.get("epoch"), metadata_hash=value.get("metadata_hash"))
    if kind == TARGET_METADATA:
        return GroupRecord(**base, epoch=value.get("assignment_epoch"))
    if kind == PARTITION_METADATA:
        names = tuple((t["topic_id"], t["topic_name"]) for t in value.get("topics") or () if t.get("topic_name"))
        return GroupRecord(**base, topic_names=names)
    if kind == MEMBER_METADATA:
        classic = value.get("classic_member_metadata") or {}
        return GroupRecord(**base, member=MemberInfo(
            client_id=value.get("client_id"), client_host=value.get("client_host"),
            instance_id=value.get("instance_id"), rack_id=value.get("rack_id"),
            subscribed_topics=tuple(value.get("subscribed_topic_names") or ()),
            subscribed_topic_regex=value.get("subscribed_topic_regex") or None,
            rebalance_timeout_ms=value.get("rebalance_timeout_ms"), server_assignor=value.get("server_assignor"),
            session_timeout_ms=classic.get("session_timeout_ms")))
    if kind == TARGET_MEMBER:
        return GroupRecord(**base, target=_partitions(value.get("topic_partitions")))
    if kind == CURRENT_ASSIGNMENT:
        return GroupRecord(**base, current=CurrentAssignment(
            member_epoch=value["member_epoch"], previous_member_epoch=value.get("previous_member_epoch", 0),
            state=value.get("state", STABLE_MEMBER), assigned=_partitions(value.get("assigned_partitions")),
            pending_revocation=_partitions(value.get("partitions_pending_revocation"))))
    return GroupRecord(**base)


def flat_records(records: DataFrame) -> DataFrame:
    """silver.consumer_group_records rows of KIP-848 consumer groups, flattened for the replay.

    The record's value goes as JSON text (``value``): nested arrays of structs cross the Arrow
    boundary more simply as text, and :func:`record_from_row` parses them.
    """
    from pyspark.sql import functions as F

    value = F.coalesce(*[F.when(F.col("type") == name, F.to_json(F.col(f"{name}.value"))) for name in RECORD_TYPES])
    return records.filter(F.col("type").isin(*RECORD_TYPES)).select(
        "cluster_name", F.col("group_id").alias("group"), F.unix_millis("record_timestamp").alias("at_ms"),
        "source_partition", "source_offset", "type", "member_id", "is_tombstone", value.alias("value"))


ROWS_COLUMNS = ["cluster_name", "group", "table", "row"]
ROWS_SCHEMA = ", ".join(f"{name} string" for name in ROWS_COLUMNS)


def has_consumer_groups(records: DataFrame) -> bool:
    """Whether silver.consumer_group_records rows include any KIP-848 consumer group's record."""
    from pyspark.sql import functions as F

    return not records.filter(F.col("type").isin(*RECORD_TYPES)).isEmpty()


def _group_rows(cluster: str, group: str, history: GroupHistory) -> Any:  # a pandas frame of ROWS_SCHEMA
    import pandas as pd

    rows = [(cluster, group, table, json.dumps(row)) for table, row in history_rows(history)]
    rows += [(cluster, group, "topic_names", json.dumps({"topic_id": t, "topic": n}))
             for t, n in sorted(history.topic_names.items())]
    return pd.DataFrame(rows, columns=ROWS_COLUMNS)


def _derive_group(frame: Any) -> Any:  # pandas in, pandas out (applyInPandas)
    import pandas as pd

    if frame.empty:
        return pd.DataFrame(columns=ROWS_COLUMNS)
    cluster, group = frame["cluster_name"].iloc[0], frame["group"].iloc[0]
    return _group_rows(cluster, group, derive(record_from_row(row) for row in frame.to_dict("records")))


def derived_rows(records: DataFrame) -> DataFrame:
    """One (cluster_name, group, table, row JSON) per gold row, computed per group on the executors: the replay
    of all of ``records`` (a rebuild, and the reference the state store's replay is compared with)."""
    return flat_records(records).groupBy("cluster_name", "group").applyInPandas(_derive_group, ROWS_SCHEMA)


def advance_group(cluster: str, group: str, saved: bytes | None, records: Sequence[GroupRecord]) -> tuple[Any, bytes]:
    """What :class:`GroupReplay` does for one group: its rows (a pandas frame of ``ROWS_SCHEMA``) after ``records``,
    from the state ``saved`` (``ReplayTail.dumps``; None: a new group), and the state to save.

    Without the cyclic garbage collector meanwhile: unpickling, advancing and pickling the replay build and drop
    tens of thousands of objects, and a collection in between scans them all (bench/consumer_groups.py measures it).
    """
    gc.disable()
    try:
        history, tail = advance_replay(ReplayTail.loads(saved) if saved is not None else None, records)
        return _group_rows(cluster, group, history), tail.dumps()
    finally:
        gc.enable()


class GroupReplay(StatefulProcessor):
    """The state store's processor (``transformWithStateInPandas``, keyed by cluster and group): the group's
    ``ReplayTail`` advanced by the micro-batch's new records (:func:`advance_replay`), and every gold row of the
    group after them, as :func:`derived_rows` gives them.

    Every row, not only the changed ones: gold's group tables replace a touched group's rows whole (a group id can
    move between the classic and the consumer protocol, and the storm flag is computed over both), and the rows
    are what :func:`history_rows` makes of the whole history (a membership row's end, an assignment that came
    back within an epoch, are set on rows written before). What the state store saves is reading and replaying
    the group's records from its first.
    """

    def init(self, handle: Any) -> None:
        self.tail = handle.getValueState("tail", T.StructType([T.StructField("tail", T.BinaryType())]))

    def handleInputRows(self, key: tuple[Any, ...], frames: Iterator[Any],  # noqa: N802 - Spark's name
                        timerValues: Any) -> Iterator[Any]:  # noqa: N803 - Spark's name
        import pandas as pd

        cluster, group = key
        frame = pd.concat(list(frames), ignore_index=True)
        records = [record_from_row(row) for row in frame.to_dict("records")]
        rows, saved = advance_group(cluster, group, bytes(self.tail.get()[0]) if self.tail.exists() else None,
                                    records)
        self.tail.update((saved,))
        yield rows

    def close(self) -> None:
        pass


def replayed_rows(records: DataFrame) -> DataFrame:
    """A streaming frame of silver.consumer_group_records' new rows -> (cluster_name, group, table, row JSON) of
    every gold row of each group that gained records, from the group's replay kept in Spark's state store
    (:class:`GroupReplay`)."""
    return flat_records(records).groupBy("cluster_name", "group").transformWithStateInPandas(
        GroupReplay(), ROWS_SCHEMA, "Append", "None")


def replay_checkpoint_path(settings: Settings) -> str:
    """``<warehouse>/_checkpoints/gold_consumer_groups``: the replay query's checkpoint, holding its state store."""
    from pipelines.storage import join

    return join(settings.warehouse_uri, "_checkpoints", "gold_consumer_groups")


def replay_stream(spark: SparkSession, settings: Settings) -> DataFrame:
    """The replay query's frame: silver.consumer_group_records' inserted KIP-848 records, from the table's first
    row on (a query without a checkpoint has an empty state: its first batch replays every group from its first
    record), every available file in each batch so that a group's records reach its replay in log order, into
    :func:`replayed_rows`.

    A query of its own, not a branch of gold's query over silver's change data feeds: a stateful operator in that
    query cost every refresh 1.5-2 s, KIP-848 records or not (its driver-side set-up at each start, its stage in
    each batch; measured 2026-11-29 on 40-commit refreshes of a classic group, 10.4-11.7 s against 7.8-10.2 s, and
    make demo's rebalances p95 40.1 s against 33-37 s). This one runs a batch only when KIP-848 records arrived.
    Silver changed otherwise than by appends is seen by gold's query, which then starts this one afresh too.
    """
    from pyspark.sql import functions as F

    from pipelines.delta_tables import table_path
    from schemas import consumer_group_records

    records = (spark.readStream.format("delta").option("readChangeFeed", "true")
               .option("maxFilesPerTrigger", str(2**31 - 1))
               .load(table_path(settings, consumer_group_records.TABLE)))
    return replayed_rows(records.filter((F.col("_change_type") == "insert") & F.col("type").isin(*RECORD_TYPES)))


def table_frame(rows: DataFrame, table: str, columns: Sequence[Any]) -> DataFrame:
    """The rows of ``table`` parsed back into ``columns`` (StructFields); timestamps travel as epoch ms."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    wire = T.StructType([T.StructField(f.name, T.LongType() if isinstance(f.dataType, T.TimestampType)
                                       else f.dataType, True) for f in columns])
    parsed = rows.filter(F.col("table") == table).select("cluster_name", "group",
                                                         F.from_json("row", wire).alias("r"))
    return parsed.select("cluster_name", "group", *[
        (F.timestamp_millis(F.col(f"r.{f.name}")) if isinstance(f.dataType, T.TimestampType)
         else F.col(f"r.{f.name}")).alias(f.name) for f in columns])


# ------------------------------------------------------------------------------- topic names

def topic_names(topic_ids: DataFrame, known: Sequence[DataFrame]) -> DataFrame:
    """(cluster_name, topic_id, topic) for ``topic_ids`` (cluster_name, topic_id).

    ``known`` are frames of (cluster_name, topic_id, topic): the groups' PartitionMetadata records,
    offset commits that carry topic ids (OffsetCommitValue v4), the end-offset snapshots
    (pipelines/end_offsets.py records each topic's id), names gold already has. Ids none of them
    names get a null topic, until a later snapshot names them (the refresh then recomputes those
    groups). Never the cluster: a refresh asks it nothing, and a rebuild from the warehouse gives the
    same names (issue 14, item 3). Should two names ever claim one id, the smallest wins, the same
    in every run.
    """
    from functools import reduce

    from pyspark.sql import functions as F

    names = reduce(lambda a, b: a.unionByName(b), [k.select("cluster_name", "topic_id", "topic") for k in known])
    names = names.filter(F.col("topic_id").isNotNull() & (F.col("topic_id") != ZERO_UUID) & F.col("topic").isNotNull()
                         ).groupBy("cluster_name", "topic_id").agg(F.min("topic").alias("topic"))
    return topic_ids.distinct().join(names, ["cluster_name", "topic_id"], "left")


# ----------------------------------------------------------------------------- the gold frames

def consumer_group_tables(records: DataFrame, known_names: Sequence[DataFrame]) -> dict[str, DataFrame]:
    """Every group gold table's rows for the KIP-848 groups in ``records`` (silver.consumer_group_records).

    ``known_names``: (cluster_name, topic_id, topic) frames for :func:`topic_names`.
    """
    return tables_of_rows(derived_rows(records).localCheckpoint(),  # parsed five times: derive once
                          known_names)


def tables_of_rows(rows: DataFrame, known_names: Sequence[DataFrame]) -> dict[str, DataFrame]:
    """Every group gold table's rows from ``rows`` (cluster_name, group, table, row JSON: :func:`derived_rows` or
    the state store's :func:`replayed_rows`), topic ids named as :func:`consumer_group_tables` says."""
    from pyspark.sql import functions as F

    tables = {}
    for spec in (GENERATIONS, MEMBERSHIP, ASSIGNMENTS, STATES, EVENTS):
        columns = [f for f in spec.schema.fields if f.name not in ("cluster_name", "group", "group_type", "topic")]
        tables[spec] = table_frame(rows, spec.name, columns).withColumn("group_type", F.lit(GROUP_TYPE))
    partition_names = table_frame(rows, "topic_names", [T.StructField("topic_id", T.StringType()),
                                                        T.StructField("topic", T.StringType())])
    # Materialised: ``known_names`` may read the very table these rows will overwrite.
    names = topic_names(tables[ASSIGNMENTS].select("cluster_name", "topic_id"),
                        [partition_names, *known_names]).localCheckpoint()
    tables[ASSIGNMENTS] = tables[ASSIGNMENTS].join(F.broadcast(names), ["cluster_name", "topic_id"], "left")
    return {spec.name: frame.select(*spec.schema.fieldNames()) for spec, frame in tables.items()}
