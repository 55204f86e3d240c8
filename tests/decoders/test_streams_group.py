"""Streams-group records (types 17, 19–23), byte by byte from StreamsGroup*.json (4.3.1)."""

from __future__ import annotations

from decoders import DecodedRecord, UnknownRecord, decode_record, encode_record

GROUP_KEY = "0001" "67"  # GroupId "g"


def _decoded(key: bytes, value: bytes) -> DecodedRecord:
    record = decode_record(key, value)
    assert isinstance(record, DecodedRecord)
    assert encode_record(record.type, record.key, record.value, record.value_version) == (key, value)
    return record


def test_member_metadata_with_a_non_tagged_nullable_endpoint_and_uint16_port() -> None:
    key = bytes.fromhex("0013" + GROUP_KEY + "0001" "6d")  # type 19
    value = bytes.fromhex(
        "0000"
        "00"                  # InstanceId: null
        "00"                  # RackId: null
        "02" "63"             # ClientId "c"
        "03" "2f68"           # ClientHost "/h"
        "ffffffff"            # RebalanceTimeoutMs -1
        "00000002"            # TopologyEpoch 2
        "02" "70"             # ProcessId "p"
        "01"                  # UserEndpoint: int8 1 = present (not tagged, so an int8 marker)
        "02" "68"             #   Host "h"
        "ffff"                #   Port 65535 (uint16)
        "00"                  #   Endpoint's tagged fields
        "02" "02" "6b" "02" "76" "00"  # ClientTags: [{"k": "v"}]
        "00"
    )
    assert _decoded(key, value).value == {
        "instance_id": None, "rack_id": None, "client_id": "c", "client_host": "/h", "rebalance_timeout_ms": -1,
        "topology_epoch": 2, "process_id": "p", "user_endpoint": {"host": "h", "port": 65535},
        "client_tags": [{"key": "k", "value": "v"}],
    }
    no_endpoint = value[:19] + bytes.fromhex("ff" "01" "00")  # int8 -1 = null, no client tags
    assert _decoded(key, no_endpoint).value["user_endpoint"] is None  # type: ignore[index]


def test_group_metadata_with_the_4_2_tags() -> None:
    key = bytes.fromhex("0011" + GROUP_KEY)  # type 17
    value = bytes.fromhex(
        "0000"
        "00000005"                    # Epoch 5
        "0000000000000009"            # MetadataHash 9 (not tagged)
        "02"                          # 2 tagged fields
        "00" "04" "00000003"          #   tag 0 ValidatedTopologyEpoch 3
        "01" "06" "02" "02" "61" "02" "62" "00"  # tag 1 LastAssignmentConfigs [{"a": "b"}], 6 bytes
    )
    assert _decoded(key, value).value == {"epoch": 5, "metadata_hash": 9, "validated_topology_epoch": 3,
                                          "last_assignment_configs": [{"key": "a", "value": "b"}]}
    defaults = bytes.fromhex("0000" "00000005" "0000000000000009" "00")
    # absent tags read as their defaults; LastAssignmentConfigs' JSON "default": null means "no
    # default" to Kafka's generator, i.e. the empty array
    assert _decoded(key, defaults).value == {"epoch": 5, "metadata_hash": 9, "validated_topology_epoch": -1,
                                             "last_assignment_configs": []}


def test_topology_with_copartition_groups_of_int16_indexes() -> None:
    key = bytes.fromhex("0017" + GROUP_KEY)  # type 23
    value = bytes.fromhex(
        "0000"
        "00000001"                    # Epoch 1
        "02"                          # Subtopologies: 1
        "02" "30"                     #   SubtopologyId "0"
        "02" "02" "73"                #   SourceTopics ["s"]
        "01"                          #   SourceTopicRegex []
        "02" "02" "63" "00000003" "0001" "02" "02" "6b" "02" "76" "00" "00"  # StateChangelogTopics [{c,3,1,[k=v]}]
        "01"                          #   RepartitionSinkTopics []
        "01"                          #   RepartitionSourceTopics []
        "02" "02" "0000" "01" "01" "00"  # CopartitionGroups [{SourceTopics [0], [], []}]
        "00"                          #   Subtopology tags
        "00"
    )
    record = _decoded(key, value)
    sub = record.value["subtopologies"][0]  # type: ignore[index]
    assert sub["state_changelog_topics"] == [{"name": "c", "partitions": 3, "replication_factor": 1,
                                              "topic_configs": [{"key": "k", "value": "v"}]}]
    assert sub["copartition_groups"] == [{"source_topics": [0], "source_topic_regex": [],
                                          "repartition_source_topics": []}]


def test_current_member_assignment_with_4_2_assignment_epochs_on_tasks() -> None:
    key = bytes.fromhex("0016" + GROUP_KEY + "0001" "6d")  # type 22
    value = bytes.fromhex(
        "0000" "00000002" "00000001" "01"   # MemberEpoch 2, Previous 1, State 1 = STABLE (streams codes start at 1)
        "02" "02" "30" "02" "00000000" "01" "00" "05" "02" "00000002"  # ActiveTasks [{"0", [0], epochs [2]}]
        "01" "01" "01" "01" "01"            # the five other task lists: empty
        "00"
    )
    record = _decoded(key, value)
    assert record.value["active_tasks"] == [{"subtopology_id": "0", "partitions": [0], "assignment_epochs": [2]}]  # type: ignore[index]
    assert record.value["state"] == 1  # type: ignore[index]


def test_type_18_was_never_released_and_is_unknown() -> None:
    assert isinstance(decode_record(bytes.fromhex("0012" + GROUP_KEY), None), UnknownRecord)
