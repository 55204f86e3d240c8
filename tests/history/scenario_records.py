"""The reference coordinator's records for a scenario as the replay's input, grouped by group id: what silver
holds of them (silver.group_metadata with the decoded consumer-protocol bytes of silver.group_members,
silver.offset_commits, silver.consumer_group_records), built from ``decoders.decode_record`` without Spark."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from decoders import decode_record
from history import classic, consumer
from pipelines.gold.group_history import consumer_record_from_row


@dataclass
class GroupInput:
    classic_records: list[classic.GroupMetadataRecord] = field(default_factory=list)
    commits: list[classic.Commit] = field(default_factory=list)
    consumer_records: list[consumer.GroupRecord] = field(default_factory=list)


def _member(m: dict[str, Any]) -> classic.ClassicMember:
    subscription, assignment = m.get("subscription") or {}, m.get("assignment") or {}
    return classic.ClassicMember(
        member_id=m["member_id"], group_instance_id=m.get("group_instance_id"), client_id=m.get("client_id"),
        client_host=m.get("client_host"), session_timeout_ms=m.get("session_timeout"),
        rebalance_timeout_ms=m.get("rebalance_timeout"),
        subscribed_topics=tuple(subscription["topics"]) if subscription.get("topics") is not None else None,
        assigned=tuple((tp["topic"], tuple(tp["partitions"])) for tp in assignment.get("partitions") or ()))


def group_inputs(records: list[Any]) -> dict[str, GroupInput]:
    """group id -> its records, in the order the coordinator appended them (``records``: SimulationResult.records)."""
    groups: dict[str, GroupInput] = {}
    for offset, record in enumerate(records):
        decoded = decode_record(record.key, record.value)
        value = decoded.value
        if decoded.type == "group_metadata":
            into = groups.setdefault(decoded.key["group"], GroupInput())
            if value is None:
                into.classic_records.append(classic.GroupMetadataRecord(record.timestamp, (0, offset), True))
                continue
            into.classic_records.append(classic.GroupMetadataRecord(
                at_ms=record.timestamp, position=(0, offset), generation=value["generation"],
                protocol_type=value.get("protocol_type"), protocol=value.get("protocol"), leader=value.get("leader"),
                current_state_ms=value.get("current_state_timestamp"), member_count=len(value["members"]),
                members=tuple(_member(m) for m in value["members"])))
        elif decoded.type == "offset_commit":
            if value is not None and value.get("commit_timestamp") is not None:
                groups.setdefault(decoded.key["group"], GroupInput()).commits.append(classic.Commit(
                    value["commit_timestamp"], decoded.key["topic"], decoded.key["partition"]))
        elif decoded.type in consumer.RECORD_TYPES:
            groups.setdefault(decoded.key["group_id"], GroupInput()).consumer_records.append(consumer_record_from_row({
                "type": decoded.type, "is_tombstone": value is None, "at_ms": record.timestamp,
                "source_partition": 0, "source_offset": offset, "member_id": decoded.key.get("member_id"),
                "value": None if value is None else json.dumps(value, default=str)}))
    return groups
