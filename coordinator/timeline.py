"""The expected-state timeline: what each group looked like, generation by generation.

:class:`TimelineRecorder` listens to the coordinator (group and offset events) and the clients,
and produces the run's ground truth in two shapes:

* :meth:`TimelineRecorder.timeline` — a JSON-able dict, documented in ``docs`` below;
* :meth:`TimelineRecorder.tables` — rows (lists of dicts) shaped like the gold tables.

Times are epoch milliseconds of the simulated clock. The truth is the coordinator's in-memory
state (as Kafka's ``GroupMetadataManager`` holds it), which is richer than what
``__consumer_offsets`` persists: PreparingRebalance/CompletingRebalance and member arrivals and
departures are never written there (``GroupMetadataValue`` holds no state: a group read back is Empty
without members, otherwise Stable). The table columns say which values a records-only pipeline can and
cannot recover.

Table columns
-------------
``group_generations`` (one row per generation, including generation 0 of a new group)
    group, generation, protocol_type, protocol, leader (member id when the generation started;
    None without members), member_count (members when it started), started_at (entry into
    CompletingRebalance, or into Empty for a generation without members; equals the
    ``current_state_timestamp`` of the generation's GroupMetadata record), ended_at (start of the next
    generation or the group's removal; None if current at the end of the run), end_reason (why:
    ``member_joined``, ``member_left``, ``session_timeout``, ``member_metadata_changed``,
    ``leader_rejoined``, ``static_member_rejoined``,
    ``static_member_protocol_changed``, ``sync_timeout``, ``group_deleted``, ``group_expired``).
``group_membership`` (SCD2: one row per member id's stay in the group)
    group, member_id, group_instance_id, client_id, client_host, session_timeout, rebalance_timeout,
    valid_from (the coordinator added the member: its JoinGroup with a member id was accepted, or a
    static member's id was swapped in), valid_to (removed: LeaveGroup, session timeout, not
    rejoining in time, replaced by a restarted static member, group removal; None if still a member),
    first_generation, last_generation (generations whose member set included it; None if none did).
``partition_assignments`` (SCD2: one row per partition per member per generation)
    group, topic, partition, member_id, client_id, valid_from (the assignment was stored: the
    leader's SyncGroup moved the group to Stable, or a static member's id was swapped in),
    valid_to (the generation ended or the member left it, whichever came first), generation.
``group_state_history``
    group, state, at — every state transition, Empty at creation and Dead at removal.
``committed_offsets`` (one row per OffsetCommit record written)
    group, topic, partition, offset, leader_epoch (None when the client sent -1), metadata,
    commit_timestamp.

KIP-848 groups (:mod:`coordinator.consumer_group`) have their own tables, derived from the group as the
engine holds it after each write (``ConsumerGroupEvents.consumer_group_written``; of several writes in one
millisecond, the last), never from the records:

``consumer_group_generations`` (one row per group epoch)
    group, generation (the epoch), protocol (the server assignor most members name), member_count
    (members after the bump), started_at (the bump), stable_at (the first moment the group was Stable at
    this epoch: every member reconciled to it; None if never), ended_at (the next bump), end_reason (the
    next bump's cause: ``member_joined``, ``subscription_changed``, ``member_left``, ``session_timeout``,
    ``rebalance_timeout``).
``consumer_group_membership`` (one row per member stay *and subscription*)
    group, member_id, group_instance_id, client_id, client_host, rebalance_timeout_ms, subscribed_topics
    (sorted), subscribed_topic_regex, server_assignor, valid_from, valid_to (the member left or was fenced,
    or its subscribed topic names or regex changed: the next row starts at the same moment), first_generation,
    last_generation (group epochs while the row was open), first_member_epoch, last_member_epoch.
``consumer_group_partition_assignments`` (SCD2 per member, kind, epoch and partition)
    group, member_id, client_id, assignment_kind ('current': owned, by member epoch; 'pending_revocation':
    still owned, to be given up, by member epoch; 'target': the assignor's target, by assignment epoch, once
    there is one), generation (that epoch), topic_id, topic, partition, valid_from, valid_to (a fact that
    returns within one epoch keeps one row, from its first start to its last end).
``consumer_group_state_history`` (one row per change of the group's state or group epoch)
    group, state (``ConsumerGroup.maybeUpdateGroupState``: Empty, Assigning, Reconciling, Stable), at,
    until (the next row's start), generation (the group epoch), assignment_epoch.
``consumer_group_rebalances`` (one row per group epoch at which the group settled: Stable or Empty)
    group, from_generation (the epoch it last settled at; 0 for a new group), to_generation, started_at
    (the first bump after it last settled), last_stable_at (when it last settled; None the first time),
    join_completed_at (when the assignment epoch last changed, if it settled Stable), stable_at (when it
    settled), members_before, members_after, members_joined, members_left (member ids, sorted),
    members_kept, partitions_moved, partitions_kept (partitions owned -- assigned or pending revocation --
    at both settle points, by another member or the same one), causes (the causes of the bumps in between,
    in order).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from coordinator.consumer_group import ConsumerGroup, ConsumerGroupEvents
from coordinator.consumer_protocol import Assignment
from coordinator.group import ClassicGroup, GroupEvents, GroupState
from coordinator.group_coordinator import OffsetEvents
from coordinator.member import ClassicGroupMember
from coordinator.offsets import OffsetAndMetadata

CLASSIC_TABLES = (
    "group_generations", "group_membership", "partition_assignments", "group_state_history", "committed_offsets"
)
#: KIP-848 groups' expected rows, kept apart from the classic tables (other columns, other rules).
CONSUMER_GROUP_TABLES = (
    "consumer_group_generations", "consumer_group_membership", "consumer_group_partition_assignments",
    "consumer_group_state_history", "consumer_group_rebalances",
)
TABLES = CLASSIC_TABLES + CONSUMER_GROUP_TABLES

_REMOVAL_CAUSE = {"deleted": "group_deleted", "expired": "group_expired"}


@dataclass
class MemberInGeneration:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout: int
    rebalance_timeout: int
    valid_from: int
    valid_to: int | None = None
    assignment: list[dict] | None = None


@dataclass
class GenerationHistory:
    generation: int
    protocol_type: str | None
    protocol: str | None
    leader: str | None
    started_at: int
    members: list[MemberInGeneration] = field(default_factory=list)
    member_count: int = 0
    stable_at: int | None = None
    ended_at: int | None = None
    end_reason: str | None = None
    rebalance_started_at: int | None = None
    rebalance_reason: str | None = None


@dataclass
class Membership:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout: int
    rebalance_timeout: int
    valid_from: int
    valid_to: int | None = None
    end_reason: str | None = None
    generations: list[int] = field(default_factory=list)


@dataclass
class GroupHistory:
    group: str
    coordinator_partition: int
    created_at: int
    states: list[dict] = field(default_factory=list)
    generations: list[GenerationHistory] = field(default_factory=list)
    memberships: list[Membership] = field(default_factory=list)
    offsets: list[dict] = field(default_factory=list)
    offset_removals: list[dict] = field(default_factory=list)
    removals: list[dict] = field(default_factory=list)
    pending_rebalance: dict | None = None


def _assignment_rows(assignment: Any) -> list[dict]:
    if isinstance(assignment, Assignment):
        return [{"topic": t, "partitions": ps} for t, ps in assignment.by_topic()]
    return []


def _member_snapshot(member: ClassicGroupMember, at: int) -> MemberInGeneration:
    return MemberInGeneration(
        member.member_id,
        member.group_instance_id,
        member.client_id,
        member.client_host,
        member.session_timeout_ms,
        member.rebalance_timeout_ms,
        valid_from=at,
    )


@dataclass
class ConsumerGroupHistory:
    """A KIP-848 group: its epoch bumps and the group after each write (one per millisecond: the last)."""

    group: str
    coordinator_partition: int
    created_at: int
    epochs: list[dict] = field(default_factory=list)  # {"epoch", "at", "cause"}
    snapshots: list[dict] = field(default_factory=list)


def _pairs(partitions) -> list[list]:  # noqa: ANN001 - frozenset of (topic id, partition)
    return [[t, p] for t, p in sorted(partitions)]


def _consumer_group_snapshot(group: ConsumerGroup, at: int) -> dict:
    return {
        "at": at,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "state": group.state.value,
        "members": {
            m.member_id: {
                "client_id": m.client_id, "client_host": m.client_host, "instance_id": m.instance_id,
                "rack_id": m.rack_id, "subscribed_topics": sorted(m.subscribed_topic_names),
                "subscribed_topic_regex": m.subscribed_topic_regex or None, "server_assignor": m.server_assignor,
                "rebalance_timeout_ms": m.rebalance_timeout_ms, "member_epoch": m.member_epoch,
                "member_state": m.state.value, "assigned": _pairs(m.assigned),
                "pending_revocation": _pairs(m.pending_revocation),
            }
            for m in group.members.values()
        },
        "targets": {member_id: _pairs(t) for member_id, t in group.target.items()},
    }


class TimelineRecorder(GroupEvents, OffsetEvents, ConsumerGroupEvents):
    """Collects coordinator and client events during a run."""

    def __init__(self, partition_for, topic_names: dict[str, str] | None = None):
        self._partition_for = partition_for
        self.groups: dict[str, GroupHistory] = {}
        self.consumer_groups: dict[str, ConsumerGroupHistory] = {}
        #: topic id -> name (KIP-848 records name topics by id)
        self.topic_names = topic_names or {}
        self.events: list[dict] = []

    # -- helpers ------------------------------------------------------------------------------
    def _history(self, group_id: str) -> GroupHistory:
        return self.groups[group_id]

    def _open_membership(self, history: GroupHistory, member_id: str) -> Membership | None:
        for m in reversed(history.memberships):
            if m.member_id == member_id and m.valid_to is None:
                return m
        return None

    def _current_generation(self, history: GroupHistory) -> GenerationHistory | None:
        return history.generations[-1] if history.generations else None

    def _end_generation(self, history: GroupHistory, at: int, reason: str | None) -> None:
        current = self._current_generation(history)
        if current is not None and current.ended_at is None:
            current.ended_at = at
            current.end_reason = reason
            for m in current.members:
                if m.valid_to is None:
                    m.valid_to = at

    def _event(self, at: int, source: str, kind: str, **detail: Any) -> None:
        self.events.append({"at": at, "source": source, "kind": kind, **detail})

    # -- group events ---------------------------------------------------------------------------
    def group_created(self, group: ClassicGroup, at: int) -> None:
        history = self.groups.get(group.group_id)
        if history is None:
            history = GroupHistory(group.group_id, self._partition_for(group.group_id), at)
            self.groups[group.group_id] = history
        history.states.append({"state": GroupState.EMPTY.value, "at": at, "reason": "group created"})
        history.generations.append(GenerationHistory(0, None, None, None, at))
        self._event(at, "coordinator", "group_created", group=group.group_id)

    def state_changed(self, group: ClassicGroup, previous: GroupState, at: int, reason: str | None) -> None:
        history = self._history(group.group_id)
        history.states.append({"state": group.state.value, "at": at, "reason": reason})
        if group.state is GroupState.PREPARING_REBALANCE:
            history.pending_rebalance = {"at": at, "cause": group.rebalance_cause, "reason": reason}
        self._event(
            at,
            "coordinator",
            "state",
            group=group.group_id,
            state=group.state.value,
            previous=previous.value,
            reason=reason,
        )

    def generation_started(self, group: ClassicGroup, at: int) -> None:
        history = self._history(group.group_id)
        rebalance = history.pending_rebalance or {}
        history.pending_rebalance = None
        self._end_generation(history, at, rebalance.get("cause"))
        generation = GenerationHistory(
            group.generation_id,
            group.protocol_type,
            group.protocol_name,
            group.leader_id,
            at,
            rebalance_started_at=rebalance.get("at"),
            rebalance_reason=rebalance.get("reason"),
        )
        for member in group.all_members():
            generation.members.append(_member_snapshot(member, at))
            membership = self._open_membership(history, member.member_id)
            if membership is not None:
                membership.generations.append(group.generation_id)
        generation.member_count = len(generation.members)
        history.generations.append(generation)
        self._event(
            at,
            "coordinator",
            "generation",
            group=group.group_id,
            generation=group.generation_id,
            protocol=group.protocol_name,
            leader=group.leader_id,
            members=[m.member_id for m in group.all_members()],
        )

    def assignment_stored(self, group: ClassicGroup, at: int) -> None:
        history = self._history(group.group_id)
        generation = self._current_generation(history)
        if generation is None:
            return
        if generation.stable_at is None:
            generation.stable_at = at
        for snapshot in generation.members:
            if snapshot.valid_to is None and group.has_member(snapshot.member_id):
                snapshot.assignment = _assignment_rows(group.member(snapshot.member_id).assignment)
        self._event(
            at,
            "coordinator",
            "assignment",
            group=group.group_id,
            generation=group.generation_id,
            assignments={s.member_id: s.assignment for s in generation.members if s.valid_to is None},
        )

    def static_member_replaced(self, group: ClassicGroup, old_member_id: str, new_member_id: str, at: int) -> None:
        history = self._history(group.group_id)
        old = self._open_membership(history, old_member_id)
        new_member = group.member(new_member_id)
        if old is not None:
            old.valid_to, old.end_reason = at, "replaced by a rejoining static member"
        membership = Membership(
            new_member_id,
            new_member.group_instance_id,
            new_member.client_id,
            new_member.client_host,
            new_member.session_timeout_ms,
            new_member.rebalance_timeout_ms,
            at,
        )
        history.memberships.append(membership)
        generation = self._current_generation(history)
        if generation is not None and generation.ended_at is None:
            for snapshot in generation.members:
                if snapshot.member_id == old_member_id and snapshot.valid_to is None:
                    snapshot.valid_to = at
            if group.state is not GroupState.PREPARING_REBALANCE:  # else it joins the next generation
                generation.members.append(_member_snapshot(new_member, at))
                membership.generations.append(generation.generation)
        self._event(
            at,
            "coordinator",
            "static_member_replaced",
            group=group.group_id,
            old_member_id=old_member_id,
            new_member_id=new_member_id,
            group_instance_id=new_member.group_instance_id,
        )

    def member_added(self, group: ClassicGroup, member: ClassicGroupMember, at: int) -> None:
        history = self._history(group.group_id)
        history.memberships.append(
            Membership(
                member.member_id,
                member.group_instance_id,
                member.client_id,
                member.client_host,
                member.session_timeout_ms,
                member.rebalance_timeout_ms,
                at,
            )
        )
        self._event(
            at,
            "coordinator",
            "member_added",
            group=group.group_id,
            member_id=member.member_id,
            client_id=member.client_id,
            group_instance_id=member.group_instance_id,
        )

    def member_removed(self, group: ClassicGroup, member: ClassicGroupMember, at: int, reason: str) -> None:
        history = self._history(group.group_id)
        membership = self._open_membership(history, member.member_id)
        if membership is not None:
            membership.valid_to, membership.end_reason = at, reason
        generation = self._current_generation(history)
        if generation is not None:
            for snapshot in generation.members:
                if snapshot.member_id == member.member_id and snapshot.valid_to is None:
                    snapshot.valid_to = at
        self._event(
            at, "coordinator", "member_removed", group=group.group_id, member_id=member.member_id, reason=reason
        )

    def group_removed(self, group_id: str, at: int, reason: str) -> None:
        history = self._history(group_id)
        history.states.append({"state": GroupState.DEAD.value, "at": at, "reason": reason})
        history.removals.append({"at": at, "reason": reason})
        self._end_generation(history, at, _REMOVAL_CAUSE.get(reason, reason))
        for membership in history.memberships:
            if membership.valid_to is None:
                membership.valid_to, membership.end_reason = at, f"group {reason}"
        self._event(at, "coordinator", "group_removed", group=group_id, reason=reason)

    # -- offset events ---------------------------------------------------------------------------
    def offset_committed(self, group_id: str, topic: str, partition: int, offset: OffsetAndMetadata) -> None:
        if group_id not in self.groups:  # a simple consumer's commit creates the group in replay
            return
        self.groups[group_id].offsets.append(
            {
                "topic": topic,
                "partition": partition,
                "offset": offset.committed_offset,
                "leader_epoch": offset.leader_epoch,
                "metadata": offset.metadata,
                "commit_timestamp": offset.commit_timestamp_ms,
                "expire_timestamp": offset.expire_timestamp_ms,
            }
        )

    def offset_removed(self, group_id: str, topic: str, partition: int, at: int, reason: str) -> None:
        if group_id in self.groups:
            self.groups[group_id].offset_removals.append(
                {"topic": topic, "partition": partition, "at": at, "reason": reason}
            )

    # -- KIP-848 consumer groups ----------------------------------------------------------------
    def consumer_group_written(self, group: ConsumerGroup, at: int, bumped_epoch: bool, cause: str | None) -> None:
        history = self.consumer_groups.get(group.group_id)
        if history is None:
            history = ConsumerGroupHistory(group.group_id, self._partition_for(group.group_id), at)
            self.consumer_groups[group.group_id] = history
        if bumped_epoch:
            history.epochs.append({"epoch": group.group_epoch, "at": at, "cause": cause})
        snapshot = _consumer_group_snapshot(group, at)
        if history.snapshots and history.snapshots[-1]["at"] == at:
            history.snapshots[-1] = snapshot  # writes within one millisecond: what a reader sees is the last
        else:
            history.snapshots.append(snapshot)
        self._event(at, "coordinator", "consumer_group_write", group=group.group_id, group_epoch=group.group_epoch,
                    assignment_epoch=group.assignment_epoch, state=group.state.value, cause=cause)

    # -- client events -----------------------------------------------------------------------------
    def client_event(self, consumer: str, at: int, kind: str, **detail: Any) -> None:
        self._event(at, f"consumer:{consumer}", kind, **detail)

    def scenario_event(self, at: int, kind: str, **detail: Any) -> None:
        self._event(at, "scenario", kind, **detail)

    # -- outputs ------------------------------------------------------------------------------------
    def timeline(self) -> dict[str, Any]:
        groups = []
        for history in self.groups.values():
            groups.append(
                {
                    "group": history.group,
                    "coordinator_partition": history.coordinator_partition,
                    "created_at": history.created_at,
                    "removals": history.removals,
                    "states": history.states,
                    "generations": [
                        {k: v for k, v in asdict(g).items() if k != "members"}
                        | {"members": [asdict(m) for m in g.members]}
                        for g in history.generations
                    ],
                    "members": [asdict(m) for m in history.memberships],
                    "offsets": history.offsets,
                    "offset_removals": history.offset_removals,
                }
            )
        consumer_groups = [
            {"group": h.group, "coordinator_partition": h.coordinator_partition, "created_at": h.created_at,
             "epochs": h.epochs, "snapshots": h.snapshots}
            for h in self.consumer_groups.values()
        ]
        return {"groups": groups, "consumer_groups": consumer_groups, "events": self.events}

    def tables(self) -> dict[str, list[dict]]:
        rows: dict[str, list[dict]] = {name: [] for name in TABLES}
        for history in self.groups.values():
            g = history.group
            for gen in history.generations:
                rows["group_generations"].append(
                    {
                        "group": g,
                        "generation": gen.generation,
                        "protocol_type": gen.protocol_type,
                        "protocol": gen.protocol,
                        "leader": gen.leader,
                        "member_count": gen.member_count,
                        "started_at": gen.started_at,
                        "ended_at": gen.ended_at,
                        "end_reason": gen.end_reason,
                    }
                )
                if gen.stable_at is None:
                    continue
                for member in gen.members:
                    valid_from = max(gen.stable_at, member.valid_from)
                    ends = [t for t in (gen.ended_at, member.valid_to) if t is not None]
                    valid_to = min(ends) if ends else None
                    if valid_to is not None and valid_to < valid_from:
                        continue  # left before the assignment was stored
                    for topic in member.assignment or []:
                        for partition in topic["partitions"]:
                            rows["partition_assignments"].append(
                                {
                                    "group": g,
                                    "topic": topic["topic"],
                                    "partition": partition,
                                    "member_id": member.member_id,
                                    "client_id": member.client_id,
                                    "valid_from": valid_from,
                                    "valid_to": valid_to,
                                    "generation": gen.generation,
                                }
                            )
            for m in history.memberships:
                rows["group_membership"].append(
                    {
                        "group": g,
                        "member_id": m.member_id,
                        "group_instance_id": m.group_instance_id,
                        "client_id": m.client_id,
                        "client_host": m.client_host,
                        "session_timeout": m.session_timeout,
                        "rebalance_timeout": m.rebalance_timeout,
                        "valid_from": m.valid_from,
                        "valid_to": m.valid_to,
                        "first_generation": min(m.generations) if m.generations else None,
                        "last_generation": max(m.generations) if m.generations else None,
                    }
                )
            for s in history.states:
                rows["group_state_history"].append({"group": g, "state": s["state"], "at": s["at"]})
            for o in history.offsets:
                rows["committed_offsets"].append(
                    {
                        "group": g,
                        "topic": o["topic"],
                        "partition": o["partition"],
                        "offset": o["offset"],
                        "leader_epoch": o["leader_epoch"],
                        "metadata": o["metadata"],
                        "commit_timestamp": o["commit_timestamp"],
                    }
                )
        rows["partition_assignments"].sort(key=lambda r: (r["group"], r["valid_from"], r["topic"], r["partition"]))
        for kip848 in self.consumer_groups.values():
            rows["consumer_group_generations"] += _consumer_group_generations(kip848)
            rows["consumer_group_membership"] += _consumer_group_membership(kip848)
            rows["consumer_group_partition_assignments"] += _consumer_group_assignments(kip848, self.topic_names)
            rows["consumer_group_state_history"] += _consumer_group_states(kip848)
            rows["consumer_group_rebalances"] += _consumer_group_rebalances(kip848)
        return rows


# ------------------------------------------------------------------------- KIP-848 groups' tables

def _preferred_assignor(members: dict) -> str | None:
    """The server assignor most members name (``ConsumerGroup.computePreferredServerAssignor``);
    None when none names one (the broker's default is in no record)."""
    votes: dict[str, int] = {}
    for m in members.values():
        if m["server_assignor"]:
            votes[m["server_assignor"]] = votes.get(m["server_assignor"], 0) + 1
    return min(votes, key=lambda name: (-votes[name], name)) if votes else None


def _consumer_group_generations(history: ConsumerGroupHistory) -> list[dict]:
    """One row per group epoch: members after the bump, the first moment the group was Stable at it."""
    rows = []
    for epoch, following in zip(history.epochs, [*history.epochs[1:], None], strict=False):
        at = epoch["at"]
        after = next(s for s in history.snapshots if s["at"] == at)
        ended_at = following["at"] if following else None
        stable_at = next((s["at"] for s in history.snapshots
                          if s["at"] >= at and (ended_at is None or s["at"] < ended_at)
                          and s["state"] == "Stable" and s["group_epoch"] == epoch["epoch"]), None)
        rows.append({
            "group": history.group, "generation": epoch["epoch"], "protocol": _preferred_assignor(after["members"]),
            "member_count": len(after["members"]), "started_at": at, "stable_at": stable_at, "ended_at": ended_at,
            # why the epoch ended: the cause of the next bump (member_joined, member_left, session_timeout,
            # rebalance_timeout, subscription_changed)
            "end_reason": following["cause"] if following else None,
        })
    return rows


def _consumer_group_membership(history: ConsumerGroupHistory) -> list[dict]:
    """One row per member stay and subscription (a change of subscribed topic names or regex closes the
    row and opens the next at the same moment); other changes update the open row."""
    rows: list[dict] = []
    open_rows: dict[str, dict] = {}
    for snapshot in history.snapshots:
        at, epoch, members = snapshot["at"], snapshot["group_epoch"], snapshot["members"]
        for member_id in [m for m in open_rows if m not in members]:
            open_rows.pop(member_id)["valid_to"] = at
        for member_id, m in members.items():
            row = open_rows.get(member_id)
            subscription = (m["subscribed_topics"], m["subscribed_topic_regex"])
            if row is not None and (row["subscribed_topics"], row["subscribed_topic_regex"]) != subscription:
                row["valid_to"] = at
                row = None
            if row is None:
                row = {"group": history.group, "member_id": member_id, "valid_from": at, "valid_to": None,
                       "first_generation": epoch, "first_member_epoch": m["member_epoch"],
                       "last_member_epoch": m["member_epoch"]}
                open_rows[member_id] = row
                rows.append(row)
            row.update({
                "group_instance_id": m["instance_id"], "client_id": m["client_id"], "client_host": m["client_host"],
                "rebalance_timeout_ms": m["rebalance_timeout_ms"], "subscribed_topics": m["subscribed_topics"],
                "subscribed_topic_regex": m["subscribed_topic_regex"], "server_assignor": m["server_assignor"],
                "last_generation": epoch,
                "first_member_epoch": min(row["first_member_epoch"], m["member_epoch"]),
                "last_member_epoch": max(row["last_member_epoch"], m["member_epoch"]),
            })
    columns = ("group", "member_id", "group_instance_id", "client_id", "client_host", "rebalance_timeout_ms",
               "subscribed_topics", "subscribed_topic_regex", "server_assignor", "valid_from", "valid_to",
               "first_generation", "last_generation", "first_member_epoch", "last_member_epoch")
    return [{c: row[c] for c in columns} for row in rows]


def _consumer_group_assignments(history: ConsumerGroupHistory, topic_names: dict[str, str]) -> list[dict]:
    """SCD2 rows of what members own ('current', by member epoch), still have to give up
    ('pending_revocation', by member epoch) and are meant to own ('target', by assignment epoch)."""
    open_facts: dict[tuple, dict] = {}
    rows: dict[tuple, dict] = {}  # a fact back within one epoch: one row, first start to last end
    for snapshot in history.snapshots:
        at, members = snapshot["at"], snapshot["members"]
        now: set[tuple] = set()
        for member_id, m in members.items():
            now.update((member_id, "current", m["member_epoch"], t, p) for t, p in m["assigned"])
            now.update((member_id, "pending_revocation", m["member_epoch"], t, p) for t, p in m["pending_revocation"])
        if snapshot["assignment_epoch"] > 0:
            for member_id, target in snapshot["targets"].items():
                now.update((member_id, "target", snapshot["assignment_epoch"], t, p) for t, p in target)
        for fact in [f for f in open_facts if f not in now]:
            open_facts.pop(fact)["valid_to"] = at
        for fact in sorted(now - open_facts.keys()):
            member_id, kind, generation, topic_id, partition = fact
            row = rows.get(fact)
            if row is None:
                row = {"group": history.group, "member_id": member_id,
                       "client_id": members.get(member_id, {}).get("client_id"), "assignment_kind": kind,
                       "generation": generation, "topic_id": topic_id, "topic": topic_names.get(topic_id),
                       "partition": partition, "valid_from": at, "valid_to": None}
                rows[fact] = row
            row["valid_to"] = None
            open_facts[fact] = row
    return sorted(rows.values(), key=lambda r: (r["valid_from"], r["member_id"], r["assignment_kind"],
                                                r["topic_id"], r["partition"]))


def _consumer_group_states(history: ConsumerGroupHistory) -> list[dict]:
    """The group's state after each write, one row per change of state or group epoch."""
    rows: list[dict] = []
    for snapshot in history.snapshots:
        if rows and (rows[-1]["state"], rows[-1]["generation"]) == (snapshot["state"], snapshot["group_epoch"]):
            continue
        if rows:
            rows[-1]["until"] = snapshot["at"]
        rows.append({"group": history.group, "state": snapshot["state"], "at": snapshot["at"], "until": None,
                     "generation": snapshot["group_epoch"], "assignment_epoch": snapshot["assignment_epoch"]})
    return rows


def _consumer_group_rebalances(history: ConsumerGroupHistory) -> list[dict]:
    """One row per group epoch at which the group settled (Stable or Empty), against the last settle."""

    def owners(snapshot: dict) -> dict[tuple, str]:
        return {(t, p): member_id for member_id, m in snapshot["members"].items()
                for t, p in [*m["assigned"], *m["pending_revocation"]]}

    rows: list[dict] = []
    settled: dict | None = None
    assignment_epoch, assignment_at, started_at = 0, None, None
    bumps = {e["at"] for e in history.epochs}
    for snapshot in history.snapshots:
        at = snapshot["at"]
        if at in bumps and started_at is None:
            started_at = at
        if snapshot["assignment_epoch"] != assignment_epoch:
            assignment_epoch, assignment_at = snapshot["assignment_epoch"], at
        if snapshot["state"] not in ("Stable", "Empty") or \
                (settled is not None and settled["group_epoch"] == snapshot["group_epoch"]):
            continue
        before_members = set(settled["members"]) if settled else set()
        after_members = set(snapshot["members"])
        before_owners, after_owners = (owners(settled) if settled else {}), owners(snapshot)
        common = before_owners.keys() & after_owners.keys()
        kept = sum(1 for tp in common if before_owners[tp] == after_owners[tp])
        from_generation = settled["group_epoch"] if settled else 0
        rows.append({
            "group": history.group, "from_generation": from_generation, "to_generation": snapshot["group_epoch"],
            "started_at": started_at if started_at is not None else at,
            "last_stable_at": settled["at"] if settled else None,
            "join_completed_at": assignment_at if snapshot["state"] == "Stable" else None, "stable_at": at,
            "members_before": len(before_members), "members_after": len(after_members),
            "members_joined": sorted(after_members - before_members),
            "members_left": sorted(before_members - after_members),
            "members_kept": len(before_members & after_members),
            "partitions_moved": len(common) - kept, "partitions_kept": kept,
            "causes": [e["cause"] for e in history.epochs if from_generation < e["epoch"] <= snapshot["group_epoch"]],
        })
        settled, started_at = snapshot, None
    return rows
