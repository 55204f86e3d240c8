"""Classic groups (JoinGroup/SyncGroup): their history from GroupMetadata records.

What the records can tell (Kafka ``GroupMetadataManager.storeGroup`` / ``GroupCoordinatorRecordHelpers``): a
GroupMetadata record is written when a generation's assignment is stored (the leader's SyncGroup, then Stable),
when a static member swaps its member id in, and when the group becomes Empty; a tombstone when the group is
deleted or expires. PreparingRebalance, joins and departures are not written, so every time here is a time the
*records* show. A rebalance is a new generation in a record; what changed is the difference between the last
record before it and the first record of the new generation.

When a rebalance began is not persisted either, so only bounds are given, each as tight as the records make it:

* the new generation's ``currentStateTimestamp`` is when its join phase completed: every member that stopped for
  the rebalance had stopped by then (an eager member revokes before it rejoins, ``ConsumerCoordinator.
  onJoinPrepare``; a departed member was removed before);
* a member's last offset commit before that moment is a moment it was still working: a commit carries the
  broker's ``commitTimestamp``, and one from a removed member is refused (``ClassicGroup.validateOffsetCommit``:
  UNKNOWN_MEMBER_ID), so nothing it did for this rebalance came earlier;
* the previous record: the group was Stable (or Empty) when it was appended;
* the members' rebalance timeouts cap how long a join phase lasts (``GroupMetadataManager.prepareRebalance``
  completes the join within ``ClassicGroup.rebalanceTimeoutMs``), and the departed members' session timeouts how
  long before the rebalance a member that vanished can have stopped.

One group's records all live in one ``__consumer_offsets`` partition, in append order: the replay orders them by
append time, then position.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from history import ASSIGNMENTS, GENERATIONS, MEMBERSHIP, REBALANCES, STATES

GROUP_TYPE = "classic"
# Assignors whose protocol is COOPERATIVE or EAGER (``ConsumerPartitionAssignor.supportedProtocols()``).
COOPERATIVE = ("cooperative-sticky",)
EAGER = ("range", "roundrobin", "sticky")

Row = dict[str, object]


# ------------------------------------------------------------------------------------- input

@dataclass(frozen=True)
class ClassicMember:
    """One member of a GroupMetadata record (``GroupMetadataValue.MemberMetadata`` and its decoded protocol bytes)."""

    member_id: str
    group_instance_id: str | None = None
    client_id: str | None = None
    client_host: str | None = None
    session_timeout_ms: int | None = None
    rebalance_timeout_ms: int | None = None
    subscribed_topics: tuple[str, ...] | None = None
    assigned: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (topic, partitions), as the assignment lists them

    @property
    def identity(self) -> str:
        """A static member (KIP-345) is its ``group.instance.id`` across member ids; a dynamic one its member id."""
        return f"i:{self.group_instance_id}" if self.group_instance_id is not None else f"m:{self.member_id}"


@dataclass(frozen=True)
class GroupMetadataRecord:
    """A GroupMetadata record (type 2) or its tombstone, as silver.group_metadata and silver.group_members hold it.

    ``at_ms``: the append time; ``position``: (``__consumer_offsets`` partition, offset), the order within one
    append time; ``current_state_ms``: ``currentStateTimestamp`` (value v2+), None before.
    """

    at_ms: int
    position: tuple[int, int]
    is_tombstone: bool = False
    generation: int | None = None
    protocol_type: str | None = None
    protocol: str | None = None
    leader: str | None = None
    current_state_ms: int | None = None
    member_count: int | None = None
    members: tuple[ClassicMember, ...] = ()

    @property
    def formed_ms(self) -> int:
        """When the generation's join phase completed: ``currentStateTimestamp``, else the append time (v0/v1)."""
        return self.current_state_ms if self.current_state_ms is not None else self.at_ms


@dataclass(frozen=True)
class Commit:
    """An offset commit of the group: when the broker stamped it (``commitTimestamp``) and on which partition."""

    at_ms: int
    topic: str
    partition: int


# ------------------------------------------------------------------------------- one record

@dataclass
class _Step:
    """A record in its place in the group's sequence, with what the rows compare between records."""

    record: GroupMetadataRecord
    seq: int
    incarnation: int  # tombstones before it
    new_generation: bool  # the first record of its generation
    at: int  # the time it stands for: formed_ms for a generation's first record, else the append time
    identities: list[str]  # sorted
    identity_members: dict[str, str]
    session_timeouts: dict[str, int | None]
    max_rebalance_timeout_ms: int | None
    subscriptions: list[str]  # sorted "identity=topic,topic"
    owned: list[tuple[str, str]]  # sorted (partition "topic/p", owner identity)
    partitions: list[str]  # sorted "topic/p", one per owner
    next_at: int | None = None


def _step(record: GroupMetadataRecord, seq: int, incarnation: int, previous: GroupMetadataRecord | None) -> _Step:
    new_generation = not record.is_tombstone and (
        previous is None or previous.is_tombstone or previous.generation is None
        or record.generation != previous.generation)
    members = () if record.is_tombstone else record.members
    # In the order of their "topic/p@identity" strings (the order the causes' member lists follow).
    owned = sorted(((f"{topic}/{p}", m.identity) for m in members for topic, ps in m.assigned for p in ps),
                   key=lambda entry: f"{entry[0]}@{entry[1]}")
    timeouts = [m.rebalance_timeout_ms for m in members if m.rebalance_timeout_ms is not None]
    return _Step(
        record=record, seq=seq, incarnation=incarnation, new_generation=new_generation,
        at=record.formed_ms if new_generation else record.at_ms,
        identities=sorted(m.identity for m in members),
        identity_members={m.identity: m.member_id for m in members},
        session_timeouts={m.identity: m.session_timeout_ms for m in members},
        max_rebalance_timeout_ms=max(timeouts) if timeouts else None,
        subscriptions=sorted(f"{m.identity}={','.join(sorted(m.subscribed_topics or ()))}" for m in members),
        owned=owned, partitions=sorted(tp for tp, _ in owned))


def _sequence(records: Iterable[GroupMetadataRecord]) -> list[_Step]:
    steps: list[_Step] = []
    incarnation = 0
    previous: GroupMetadataRecord | None = None
    for seq, record in enumerate(sorted(records, key=lambda r: (r.at_ms, r.position)), start=1):
        steps.append(_step(record, seq, incarnation, previous))
        incarnation += record.is_tombstone
        previous = record
    for step, following in zip(steps, steps[1:], strict=False):
        step.next_at = following.at
    return steps


# -------------------------------------------------------------------------- the transitions

@dataclass
class _Transition:
    """A record beside the one before it (both of one incarnation): what changed, and how the group got there."""

    before: _Step
    after: _Step
    joined: list[str]
    left: list[str]
    static_restarts: list[str]
    returned: list[str]
    revoked_before: list[str]  # identities the previous record revoked partitions from (KIP-429's first round)
    last_commits: dict[str, int]
    partitions_moved: int
    partitions_kept: int
    most_partitions_before: int
    likely_cause: str | None = None


class _CommitIndex:
    """The group's commit times per partition, sorted: the latest one within a window in log time."""

    def __init__(self, commits: Iterable[Commit]) -> None:
        times: dict[str, list[int]] = {}
        for c in commits:
            times.setdefault(f"{c.topic}/{c.partition}", []).append(c.at_ms)
        self.times = {tp: sorted(ts) for tp, ts in times.items()}

    def latest(self, partition: str, after: int, until: int) -> int | None:
        """The latest commit on ``partition`` in ``(after, until]``."""
        ts = self.times.get(partition)
        if not ts:
            return None
        i = bisect_right(ts, until)
        return ts[i - 1] if i and ts[i - 1] > after else None


def _transitions(steps: Sequence[_Step], commits: _CommitIndex) -> dict[int, _Transition]:
    """seq -> the transition into that record, for every record that follows a record of its incarnation."""
    found: dict[int, _Transition] = {}
    emptied = 0  # records without members so far (tombstones included): ownership does not carry across one
    last_owner: dict[str, tuple[str, int]] = {}  # partition -> (identity, emptied then), this incarnation
    seen: set[str] = set()  # identities of earlier records of this incarnation
    most_before = 0
    revoked: list[str] = []
    previous: _Step | None = None
    for step in steps:
        if previous is not None and previous.incarnation != step.incarnation:
            last_owner, seen = {}, set()
        emptied += not step.identities
        moved = kept = 0
        for tp, owner in step.owned:
            last = last_owner.get(tp)
            if last is not None and last[1] == emptied:
                moved += last[0] != owner
                kept += last[0] == owner
        # Members that stayed but lost partitions nobody owns now: what the first round of a cooperative
        # rebalance does (KIP-429); each of them rejoins at once, which starts the follow-up rebalance.
        unowned_now = set(previous.partitions if previous else ()) - set(step.partitions)
        staying = set(step.identities)
        revoked_now = list(dict.fromkeys(owner for tp, owner in (previous.owned if previous else ())
                                         if tp in unowned_now and owner in staying))
        if previous is not None and not step.record.is_tombstone and not previous.record.is_tombstone:
            found[step.seq] = _transition(previous, step, commits, seen, revoked, moved, kept, most_before)
        for tp, owner in step.owned:
            last_owner[tp] = (owner, emptied)
        seen.update(step.identities)
        most_before = max(most_before, len(step.partitions))
        revoked, previous = revoked_now, step
    return found


def _transition(before: _Step, after: _Step, commits: _CommitIndex, seen: set[str], revoked_before: list[str],
                moved: int, kept: int, most_before: int) -> _Transition:
    statics = [i for i in after.identities if i.startswith("i:") and i in before.identity_members]
    joined = [i for i in after.identities if i not in before.identity_members]
    last_commits: dict[str, int] = {}
    for tp, owner in before.owned:
        made = commits.latest(tp, before.record.at_ms, after.record.formed_ms)
        if made is not None and made > last_commits.get(owner, made - 1):
            last_commits[owner] = made
    transition = _Transition(
        before=before, after=after, joined=joined,
        left=[i for i in before.identities if i not in after.identity_members],
        static_restarts=[i[2:] for i in statics if after.identity_members[i] != before.identity_members[i]],
        returned=[i for i in joined if i.startswith("i:") and i in seen],
        revoked_before=revoked_before, last_commits=last_commits, partitions_moved=moved, partitions_kept=kept,
        most_partitions_before=most_before)
    transition.likely_cause = likely_cause(transition)
    return transition


def _none_expired(t: _Transition) -> bool:
    """No departed member's session can have expired: each was gone sooner than its session timeout after its
    last sign of life -- its join (the previous generation's ``currentStateTimestamp``) or its last commit (a
    commit reschedules the session, ``OffsetMetadataManager.commitOffset``)."""
    for identity in t.left:
        timeout = t.before.session_timeouts.get(identity)
        alive = max(t.before.record.formed_ms, t.last_commits.get(identity, t.before.record.formed_ms))
        if timeout is None or not t.after.record.formed_ms - alive < timeout:
            return False
    return True


def likely_cause(t: _Transition) -> str | None:
    """The most likely trigger of the rebalance into ``t.after``, from what changed between the two records.

    Kafka rebalances a Stable group when a member joins, leaves (LeaveGroup) or its session expires, a member's
    subscription changes, or the leader rejoins (on new partitions or topics at a metadata refresh, and in
    cooperative rebalancing to hand out revoked partitions): ``ClassicGroup``/``GroupMetadataManager`` rebalance
    reasons. ``member_left`` when no departed member's session can have expired (``_none_expired``: a LeaveGroup,
    also sent on a poll timeout, or a drop for not rejoining in time), else ``member_left_or_vanished`` (the
    records cannot tell an expiry from a LeaveGroup after idling). A static member whose ``group.instance.id`` an
    earlier record of this incarnation had is ``static_member_returned`` (KIP-345: it sends no LeaveGroup). A
    cooperative group's generation right after one that revoked partitions from members who stayed is KIP-429's
    second round, ``cooperative_follow_up``. None for a record of the same generation without a static restart.
    """
    after = t.after
    if not after.new_generation:
        return "static_member_restart" if t.static_restarts else None
    if t.joined and t.left:
        return "members_joined_and_left"
    if t.joined and len(t.returned) == len(t.joined):
        return "static_member_returned"
    if t.joined:
        return "member_joined"
    if t.left:
        return "member_left" if _none_expired(t) else "member_left_or_vanished"
    if after.record.protocol in COOPERATIVE and t.revoked_before:
        return "cooperative_follow_up"
    if t.static_restarts:
        return "static_member_rejoined"
    if after.subscriptions != t.before.subscriptions:
        return "subscription_changed"
    if len(after.partitions) > t.most_partitions_before:
        return "metadata_changed"
    return "leader_rejoined"


def stop_bounds(t: _Transition) -> tuple[int | None, int | None]:
    """(lower, upper): every member of the previous generation that stopped working for this rebalance (revoked
    its partitions, left, or died) did so in between; (None, None) for a static restart without a rebalance and
    when the previous record had no members (nobody was working).

    Upper: the join's completion (members revoke before rejoining, KIP-429 too; departed ones were removed before).
    Lower, the latest of: the previous record's append time; the earliest of the members' last commits before the
    join completed (each worked until its own; a member without one counts from the previous record); and the join
    completion minus the longest join phases the rebalance timeouts allow (``2 * generations - 1`` of them: a
    PreparingRebalance per generation gone through and a CompletingRebalance for each cut short) and the longest
    session timeout among the departed members (one that vanished stopped at most that long before its removal).
    """
    before, after = t.before, t.after
    if not after.new_generation or not (before.record.member_count or 0) > 0:
        return None, None
    completed = after.record.formed_ms
    candidates = [before.record.at_ms]
    if before.identities:
        candidates.append(min(t.last_commits.get(i, before.record.at_ms) for i in before.identities))
    timeouts = [x for x in (before.max_rebalance_timeout_ms, after.max_rebalance_timeout_ms) if x is not None]
    if timeouts:
        generations = (after.record.generation or 0) - (before.record.generation or 0)
        sessions = [s for i in t.left if (s := before.session_timeouts.get(i)) is not None]
        candidates.append(completed - ((2 * generations - 1) * max(timeouts) + (max(sessions) if sessions else 0)))
    return min(max(candidates), completed), completed


# ------------------------------------------------------------------------------------ rows

def replay(records: Iterable[GroupMetadataRecord], commits: Iterable[Commit] = ()) -> dict[str, list[Row]]:
    """Every row of one classic group, per kind (``history.KINDS``), from its GroupMetadata records (any order) and
    its offset commits (the evidence of ``stop_bounds`` and ``likely_cause``; none: the records alone). Rebalance
    rows lack the storm columns, which ``history.group`` counts over every protocol's rebalances."""
    steps = _sequence(records)
    transitions = _transitions(steps, _CommitIndex(commits))
    return {GENERATIONS: _generations(steps, transitions), MEMBERSHIP: _membership(steps),
            ASSIGNMENTS: _assignments(steps), STATES: _states(steps), REBALANCES: _rebalances(transitions)}


def _generations(steps: Sequence[_Step], transitions: dict[int, _Transition]) -> list[Row]:
    """One row per (incarnation, generation) recorded: what its first record says, and how the next record ended it
    (the tombstone: ``group_removed``; else the likely cause of the rebalance into the next generation)."""
    spans: dict[tuple[int, int], list[_Step]] = {}
    for step in steps:
        if not step.record.is_tombstone:
            spans.setdefault((step.incarnation, step.record.generation or 0), []).append(step)
    rows = []
    for (incarnation, generation), span in spans.items():
        first, last = span[0].record, span[-1]
        successor = steps[last.seq] if last.seq < len(steps) else None
        reason = None
        if successor is not None:
            reason = ("group_removed" if successor.record.is_tombstone
                      else transitions[successor.seq].likely_cause if successor.new_generation else None)
        rows.append({
            "incarnation": incarnation, "generation": generation, "protocol_type": first.protocol_type or None,
            "protocol": first.protocol, "leader": first.leader, "member_count": first.member_count,
            "started_at": first.formed_ms,
            "stable_at": first.at_ms if (first.member_count or 0) > 0 else None,
            "ended_at": last.next_at, "end_reason": reason if last.next_at is not None else None,
            "records": len(span), "group_type": GROUP_TYPE,
        })
    return rows


def _membership(steps: Sequence[_Step]) -> list[Row]:
    """One row per member id: its last record's metadata, from the first record listing it to the first later
    record without it."""
    stays: dict[str, tuple[_Step, _Step, ClassicMember, int, int]] = {}
    for step in steps:
        for m in () if step.record.is_tombstone else step.record.members:
            generation = step.record.generation or 0
            if m.member_id in stays:
                first, _, _, low, high = stays[m.member_id]
                stays[m.member_id] = (first, step, m, min(low, generation), max(high, generation))
            else:
                stays[m.member_id] = (step, step, m, generation, generation)
    return [{
        "member_id": member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
        "client_host": m.client_host, "session_timeout_ms": m.session_timeout_ms,
        "rebalance_timeout_ms": m.rebalance_timeout_ms,
        "subscribed_topics": list(m.subscribed_topics) if m.subscribed_topics is not None else None,
        "valid_from": first.at, "valid_to": last.next_at, "first_generation": low, "last_generation": high,
        "group_type": GROUP_TYPE, "rack_id": None, "subscribed_topic_regex": None, "server_assignor": None,
        "first_member_epoch": None, "last_member_epoch": None, "process_id": None, "user_endpoint": None,
        "topology_epoch": None,
    } for member_id, (first, last, m, low, high) in stays.items()]


def _assignments(steps: Sequence[_Step]) -> list[Row]:
    """One row per (generation, member, partition) stored: from the first record with it (its append time) to the
    first later record without it."""
    facts: dict[tuple[int, str, str, int], tuple[_Step, _Step, ClassicMember]] = {}
    for step in steps:
        for m in () if step.record.is_tombstone else step.record.members:
            for topic, partitions in m.assigned:
                for p in partitions:
                    key = (step.record.generation or 0, m.member_id, topic, p)
                    first = facts[key][0] if key in facts else step
                    facts[key] = (first, step, m)
    return [{
        "topic": topic, "partition": p, "member_id": member_id, "client_id": m.client_id,
        "group_instance_id": m.group_instance_id, "generation": generation, "valid_from": first.record.at_ms,
        "valid_to": last.next_at, "group_type": GROUP_TYPE, "assignment_kind": "current", "topic_id": None,
    } for (generation, member_id, topic, p), (first, last, m) in facts.items()]


def _states(steps: Sequence[_Step]) -> list[Row]:
    """Empty, CompletingRebalance and Stable from each generation's first record, Dead from a tombstone.

    ``ClassicGroup.currentStateTimestamp`` is set on the move to CompletingRebalance (or Empty), before the record
    is written; the record is appended when the leader's SyncGroup stored the assignment (Stable)."""
    rows: list[Row] = []
    for step in steps:
        r = step.record
        if r.is_tombstone:
            found = [("Dead", r.at_ms, "tombstone")]
        elif not step.new_generation:
            continue
        elif r.member_count == 0:
            found = [("Empty", r.formed_ms, "current_state_timestamp")]
        else:
            found = [("CompletingRebalance", r.formed_ms, "current_state_timestamp"),
                     ("Stable", r.at_ms, "record_time")]
        for state, at, evidence in found:
            if rows:
                rows[-1]["until"] = at
            rows.append({"state": state, "at": at, "until": None,
                         "generation": None if r.is_tombstone else r.generation, "evidence": evidence,
                         "group_type": GROUP_TYPE, "assignment_epoch": None})
    return rows


def _rebalances(transitions: dict[int, _Transition]) -> list[Row]:
    """One row per new generation after the first of an incarnation, and per static restart that kept the
    generation."""
    rows = []
    for t in transitions.values():
        before, after = t.before.record, t.after.record
        if not t.after.new_generation and not t.static_restarts:
            continue
        lower, upper = stop_bounds(t)
        rows.append({
            "event_type": "rebalance" if t.after.new_generation else "static_member_restart",
            "from_generation": before.generation, "to_generation": after.generation,
            "last_stable_at": before.at_ms,
            "join_completed_at": after.current_state_ms if t.after.new_generation else None,
            "stable_at": after.at_ms, "stopped_at_lower_bound": lower, "stopped_at_upper_bound": upper,
            "stopped_ms_lower_bound": after.at_ms - upper if upper is not None else None,
            "stopped_ms_upper_bound": after.at_ms - lower if lower is not None else None,
            "members_before": before.member_count or 0, "members_after": after.member_count or 0,
            "members_joined": [t.after.identity_members[i] for i in t.joined],
            "members_left": [t.before.identity_members[i] for i in t.left],
            "members_kept": sum(1 for i in t.after.identities if i in t.before.identity_members),
            "static_restarts": t.static_restarts, "partitions_moved": t.partitions_moved,
            "partitions_kept": t.partitions_kept, "likely_cause": t.likely_cause,
            # the previous round revoked from these; the first of them to rejoin started this one (no record says
            # which, so all are listed)
            "triggered_by": ([t.before.identity_members[i] for i in t.revoked_before]
                             if t.likely_cause == "cooperative_follow_up" else None),
            "protocol": after.protocol,
            "rebalance_protocol": ("cooperative" if after.protocol in COOPERATIVE
                                   else "eager" if after.protocol in EAGER else None),
            "group_type": GROUP_TYPE, "started_at": None,
        })
    return rows
