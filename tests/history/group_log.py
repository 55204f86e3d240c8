"""Records of one group as a broker writes them to ``__consumer_offsets``, for the share and streams replay tests.

Both the hand-built sequences and the ones captured from a real broker (``tests/history/captured/*.jsonl``: one
JSON per record, ``partition``, ``offset``, ``timestamp`` ms, ``key`` and ``value`` base64, ``value`` null for a
tombstone) go the way silver's rows go: bytes, ``decoders.decode_record``, a silver-like row with the value as JSON,
then the Spark edge's ``*_record_from_row``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from decoders.records import decode_record, encode_record

CAPTURED = Path(__file__).parent / "captured"


class Log:
    """One group's records, encoded byte for byte as Kafka writes them; ``write(at)`` starts the next write."""

    def __init__(self, group: str) -> None:
        self.group = group
        self.entries: list[dict[str, Any]] = []
        self.at = 0

    def write(self, at: int) -> Log:
        self.at = at
        return self

    def add(self, record_type: str, value: dict[str, Any] | None, member_id: str | None = None) -> Log:
        key = {"group_id": self.group} if member_id is None else {"group_id": self.group, "member_id": member_id}
        k, v = encode_record(record_type, key, value)
        self.entries.append({"partition": 0, "offset": len(self.entries), "timestamp": self.at,
                             "key": base64.b64encode(k).decode(),
                             "value": None if v is None else base64.b64encode(v).decode()})
        return self


def silver_rows(entries: list[dict[str, Any]], group: str | None = None) -> list[dict[str, Any]]:
    """The records as the replay's input rows (``pipelines.gold.group_history.consumer_records``'s columns)."""
    rows = []
    for e in entries:
        value = None if e["value"] is None else base64.b64decode(e["value"])
        decoded = decode_record(base64.b64decode(e["key"]), value)
        if group is not None and decoded.key.get("group_id") != group:
            continue
        rows.append({"type": decoded.type, "is_tombstone": decoded.value is None, "at_ms": e["timestamp"],
                     "source_partition": e["partition"], "source_offset": e["offset"],
                     "member_id": decoded.key.get("member_id"),
                     "value": None if decoded.value is None else json.dumps(decoded.value, default=str)})
    return rows


def captured(scenario: str) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """A captured scenario's records and its describe JSON, or None when it is not captured."""
    records, describe = CAPTURED / f"{scenario}.jsonl", CAPTURED / f"{scenario}.describe.json"
    if not records.exists() or not describe.exists():
        return None
    entries = [json.loads(line) for line in records.read_text().splitlines() if line.strip()]
    return entries, json.loads(describe.read_text())
