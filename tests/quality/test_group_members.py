"""The subscription rule of quality/group_members.py on hand-built silver rows."""

from __future__ import annotations

import pytest

from quality import group_members
from quality.checkpoint import violations
from schemas import group_members as members_table
from tests.quality.rows import frame, source

pytestmark = pytest.mark.spark


def member(offset: int, member_id: str, subscribed: list[str] | None, assigned: dict[str, list[int]] | None,
           undecoded: bool = False) -> dict:
    return {**source(offset), "group": "g", "generation": 1, "member_id": member_id, "is_leader": False,
            "subscribed_topics": subscribed, "undecoded": undecoded,
            "assigned_partitions": None if assigned is None else [{"topic": t, "partitions": p}
                                                                 for t, p in assigned.items()]}


def test_a_member_assigned_a_topic_it_did_not_subscribe_to_is_reported(spark, base_settings) -> None:  # type: ignore[no-untyped-def]
    rows = [member(1, "fine", ["orders", "payments"], {"orders": [0, 1]}),
            member(2, "stray", ["orders"], {"orders": [2], "payments": [0]}),
            member(3, "connect-worker", None, None, undecoded=True),
            member(4, "not-yet-assigned", ["orders"], None)]
    frames = {group_members.TABLE: frame(spark, members_table.TABLE, rows)}
    found = violations(spark, group_members.ASSIGNED_TOPICS_ARE_SUBSCRIBED, group_members.TABLE, frames,
                       base_settings).collect()
    assert [(r["member_id"], r["unsubscribed"]) for r in found] == [("stray", ["payments"])]
