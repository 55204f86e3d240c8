"""tests/history/captured/: records captured from a real Kafka 4.2 broker (capture_group_records.py) decode,
and agree with what the Admin client showed at each step.

The agreement checked here is the plainest one, read straight off the log: the group epoch of the last
group-metadata record up to a step is the epoch the Admin client described, and the members whose
member-metadata record is live (written and not yet tombstoned) are the members it listed. The replay in
history/ is held to the whole description.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from decoders import DecodedRecord, coordinator_partition, decode_record
from tests.history.capture_group_records import CAPTURED, OFFSETS_PARTITIONS

SCENARIOS = sorted(path.name.removesuffix(".jsonl") for path in CAPTURED.glob("*.jsonl"))
#: The record types of each kind of group: (group metadata, member metadata).
KINDS = {"share": ("share_group_metadata", "share_group_member_metadata"),
         "streams": ("streams_group_metadata", "streams_group_member_metadata")}


def _load(scenario: str) -> tuple[list[tuple[dict[str, Any], DecodedRecord]], dict[str, Any]]:
    """The scenario's records, each with its decoding (every one of a known type), and its describe file."""
    raw = [json.loads(line) for line in (CAPTURED / f"{scenario}.jsonl").read_text().splitlines()]
    decoded = []
    for record in raw:
        value = None if record["value"] is None else base64.b64decode(record["value"])
        one = decode_record(base64.b64decode(record["key"]), value)
        assert isinstance(one, DecodedRecord), f"offset {record['offset']}: unknown type {one!r}"
        decoded.append((record, one))
    return decoded, json.loads((CAPTURED / f"{scenario}.describe.json").read_text())


def _kind(scenario: str) -> str:
    return scenario.split("_", 1)[0]


def test_both_kinds_of_group_were_captured() -> None:
    assert {_kind(s) for s in SCENARIOS} == set(KINDS)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_captured_record_decodes_to_a_known_type_of_the_scenarios_group(scenario: str) -> None:
    records, described = _load(scenario)
    assert records
    for raw, record in records:
        assert record.key.get("group", record.key.get("group_id")) == described["group"]
        assert raw["partition"] == coordinator_partition(described["group"], OFFSETS_PARTITIONS)
    offsets = [raw["offset"] for raw, _ in records]
    assert offsets == sorted(set(offsets))
    types = {record.type for _, record in records}
    assert set(KINDS[_kind(scenario)]) <= types


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_at_each_step_the_log_has_the_epoch_and_the_members_the_admin_client_described(scenario: str) -> None:
    records, described = _load(scenario)
    group_type, member_type = KINDS[_kind(scenario)]
    steps = described["steps"]
    assert [s["after_offset"] for s in steps] == sorted(s["after_offset"] for s in steps)
    for step in steps:
        upto = [record for raw, record in records if raw["offset"] <= step["after_offset"]]
        if step["describe"]["state"] == "DEAD":  # deleted: the group's metadata is tombstoned
            assert upto[-1].is_tombstone and [r for r in upto if r.type == group_type][-1].is_tombstone
            continue
        epoch = [r.value["epoch"] for r in upto if r.type == group_type and r.value is not None][-1]
        assert epoch == step["describe"]["group_epoch"], step["step"]
        live: set[str] = set()
        for r in upto:
            if r.type == member_type:
                (live.discard if r.is_tombstone else live.add)(r.key["member_id"])
        assert live == {m["member_id"] for m in step["describe"]["members"]}, step["step"]
