"""Share-group (KIP-932) records in ``__consumer_offsets``: key types 9–15.

Authority: ``group-coordinator/src/main/resources/common/message/ShareGroup*.json`` at
Kafka 4.3.1, and at the tip of the 4.0 branch for type 9. All values are v0, flexible.
(The share-partition *state* lives in ``__share_group_state`` and is not covered.)

Layout choice — two types changed between 4.0 and 4.1 *without* a version bump (the
schemas were marked "KIP-932 is in development" until 4.2):

* type 11 ``ShareGroupMetadataValue``: 4.0 = ``Epoch``; 4.1+ appends a non-tagged
  ``MetadataHash`` int64.
* type 15 ``ShareGroupStatePartitionMetadataValue``: 4.0 = ``InitializedTopics``,
  ``DeletingTopics``; 4.1+ puts ``InitializingTopics`` first.

We describe the **4.1+** layouts (the newest, and what every supported broker writes). A
record written by a 4.0 broker with share groups enabled (a preview feature there) fails
for type 11 with ``truncated`` and for type 15 usually with ``truncated``/``over-long``.

Type 9 ``ShareGroupPartitionMetadata`` exists **only in 4.0** (removed in 4.1, whose
brokers skip it as an unknown type); we decode it with its 4.0 layout.
"""

from __future__ import annotations

from decoders.spec import MEMBER_ID, ArrayOf, field, group_record, struct

# 9: ShareGroupPartitionMetadata (4.0 only) ----------------------------------------------
_PARTITION_METADATA = struct(
    "PartitionMetadata",
    field("Partition", "int32", "0+"),
    field("Racks", "[]string", "0+"),
)
_TOPIC_METADATA = struct(
    "TopicMetadata",
    field("TopicId", "uuid", "0+"),
    field("TopicName", "string", "0+"),
    field("NumPartitions", "int32", "0+"),
    field("PartitionMetadata", ArrayOf(_PARTITION_METADATA), "0+"),
)
SHARE_GROUP_PARTITION_METADATA_VALUE = struct(
    "ShareGroupPartitionMetadataValue",
    field("Topics", ArrayOf(_TOPIC_METADATA), "0+", note="Kafka 4.0 only (KIP-932 preview)"),
)

# 10: ShareGroupMemberMetadata -----------------------------------------------------------
SHARE_GROUP_MEMBER_METADATA_VALUE = struct(
    "ShareGroupMemberMetadataValue",
    field("RackId", "string", "0+", nullable="0+"),
    field("ClientId", "string", "0+"),
    field("ClientHost", "string", "0+"),
    field("SubscribedTopicNames", "[]string", "0+"),
)

# 11: ShareGroupMetadata -----------------------------------------------------------------
SHARE_GROUP_METADATA_VALUE = struct(
    "ShareGroupMetadataValue",
    field("Epoch", "int32", "0+", note="the group epoch; Kafka 4.0"),
    field("MetadataHash", "int64", "0+", note="NOT tagged: added in Kafka 4.1 (KIP-1101) at the same v0"),
)

# 12: ShareGroupTargetAssignmentMetadata -------------------------------------------------
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = struct(
    "ShareGroupTargetAssignmentMetadataValue",
    field("AssignmentEpoch", "int32", "0+"),
    field("AssignmentTimestamp", "int64", "0+", tag=0, tagged="0+", default=0, ignorable=True,
          note="tag 0: Kafka 4.3 (KIP-1263)"),
)

# 13: ShareGroupTargetAssignmentMember ---------------------------------------------------
_TOPIC_PARTITION = struct(
    "TopicPartition",
    field("TopicId", "uuid", "0+"),
    field("Partitions", "[]int32", "0+"),
)
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = struct(
    "ShareGroupTargetAssignmentMemberValue",
    field("TopicPartitions", ArrayOf(_TOPIC_PARTITION), "0+"),
)

# 14: ShareGroupCurrentMemberAssignment --------------------------------------------------
_TOPIC_PARTITIONS = struct(
    "TopicPartitions",
    field("TopicId", "uuid", "0+"),
    field("Partitions", "[]int32", "0+"),
)
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = struct(
    "ShareGroupCurrentMemberAssignmentValue",
    field("MemberEpoch", "int32", "0+"),
    field("PreviousMemberEpoch", "int32", "0+"),
    field("State", "int8", "0+", note="MemberState codes as for consumer groups (0 STABLE ...)"),
    field("AssignedPartitions", ArrayOf(_TOPIC_PARTITIONS), "0+"),
)

# 15: ShareGroupStatePartitionMetadata ---------------------------------------------------
_TOPIC_PARTITIONS_INFO = struct(
    "TopicPartitionsInfo",
    field("TopicId", "uuid", "0+"),
    field("TopicName", "string", "0+"),
    field("Partitions", "[]int32", "0+"),
)
_TOPIC_INFO = struct(
    "TopicInfo",
    field("TopicId", "uuid", "0+"),
    field("TopicName", "string", "0+"),
)
SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = struct(
    "ShareGroupStatePartitionMetadataValue",
    field("InitializingTopics", ArrayOf(_TOPIC_PARTITIONS_INFO), "0+",
          note="added in Kafka 4.1 at the same v0, before the 4.0 fields"),
    field("InitializedTopics", ArrayOf(_TOPIC_PARTITIONS_INFO), "0+", note="Kafka 4.0"),
    field("DeletingTopics", ArrayOf(_TOPIC_INFO), "0+", note="Kafka 4.0"),
)

RECORDS = (
    group_record(9, "share_group_partition_metadata", "ShareGroupPartitionMetadataKey",
                 SHARE_GROUP_PARTITION_METADATA_VALUE, note="Kafka 4.0 only; removed in 4.1"),
    group_record(10, "share_group_member_metadata", "ShareGroupMemberMetadataKey",
                 SHARE_GROUP_MEMBER_METADATA_VALUE, MEMBER_ID, note="Kafka 4.0+"),
    group_record(11, "share_group_metadata", "ShareGroupMetadataKey", SHARE_GROUP_METADATA_VALUE,
                 note="4.1+ layout (4.0 lacked MetadataHash)"),
    group_record(12, "share_group_target_assignment_metadata", "ShareGroupTargetAssignmentMetadataKey",
                 SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE, note="Kafka 4.0+"),
    group_record(13, "share_group_target_assignment_member", "ShareGroupTargetAssignmentMemberKey",
                 SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE, MEMBER_ID, note="Kafka 4.0+"),
    group_record(14, "share_group_current_member_assignment", "ShareGroupCurrentMemberAssignmentKey",
                 SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE, MEMBER_ID, note="Kafka 4.0+"),
    group_record(15, "share_group_state_partition_metadata", "ShareGroupStatePartitionMetadataKey",
                 SHARE_GROUP_STATE_PARTITION_METADATA_VALUE, note="4.1+ layout (4.0 lacked InitializingTopics)"),
)
