"""Streams-group (KIP-1071) records: key types 17 and 19–23, Kafka 4.1+.

Authority: ``group-coordinator/src/main/resources/common/message/StreamsGroup*.json`` at
Kafka 4.3.1. All values are v0, flexible. Type 18 (``StreamsGroupPartitionMetadata``)
existed only on trunk between 2024-12 and 2025-06 and was never released: it decodes as
an unknown record type. Changes after 4.1 are tagged fields only (4.2: ``ValidatedTopologyEpoch``,
``LastAssignmentConfigs``, ``AssignmentEpochs``; 4.3: ``AssignmentTimestamp``).
Unreleased trunk tags (``StoredDescriptionTopologyEpoch`` tag 2 and
``FailedDescriptionTopologyEpoch`` tag 3 on the metadata value, after 4.3.1) are not
described; they are skipped like any unknown tag.

Member ``State`` codes start at 1 here (``streams/MemberState.java``: 1 STABLE,
2 UNREVOKED_TASKS, 3 UNRELEASED_TASKS, 127 UNKNOWN), unlike consumer/share groups.
"""

from __future__ import annotations

from decoders.spec import MEMBER_ID, ArrayOf, field, group_record, struct

# Kafka's schemas write "default": null (a JSON null) for the nullable tagged arrays below.
# The generator reads that as *no* default (FieldSpec.fieldDefault): the default is the empty
# array, which is omitted, while a null is written explicitly (tag, size 1, varint 0).
_NO_DEFAULT = 'JSON "default": null = no default: the empty array; null is written explicitly'

# 17: StreamsGroupMetadata ---------------------------------------------------------------
_LAST_ASSIGNMENT_CONFIG = struct(
    "LastAssignmentConfig",
    field("Key", "string", "0+"),
    field("Value", "string", "0+"),
)
STREAMS_GROUP_METADATA_VALUE = struct(
    "StreamsGroupMetadataValue",
    field("Epoch", "int32", "0+", note="the group epoch; Kafka 4.1"),
    field("MetadataHash", "int64", "0+", note="not tagged; Kafka 4.1"),
    field("ValidatedTopologyEpoch", "int32", "0+", tag=0, tagged="0+", default=-1, note="tag 0: Kafka 4.2"),
    field("LastAssignmentConfigs", ArrayOf(_LAST_ASSIGNMENT_CONFIG), "", nullable="0+", tag=1, tagged="0+",
          note="tag 1: Kafka 4.2. " + _NO_DEFAULT),
)

# 19: StreamsGroupMemberMetadata ---------------------------------------------------------
_ENDPOINT = struct(
    "Endpoint",
    field("Host", "string", "0+"),
    field("Port", "uint16", "0+"),
)
_KEY_VALUE = struct(
    "KeyValue",
    field("Key", "string", "0+"),
    field("Value", "string", "0+"),
)
STREAMS_GROUP_MEMBER_METADATA_VALUE = struct(
    "StreamsGroupMemberMetadataValue",
    field("InstanceId", "string", "0+", nullable="0+"),
    field("RackId", "string", "0+", nullable="0+"),
    field("ClientId", "string", "0+"),
    field("ClientHost", "string", "0+"),
    field("RebalanceTimeoutMs", "int32", "0+", default=-1),
    field("TopologyEpoch", "int32", "0+"),
    field("ProcessId", "string", "0+"),
    field("UserEndpoint", _ENDPOINT, "0+", nullable="0+", default=None,
          note="not tagged: int8 null marker; interactive-query endpoint"),
    field("ClientTags", ArrayOf(_KEY_VALUE), "0+"),
)

# 20: StreamsGroupTargetAssignmentMetadata -----------------------------------------------
STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = struct(
    "StreamsGroupTargetAssignmentMetadataValue",
    field("AssignmentEpoch", "int32", "0+"),
    field("AssignmentTimestamp", "int64", "0+", tag=0, tagged="0+", default=0, ignorable=True,
          note="tag 0: Kafka 4.3 (KIP-1263)"),
)

# 21: StreamsGroupTargetAssignmentMember -------------------------------------------------
_TASK_IDS = struct(
    "TaskIds",
    field("SubtopologyId", "string", "0+"),
    field("Partitions", "[]int32", "0+"),
)
STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = struct(
    "StreamsGroupTargetAssignmentMemberValue",
    field("ActiveTasks", ArrayOf(_TASK_IDS), "0+"),
    field("StandbyTasks", ArrayOf(_TASK_IDS), "0+"),
    field("WarmupTasks", ArrayOf(_TASK_IDS), "0+"),
)

# 22: StreamsGroupCurrentMemberAssignment ------------------------------------------------
_TASK_IDS_WITH_EPOCHS = struct(
    "TaskIds",
    field("SubtopologyId", "string", "0+"),
    field("Partitions", "[]int32", "0+"),
    field("AssignmentEpochs", "[]int32", "0+", nullable="0+", tag=0, tagged="0+",
          note="tag 0: Kafka 4.2. " + _NO_DEFAULT),
)
STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = struct(
    "StreamsGroupCurrentMemberAssignmentValue",
    field("MemberEpoch", "int32", "0+"),
    field("PreviousMemberEpoch", "int32", "0+"),
    field("State", "int8", "0+", note="1 STABLE, 2 UNREVOKED_TASKS, 3 UNRELEASED_TASKS, 127 UNKNOWN"),
    field("ActiveTasks", ArrayOf(_TASK_IDS_WITH_EPOCHS), "0+"),
    field("StandbyTasks", ArrayOf(_TASK_IDS_WITH_EPOCHS), "0+"),
    field("WarmupTasks", ArrayOf(_TASK_IDS_WITH_EPOCHS), "0+"),
    field("ActiveTasksPendingRevocation", ArrayOf(_TASK_IDS_WITH_EPOCHS), "0+"),
    field("StandbyTasksPendingRevocation", ArrayOf(_TASK_IDS_WITH_EPOCHS), "0+"),
    field("WarmupTasksPendingRevocation", ArrayOf(_TASK_IDS_WITH_EPOCHS), "0+"),
)

# 23: StreamsGroupTopology ---------------------------------------------------------------
_TOPIC_CONFIG = struct(
    "TopicConfig",
    field("key", "string", "0+"),
    field("value", "string", "0+"),
)
_TOPIC_INFO = struct(
    "TopicInfo",
    field("Name", "string", "0+"),
    field("Partitions", "int32", "0+"),
    field("ReplicationFactor", "int16", "0+"),
    field("TopicConfigs", ArrayOf(_TOPIC_CONFIG), "0+"),
)
_COPARTITION_GROUP = struct(
    "CopartitionGroup",
    field("SourceTopics", "[]int16", "0+", note="indexes into the subtopology's source_topics"),
    field("SourceTopicRegex", "[]int16", "0+"),
    field("RepartitionSourceTopics", "[]int16", "0+"),
)
_SUBTOPOLOGY = struct(
    "Subtopology",
    field("SubtopologyId", "string", "0+"),
    field("SourceTopics", "[]string", "0+"),
    field("SourceTopicRegex", "[]string", "0+"),
    field("StateChangelogTopics", ArrayOf(_TOPIC_INFO), "0+"),
    field("RepartitionSinkTopics", "[]string", "0+"),
    field("RepartitionSourceTopics", ArrayOf(_TOPIC_INFO), "0+"),
    field("CopartitionGroups", ArrayOf(_COPARTITION_GROUP), "0+"),
)
STREAMS_GROUP_TOPOLOGY_VALUE = struct(
    "StreamsGroupTopologyValue",
    field("Epoch", "int32", "0+"),
    field("Subtopologies", ArrayOf(_SUBTOPOLOGY), "0+"),
)

RECORDS = (
    group_record(17, "streams_group_metadata", "StreamsGroupMetadataKey", STREAMS_GROUP_METADATA_VALUE,
                 note="Kafka 4.1+"),
    group_record(19, "streams_group_member_metadata", "StreamsGroupMemberMetadataKey",
                 STREAMS_GROUP_MEMBER_METADATA_VALUE, MEMBER_ID, note="Kafka 4.1+"),
    group_record(20, "streams_group_target_assignment_metadata", "StreamsGroupTargetAssignmentMetadataKey",
                 STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE, note="Kafka 4.1+"),
    group_record(21, "streams_group_target_assignment_member", "StreamsGroupTargetAssignmentMemberKey",
                 STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE, MEMBER_ID, note="Kafka 4.1+"),
    group_record(22, "streams_group_current_member_assignment", "StreamsGroupCurrentMemberAssignmentKey",
                 STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE, MEMBER_ID, note="Kafka 4.1+"),
    group_record(23, "streams_group_topology", "StreamsGroupTopologyKey", STREAMS_GROUP_TOPOLOGY_VALUE,
                 note="Kafka 4.1+"),
)
