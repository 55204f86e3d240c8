"""Streams groups (KIP-1071, Kafka Streams' broker-side rebalance protocol): their history, replayed from records.

A streams group is built like a KIP-848 consumer group (``StreamsGroup``, ``StreamsGroupMember``; records by
``StreamsCoordinatorRecordHelpers``, layouts in ``decoders/streams_group.py``), with **tasks** where a consumer
group has partitions, so the replay is :class:`history.consumer.GroupReplay` with:

* StreamsGroupMetadata (type 17): the **group epoch**, the subscribed topics' metadata hash and (Kafka 4.2+,
  tagged) ``ValidatedTopologyEpoch``, the topology epoch the coordinator last validated against the cluster's
  topics (-1: none); a tombstone when the group is deleted;
* StreamsGroupMemberMetadata (19): one per member: instance id, rack, client id and host, rebalance timeout, the
  member's **topology epoch**, its **process id** (one Kafka Streams instance, possibly many members), its
  interactive-query endpoint and client tags; a tombstone when it leaves or is fenced;
* StreamsGroupTargetAssignmentMetadata (20) and ...Member (21): the assignor's target and its epoch: **active,
  standby and warm-up tasks** (subtopology id and partition numbers), only for members whose target changed;
* StreamsGroupCurrentMemberAssignment (22): the member's **member epoch**, its tasks of each kind and those it
  still has to give up (pending revocation), and its state (1 STABLE, 2 UNREVOKED_TASKS, 3 UNRELEASED_TASKS:
  ``streams/MemberState``, not the consumer groups' codes);
* StreamsGroupTopology (23): the group's topology at a topology epoch: its subtopologies with their source
  topics (or regexes), repartition source and sink topics and state changelog topics.

The group state is Kafka's ``StreamsGroup.maybeUpdateGroupState`` (``StreamsGroup.StreamsGroupState``): Empty
without members; NotReady while there is no topology or its epoch is not the validated one (missing or
mis-partitioned source topics, internal topics not yet created); Assigning while the group epoch is ahead of the
assignment epoch; Reconciling while a member is not ``isReconciledTo`` the assignment epoch; Stable; Dead on the
tombstone. A Kafka 4.1 broker wrote no ``ValidatedTopologyEpoch`` and kept validation in memory: its groups read
as NotReady here whenever they have members (4.2 made streams groups generally available).

A member's topology epoch is what it asks for (a consumer member's subscription): a change bumps the group epoch
('topology_changed') and opens the member's next membership row. Task rows go to their own kind (``TASKS``,
gold.streams_task_assignments), the topology to ``TOPOLOGY`` (gold.streams_topology); a rebalance's moved and kept
counts are of active tasks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from history import ASSIGNMENTS, MEMBERSHIP, TASKS, TOPOLOGY
from history.consumer import (
    Assignment,
    CurrentAssignment,
    GroupHistory,
    GroupRecord,
    GroupReplay,
    MemberInfo,
    RecordRoles,
    Units,
    derive,
    merged_assignments,
    rows_of,
)

GROUP_TYPE = "streams"
PROTOCOL_TYPE = "streams"  # StreamsGroup.PROTOCOL_TYPE
STABLE_MEMBER = 1  # streams/MemberState.STABLE
ACTIVE, STANDBY, WARMUP = "active", "standby", "warmup"
TASK_ROLES = (ACTIVE, STANDBY, WARMUP)

GROUP_METADATA = "streams_group_metadata"
MEMBER_METADATA = "streams_group_member_metadata"
TARGET_METADATA = "streams_group_target_assignment_metadata"
TARGET_MEMBER = "streams_group_target_assignment_member"
CURRENT_ASSIGNMENT = "streams_group_current_member_assignment"
TOPOLOGY_RECORD = "streams_group_topology"
RECORD_TYPES = (GROUP_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT,
                TOPOLOGY_RECORD)
"""silver.consumer_group_records types of streams groups (key types 17 and 19-23, ``decoders/streams_group.py``)."""


# ------------------------------------------------------------------------------------- input

@dataclass(frozen=True)
class StreamsMemberInfo(MemberInfo):
    """What a StreamsGroupMemberMetadata record says about a member, beyond a consumer member's fields."""

    process_id: str | None = None
    topology_epoch: int | None = None
    user_endpoint: str | None = None  # host:port of the interactive-query endpoint, if any
    client_tags: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TopicInfo:
    """An internal topic of a subtopology (repartition source or state changelog) as the topology declares it."""

    name: str
    partitions: int | None = None  # 0: decided by the coordinator from the source topics
    replication_factor: int | None = None


@dataclass(frozen=True)
class Subtopology:
    """One subtopology of a StreamsGroupTopology record."""

    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    source_topic_regex: tuple[str, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()


@dataclass(frozen=True)
class Topology:
    """A StreamsGroupTopology record's value."""

    epoch: int
    subtopologies: tuple[Subtopology, ...] = ()


@dataclass(frozen=True)
class StreamsRecord(GroupRecord):
    """One record of a streams group: a :class:`history.consumer.GroupRecord` whose assigned units are tasks
    ``(task role, subtopology id, partition)``, with the streams-only fields."""

    validated_topology_epoch: int | None = None  # StreamsGroupMetadata, Kafka 4.2+ (-1: none)
    topology: Topology | None = None


def tasks(role: str, task_ids: Iterable[tuple[str, Iterable[int]]]) -> Units:
    """``[(subtopology id, partitions), ...]`` of one task role as task units."""
    return frozenset((role, subtopology, int(p)) for subtopology, partitions in task_ids for p in partitions)


# ------------------------------------------------------------------------------------ output

@dataclass
class TopologyTopic:
    """One topic of one subtopology, while a topology record holds it."""

    incarnation: int
    topology_epoch: int
    subtopology_id: str
    topic_role: str  # 'source' | 'source_regex' | 'repartition_source' | 'repartition_sink' | 'changelog'
    topic: str
    partitions: int | None
    replication_factor: int | None
    valid_from: int
    valid_to: int | None = None


@dataclass
class StreamsHistory(GroupHistory):
    """A :class:`history.consumer.GroupHistory` with the group's topologies."""

    topology: list[TopologyTopic] = field(default_factory=list)


def _topics_of(incarnation: int, topology: Topology, at: int) -> list[TopologyTopic]:
    out: list[TopologyTopic] = []
    for sub in topology.subtopologies:
        named = [("source", t, None) for t in sub.source_topics] + [
            ("source_regex", t, None) for t in sub.source_topic_regex] + [
            ("repartition_source", t.name, t) for t in sub.repartition_source_topics] + [
            ("repartition_sink", t, None) for t in sub.repartition_sink_topics] + [
            ("changelog", t.name, t) for t in sub.state_changelog_topics]
        out.extend(TopologyTopic(incarnation, topology.epoch, sub.subtopology_id, role, name,
                                 info.partitions if info else None, info.replication_factor if info else None, at)
                   for role, name, info in named)
    return out


# ------------------------------------------------------------------------------------ replay

class StreamsReplay(GroupReplay):
    """A streams group's coordinator state, rebuilt record by record (``GroupMetadataManager.replay`` of the
    StreamsGroup* records)."""

    roles = RecordRoles(GROUP_METADATA, None, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER, CURRENT_ASSIGNMENT)
    wants_changed = "topology_changed"
    history_type = StreamsHistory
    out: StreamsHistory

    def _reset(self) -> None:
        super()._reset()
        self.topology: Topology | None = None
        self.validated_topology_epoch = -1
        self.topology_rows: list[TopologyTopic] = []

    def _apply(self, at: int, r: GroupRecord) -> None:
        if r.type == TOPOLOGY_RECORD:
            self._topology(at, None if r.is_tombstone else getattr(r, "topology", None))
            return
        if r.type == GROUP_METADATA and not r.is_tombstone:
            validated = getattr(r, "validated_topology_epoch", None)
            self.validated_topology_epoch = -1 if validated is None else validated
        super()._apply(at, r)

    def _topology(self, at: int, topology: Topology | None) -> None:
        """A topology record replaces the topology (``StreamsGroup.setTopology``); its tombstone removes it."""
        for row in self.topology_rows:
            row.valid_to = at
        self.topology, self.topology_rows = topology, []
        if topology is not None:
            self.topology_rows = _topics_of(self.incarnation, topology, at)
            self.out.topology.extend(self.topology_rows)

    def _dead(self, at: int) -> None:
        for row in self.topology_rows:
            row.valid_to = at
        super()._dead(at)

    def wants(self, info: MemberInfo) -> Any:
        """The member's topology epoch: a newer one makes the coordinator take its topology and bump the epoch."""
        return getattr(info, "topology_epoch", None)

    def state_now(self) -> tuple[str, str]:
        """Kafka's ``StreamsGroup.maybeUpdateGroupState``, with the reason it holds."""
        if not self.members:
            return "Empty", "no_members"
        if self.topology is None or self.topology.epoch != self.validated_topology_epoch:
            return "NotReady", "topology_not_validated"
        if (self.group_epoch or 0) > self.assignment_epoch:
            return "Assigning", "group_epoch_above_assignment_epoch"
        for member_id in self.members:
            current = self.currents.get(member_id)
            # StreamsGroupMember.isReconciledTo: state STABLE and member epoch = the assignment epoch
            if current is None or current.state != STABLE_MEMBER or current.member_epoch != self.assignment_epoch:
                return "Reconciling", "member_not_reconciled"
        return "Stable", "members_reconciled"

    def fact(self, member_id: str, kind: str, generation: int, unit: tuple[Any, ...], info: MemberInfo,
             at: int) -> Assignment:
        role, subtopology, partition = unit
        return Assignment(member_id, kind, generation, subtopology, partition, info.client_id, info.instance_id, at,
                          task_role=role)

    def owned(self, current: CurrentAssignment) -> Units:
        """Active tasks: standby and warm-up tasks only keep state stores warm and process nothing."""
        return frozenset(u for u in current.assigned | current.pending_revocation if u[0] == ACTIVE)

    def _assignor(self) -> str | None:
        return None  # the broker's group.streams assignor: no member asks for one, and no record names it


def derive_streams(records: Iterable[GroupRecord]) -> StreamsHistory:
    """Replay one streams group's records (any order)."""
    history = derive(records, StreamsReplay)
    assert isinstance(history, StreamsHistory)
    return history


def replay(records: Iterable[GroupRecord]) -> dict[str, list[dict[str, Any]]]:
    """Every row of one streams group, per kind (``history.KINDS``), from its records (any order)."""
    return rows(derive_streams(records))


def rows(history: StreamsHistory) -> dict[str, list[dict[str, Any]]]:
    """The rows of a replayed streams group: the consumer group's kinds with group_type 'streams', its task
    assignments as ``TASKS`` (not ``ASSIGNMENTS``: tasks are no partitions) and its topology as ``TOPOLOGY``."""
    out = rows_of(history, GROUP_TYPE, PROTOCOL_TYPE)
    for row, stay in zip(out[MEMBERSHIP], history.membership, strict=True):
        info = stay.info
        row.update(process_id=getattr(info, "process_id", None), user_endpoint=getattr(info, "user_endpoint", None),
                   topology_epoch=getattr(info, "topology_epoch", None))
    processes = {m.member_id: getattr(m.info, "process_id", None) for m in history.membership}
    out[ASSIGNMENTS] = []
    out[TASKS] = [{
        "subtopology_id": a.topic_id, "partition": a.partition, "task_kind": a.task_role, "member_id": a.member_id,
        "process_id": processes.get(a.member_id), "client_id": a.client_id, "group_instance_id": a.group_instance_id,
        "generation": a.generation, "assignment_kind": a.kind, "valid_from": a.valid_from, "valid_to": a.valid_to,
        "group_type": GROUP_TYPE,
    } for a in merged_assignments(history)]
    out[TOPOLOGY] = [{
        "incarnation": t.incarnation, "topology_epoch": t.topology_epoch, "subtopology_id": t.subtopology_id,
        "topic_role": t.topic_role, "topic": t.topic, "partitions": t.partitions,
        "replication_factor": t.replication_factor, "valid_from": t.valid_from, "valid_to": t.valid_to,
        "group_type": GROUP_TYPE,
    } for t in history.topology]
    return out
