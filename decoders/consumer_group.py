"""KIP-848 ("consumer" rebalance protocol) group records: key types 3–8 and 16.

Authority: ``group-coordinator/src/main/resources/common/message/ConsumerGroup*.json`` at
Kafka 4.3.1. All values are version 0 and flexible; keys are non-flexible.

Layout era: these are the **3.8+** layouts. Kafka 3.7's early-access records for types 4,
5, 7 and 8 had different fields at the same version number (e.g. a ``TargetMemberEpoch``
int32 where 3.8 has the int8 ``State``) and cannot be read with these tables — they
fail with a :class:`~decoders.errors.DecodeError` or, rarely, misdecode. Fields added
since 3.8 are all tagged (``MetadataHash`` 4.1, ``AssignmentTimestamp`` and
``AssignmentEpochs`` 4.3), so older 3.8+ records read fine with their defaults.

Topic ids, not names, identify topics in assignments: keep them (``Uuid``) and join with
cluster metadata downstream.
"""

from __future__ import annotations

from decoders.spec import MEMBER_ID, ArrayOf, field, group_record, struct

_NO_DEFAULT = 'JSON "default": null = no default: the empty array; null is written explicitly'

# 3: ConsumerGroupMetadata ---------------------------------------------------------------
CONSUMER_GROUP_METADATA_VALUE = struct(
    "ConsumerGroupMetadataValue",
    field("Epoch", "int32", "0+", note="the group epoch; Kafka 3.7 (KIP-848)"),
    field("MetadataHash", "int64", "0+", tag=0, tagged="0+", default=0,
          note="tag 0: Kafka 4.1 (KIP-1101), hash of the subscribed topics' metadata"),
)

# 4: ConsumerGroupPartitionMetadata ------------------------------------------------------
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
    field("PartitionMetadata", ArrayOf(_PARTITION_METADATA), "0+", note="deprecated: unused after 4.0"),
)
CONSUMER_GROUP_PARTITION_METADATA_VALUE = struct(
    "ConsumerGroupPartitionMetadataValue",
    field("Topics", ArrayOf(_TOPIC_METADATA), "0+",
          note="3.8 layout (3.7 had a leading Epoch int32); 4.1+ brokers only write tombstones (KIP-1101)"),
)

# 5: ConsumerGroupMemberMetadata ---------------------------------------------------------
_CLASSIC_PROTOCOL = struct(
    "ClassicProtocol",
    field("Name", "string", "0+"),
    field("Metadata", "bytes", "0+", note="ConsumerProtocolSubscription bytes"),
)
_CLASSIC_MEMBER_METADATA = struct(
    "ClassicMemberMetadata",
    field("SessionTimeoutMs", "int32", "0+"),
    field("SupportedProtocols", ArrayOf(_CLASSIC_PROTOCOL), "0+"),
)
CONSUMER_GROUP_MEMBER_METADATA_VALUE = struct(
    "ConsumerGroupMemberMetadataValue",
    field("InstanceId", "string", "0+", nullable="0+"),
    field("RackId", "string", "0+", nullable="0+"),
    field("ClientId", "string", "0+"),
    field("ClientHost", "string", "0+"),
    field("SubscribedTopicNames", "[]string", "0+"),
    field("SubscribedTopicRegex", "string", "0+", nullable="0+"),
    field("RebalanceTimeoutMs", "int32", "0+", default=-1),
    field("ServerAssignor", "string", "0+", nullable="0+", note="e.g. 'uniform', 'range'; null if unused"),
    # The JSON says "default": null — a JSON null, which Kafka's generator reads as *no*
    # default: the default is an empty struct, a null is written explicitly (tag 0, size 1,
    # varint 0), and an absent tag reads back as the empty struct (FieldSpec.fieldDefault).
    field("ClassicMemberMetadata", _CLASSIC_MEMBER_METADATA, "0+", nullable="0+", tag=0, tagged="0+",
          note="tag 0: Kafka 3.8 (KIP-848 upgrade path); null for consumer-protocol members"),
)

# 6: ConsumerGroupTargetAssignmentMetadata -----------------------------------------------
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = struct(
    "ConsumerGroupTargetAssignmentMetadataValue",
    field("AssignmentEpoch", "int32", "0+"),
    field("AssignmentTimestamp", "int64", "0+", tag=0, tagged="0+", default=0, ignorable=True,
          note="tag 0: Kafka 4.3 (KIP-1263), when the assignment computation finished"),
)

# 7: ConsumerGroupTargetAssignmentMember -------------------------------------------------
_TOPIC_PARTITION = struct(
    "TopicPartition",
    field("TopicId", "uuid", "0+"),
    field("Partitions", "[]int32", "0+"),
)
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = struct(
    "ConsumerGroupTargetAssignmentMemberValue",
    field("TopicPartitions", ArrayOf(_TOPIC_PARTITION), "0+",
          note="3.8 layout (3.7 had Error/MetadataVersion/MetadataBytes)"),
)

# 8: ConsumerGroupCurrentMemberAssignment ------------------------------------------------
_TOPIC_PARTITIONS = struct(
    "TopicPartitions",
    field("TopicId", "uuid", "0+"),
    field("Partitions", "[]int32", "0+"),
    field("AssignmentEpochs", "[]int32", "0+", nullable="0+", tag=0, tagged="0+",
          note="tag 0: Kafka 4.3, per-partition assignment epoch (fences zombie commits). " + _NO_DEFAULT),
)
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = struct(
    "ConsumerGroupCurrentMemberAssignmentValue",
    field("MemberEpoch", "int32", "0+"),
    field("PreviousMemberEpoch", "int32", "0+"),
    field("State", "int8", "0+", note="3.8: 0 STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS, 127 UNKNOWN"),
    field("AssignedPartitions", ArrayOf(_TOPIC_PARTITIONS), "0+"),
    field("PartitionsPendingRevocation", ArrayOf(_TOPIC_PARTITIONS), "0+"),
)

# 16: ConsumerGroupRegularExpression -----------------------------------------------------
CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE = struct(
    "ConsumerGroupRegularExpressionValue",
    field("Topics", "[]string", "0+", note="topics the regex resolved to; Kafka 4.0 (KIP-848 regex)"),
    field("Version", "int64", "0+", note="metadata image version used for the resolution"),
    field("Timestamp", "int64", "0+", note="resolution time, ms"),
)


RECORDS = (
    group_record(3, "consumer_group_metadata", "ConsumerGroupMetadataKey", CONSUMER_GROUP_METADATA_VALUE,
            note="KIP-848 group epoch; Kafka 3.7+"),
    group_record(4, "consumer_group_partition_metadata", "ConsumerGroupPartitionMetadataKey",
            CONSUMER_GROUP_PARTITION_METADATA_VALUE, note="subscription metadata; 3.8-4.0, tombstones only from 4.1"),
    group_record(5, "consumer_group_member_metadata", "ConsumerGroupMemberMetadataKey",
            CONSUMER_GROUP_MEMBER_METADATA_VALUE, MEMBER_ID, note="member metadata; 3.8+ layout"),
    group_record(6, "consumer_group_target_assignment_metadata", "ConsumerGroupTargetAssignmentMetadataKey",
            CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE, note="assignment epoch"),
    group_record(7, "consumer_group_target_assignment_member", "ConsumerGroupTargetAssignmentMemberKey",
            CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE, MEMBER_ID, note="target assignment; 3.8+ layout"),
    group_record(8, "consumer_group_current_member_assignment", "ConsumerGroupCurrentMemberAssignmentKey",
            CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE, MEMBER_ID, note="current assignment; 3.8+ layout"),
    group_record(16, "consumer_group_regular_expression", "ConsumerGroupRegularExpressionKey",
            CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE,
            field("RegularExpression", "string", "0"), note="resolved regex subscription; Kafka 4.0+"),
)
