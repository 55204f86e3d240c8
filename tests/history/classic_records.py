"""Hand-built classic groups' GroupMetadata records for the replay's own tests, in seconds after ``T0``.

A record is ``(group, offset, generation, append time, currentStateTimestamp, members)``; each member
``(member id, group.instance.id, topic, partitions)``, optionally followed by a dict of other member fields
(session_timeout_ms, client_host, ...), as tests/pipelines/gold/classic_history.py builds them as silver rows.
``"tombstone"`` in place of the generation makes the record a group tombstone.
"""

from __future__ import annotations

from typing import Any

from history.classic import ClassicMember, GroupMetadataRecord
from history.group import group_rows

T0_MS = 1_795_572_000_000  # 2026-11-25 02:00 UTC


def ms(seconds: float) -> int:
    return T0_MS + round(seconds * 1000)


def seconds(moment: int | None) -> float | None:
    return None if moment is None else (moment - T0_MS) / 1000


def record(offset: int, generation: int | str, appended: float, formed: float, members: list[tuple[Any, ...]],
           protocol: str = "range", protocol_type: str | None = "consumer") -> GroupMetadataRecord:
    if generation == "tombstone":
        return GroupMetadataRecord(at_ms=ms(appended), position=(0, offset), is_tombstone=True)
    listed = tuple(ClassicMember(
        member_id=m[0], group_instance_id=m[1], client_id=f"client-{m[0]}", assigned=((m[2], tuple(m[3])),),
        **{k: tuple(v) if k == "subscribed_topics" else v for k, v in (m[4] if len(m) > 4 else {}).items()})
        for m in members)
    return GroupMetadataRecord(at_ms=ms(appended), position=(0, offset), generation=int(generation),
                               protocol_type=protocol_type, protocol=protocol if members else None,
                               leader=members[0][0] if members else None, current_state_ms=ms(formed),
                               member_count=len(members), members=listed)


def replay_groups(records: list[tuple[Any, ...]], **by_group: Any) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """group -> its rows per kind, each group's records replayed on their own."""
    grouped: dict[str, list[GroupMetadataRecord]] = {}
    for group, *rest in records:
        grouped.setdefault(group, []).append(record(*rest))
    return {group: group_rows(found, **by_group.get(group, {})).rows for group, found in grouped.items()}
