"""Share groups (KIP-932, queue-like consumption): their history, replayed from their records.

A share group keeps the same records as a KIP-848 consumer group under other types (layouts in
``decoders/share_group.py``; written by ``GroupCoordinatorRecordHelpers.newShareGroup*Record``) and Kafka builds
both on ``ModernGroup``, so the replay is :class:`history.consumer.GroupReplay` with the share group's types:

* ShareGroupMetadata (type 11): the **group epoch**, bumped when a member joins, leaves or is fenced, or when
  subscriptions or the subscribed topics' metadata change; a tombstone when the group is deleted;
* ShareGroupMemberMetadata (10): one per member (rack, client id, host, subscribed topic names: no instance id,
  rebalance timeout or assignor, ``ShareGroupMember``); a tombstone when the member leaves or is fenced;
* ShareGroupTargetAssignmentMetadata (12) and ...Member (13): the **target assignment** and its epoch, as for
  consumer groups (only members whose target changed get a member record);
* ShareGroupCurrentMemberAssignment (14): what the member is assigned now and its **member epoch**. A share
  member never revokes: many members may fetch from one partition at once, so ``ShareGroupAssignmentBuilder``
  moves a member straight to its target at its next heartbeat (member epoch = assignment epoch, state STABLE);
  there are no partitions pending revocation;
* ShareGroupStatePartitionMetadata (15; ShareGroupPartitionMetadata, 9, in Kafka 4.0 only): which topics'
  share-partition state is initializing, initialized or being deleted; it gives the topic names of the ids the
  assignments carry. Partitions are assigned only once initialized, so the coordinator bumps the epoch when a
  topic's initialization completes: with no other change that is the cause 'share_partitions_initialized'.

The group state is Kafka's ``ShareGroup.maybeUpdateGroupState``: Empty without members, else Stable, and Dead on
the tombstone (``ShareGroup.ShareGroupState``: EMPTY, STABLE, DEAD). Because Stable says nothing of the
assignment, a share group's epoch *settles* (its rebalance completes, its generation's ``stable_at``) when the
target assignment has the group epoch and every member is at it, as a consumer group's Stable would.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from history.consumer import (
    GroupHistory,
    GroupRecord,
    GroupReplay,
    RecordRoles,
    Snapshot,
    derive,
    rows_of,
)

GROUP_TYPE = "share"
PROTOCOL_TYPE = "share"  # ShareGroup.PROTOCOL_TYPE

GROUP_METADATA = "share_group_metadata"
PARTITION_METADATA = "share_group_partition_metadata"  # Kafka 4.0 only
MEMBER_METADATA = "share_group_member_metadata"
TARGET_METADATA = "share_group_target_assignment_metadata"
TARGET_MEMBER = "share_group_target_assignment_member"
CURRENT_ASSIGNMENT = "share_group_current_member_assignment"
STATE_PARTITION_METADATA = "share_group_state_partition_metadata"
RECORD_TYPES = (PARTITION_METADATA, MEMBER_METADATA, GROUP_METADATA, TARGET_METADATA, TARGET_MEMBER,
                CURRENT_ASSIGNMENT, STATE_PARTITION_METADATA)
"""silver.consumer_group_records types of share groups (key types 9-15, ``decoders/share_group.py``)."""


class ShareReplay(GroupReplay):
    """A share group's coordinator state, rebuilt record by record (``GroupMetadataManager.replay`` of the
    ShareGroup* records)."""

    # Both topic-name records play the role of the consumer group's PartitionMetadata: names of topic ids.
    roles = RecordRoles(GROUP_METADATA, PARTITION_METADATA, MEMBER_METADATA, TARGET_METADATA, TARGET_MEMBER,
                        CURRENT_ASSIGNMENT)

    def _reset(self) -> None:
        super()._reset()
        self.initialized: frozenset[str] = frozenset()
        self.initialized_at: int | None = None  # when topics last completed their initialization

    def _apply(self, at: int, r: GroupRecord) -> None:
        if r.type == STATE_PARTITION_METADATA:
            self.out.topic_names.update(dict(r.topic_names))
            initialized = frozenset(r.initialized_topics) if not r.is_tombstone else frozenset()
            if initialized - self.initialized:
                self.initialized_at = at
            self.initialized = initialized
        else:
            super()._apply(at, r)

    def cause(self, before: Snapshot, after: Snapshot, since: int) -> str:
        found = super().cause(before, after, since)
        if found == "unknown" and self.initialized_at is not None and self.initialized_at >= since:
            return "share_partitions_initialized"
        return found

    def state_now(self) -> tuple[str, str]:
        """Kafka's ``ShareGroup.maybeUpdateGroupState``: Empty without members, Stable with any."""
        if not self.members:
            return "Empty", "no_members"
        return "Stable", "has_members"

    def reconciled(self, state: str) -> bool:
        """The target has the group epoch and every member is at it (the consumer group's Stable)."""
        return state == "Stable" and super().state_now()[0] == "Stable"

    def _assignor(self) -> str | None:
        return None  # the broker's group.share.assignors: no member asks for one, and no record names it


def replay(records: Iterable[GroupRecord]) -> dict[str, list[dict[str, Any]]]:
    """Every row of one share group, per kind (``history.KINDS``), from its records (any order)."""
    return rows(derive_share(records))


def derive_share(records: Iterable[GroupRecord]) -> GroupHistory:
    """Replay one share group's records (any order)."""
    return derive(records, ShareReplay)


def rows(history: GroupHistory) -> dict[str, list[dict[str, Any]]]:
    """The rows of a replayed share group: the consumer group's, with group_type 'share'."""
    return rows_of(history, GROUP_TYPE, PROTOCOL_TYPE)
