"""A real KIP-848 group on the embedded 4.2 broker, through ingest and the gold refresh.

Two confluent-kafka consumers with ``group.protocol=consumer`` share a 4-partition topic until the
broker has settled them, then one closes (LeaveGroup), the other gets all four partitions, then it
closes too. Gold is refreshed after the first phase and again after the second (the incremental
path), and compared with a full rebuild. What the test expects comes from the clients' side and
from Kafka's rules, not from the derivation: what each consumer saw in ``assignment()`` once the
group settled; epochs only grow; members of one epoch never own the same partition; the topic's
name (librdkafka commits carry no topic id: until an end-offset snapshot records the topic's id the
rows have none; once it does, the ownership view names them at read, with no refresh in between).

A second group, beside the first: one such consumer subscribes to the topic before the first
refresh, then to it and a second topic before the second (issue 12, item 5). Its subscriptions, in
the order the test made them, are what gold's membership rows of that member must show, one row
each, the second starting where the first ends.
"""

from __future__ import annotations

import pytest

from tests.pipelines.gold.kip848_traffic import PARTITIONS

pytestmark = [pytest.mark.broker, pytest.mark.spark]


@pytest.fixture(scope="module")
def run(kip848_traffic_warehouse):  # type: ignore[no-untyped-def]
    """Built in the background, on a broker of its own (tests/pipelines/gold/kip848_traffic.py)."""
    return kip848_traffic_warehouse


def _members(run) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """client.id -> member id, from gold.group_membership."""
    return {m["client_id"]: m["member_id"] for m in run["gold"]["gold.group_membership"]}


def _owned_at(run, moment: int) -> dict[str, set[int]]:  # type: ignore[no-untyped-def]
    """member id -> partitions it owned (current or pending revocation) at ``moment``."""
    owned: dict[str, set[int]] = {}
    for a in run["gold"]["gold.partition_assignments"]:
        if a["assignment_kind"] != "target" and a["valid_from"] <= moment \
                and (a["valid_to"] is None or moment < a["valid_to"]):
            owned.setdefault(a["member_id"], set()).add(a["partition"])
    return owned


def test_every_group_epoch_is_a_consumer_generation_and_epochs_only_grow(run) -> None:  # type: ignore[no-untyped-def]
    generations = sorted(run["gold"]["gold.group_generations"], key=lambda g: g["started_at"])
    epochs = [g["generation"] for g in generations]
    assert epochs == sorted(set(epochs)) and len(epochs) >= 3  # joins and a leave each bump the epoch
    assert {(g["group_type"], g["protocol_type"], g["leader"]) for g in generations} == {("consumer", "consumer",
                                                                                           None)}
    assert generations[-1]["member_count"] == 0  # both closed: the last epoch has no members
    for row in run["gold"]["gold.partition_assignments"]:
        assert row["generation"] <= epochs[-1]
    by_member: dict[str, list[tuple[int, int]]] = {}
    for a in run["gold"]["gold.partition_assignments"]:
        if a["assignment_kind"] == "current":
            by_member.setdefault(a["member_id"], []).append((a["valid_from"], a["generation"]))
    for member_epochs in by_member.values():
        in_time_order = [epoch for _, epoch in sorted(member_epochs)]
        assert in_time_order == sorted(in_time_order)


def test_while_both_were_in_they_owned_disjoint_partitions_covering_the_topic(run) -> None:  # type: ignore[no-untyped-def]
    members = _members(run)
    assert set(members) == {"stays", "leaves"}
    # At every change of ownership, no partition has two owners.
    for a in run["gold"]["gold.partition_assignments"]:
        owned = _owned_at(run, a["valid_from"])
        flat = [p for partitions in owned.values() for p in partitions]
        assert len(flat) == len(set(flat))
    # Where the two-member epoch was Stable, gold shows what the clients themselves had been given.
    two = {g["generation"] for g in run["gold"]["gold.group_generations"] if g["member_count"] == 2}
    stable = [s for s in run["gold"]["gold.group_state_history"] if s["state"] == "Stable"
              and s["generation"] in two]
    assert stable
    owned = _owned_at(run, stable[-1]["at"])
    assert owned == {members["stays"]: run["both"]["stays"], members["leaves"]: run["both"]["leaves"]}
    assert owned[members["stays"]] | owned[members["leaves"]] == set(range(PARTITIONS))


def test_at_the_last_stable_epoch_the_remaining_member_owns_all_partitions(run) -> None:  # type: ignore[no-untyped-def]
    members = _members(run)
    states = sorted(run["gold"]["gold.group_state_history"], key=lambda s: s["at"])
    assert [s["state"] for s in states][-2:] == ["Stable", "Empty"]
    assert {s["state"] for s in states} <= {"Assigning", "Reconciling", "Stable", "Empty"}
    assert _owned_at(run, states[-2]["at"]) == {members["stays"]: set(range(PARTITIONS))} == \
        {members["stays"]: run["alone"]}
    leaver = next(m for m in run["gold"]["gold.group_membership"] if m["client_id"] == "leaves")
    stayer = next(m for m in run["gold"]["gold.group_membership"] if m["client_id"] == "stays")
    assert leaver["valid_to"] is not None and stayer["valid_to"] is not None
    assert leaver["valid_to"] < stayer["valid_to"] and stayer["valid_from"] < leaver["valid_to"]
    assert stayer["subscribed_topics"] == [run["topic"]] and stayer["group_type"] == "consumer"


def test_topic_ids_are_named_at_read_as_soon_as_an_end_offset_snapshot_records_them(run) -> None:  # type: ignore[no-untyped-def]
    before = run["unnamed"]
    assert before and {r["topic"] for r in before} == {None}
    named = run["named"]
    assert named and {r["topic"] for r in named} == {run["topic"]}
    ids = {r["topic_id"] for r in named}
    assert ids == {r["topic_id"] for r in before} and len(ids) == 1 and None not in ids
    # gold keeps the id as recorded: the name needed no replay of the group
    rows = run["gold"]["gold.partition_assignments"]
    assert rows and {(r["topic"], r["topic_id"]) for r in rows} == {(None, *ids)}


def test_the_leave_is_a_rebalance_that_moves_the_leavers_partitions(run) -> None:  # type: ignore[no-untyped-def]
    members = _members(run)
    events = sorted(run["gold"]["gold.rebalance_events"], key=lambda e: e["stable_at"])
    assert [e["to_generation"] for e in events] == sorted({e["to_generation"] for e in events})
    leave = next(e for e in events if e["members_left"] == [members["leaves"]])
    assert (leave["members_before"], leave["members_after"], leave["likely_cause"]) == \
        (2, 1, "member_left_or_vanished")
    assert leave["partitions_moved"] == len(run["both"]["leaves"])
    assert leave["partitions_kept"] == len(run["both"]["stays"])
    assert events[-1]["members_left"] == [members["stays"]] and events[-1]["members_after"] == 0


def test_the_incremental_refresh_equals_a_full_rebuild_and_a_rerun_writes_nothing(run) -> None:  # type: ignore[no-untyped-def]
    for name, rows in run["gold"].items():
        # Every table has rows, but the streams groups' tasks and topology: these groups are classic and KIP-848.
        assert bool(rows) != (name in ("gold.streams_task_assignments", "gold.streams_topology")), name
        assert sorted(rows, key=repr) == sorted(run["full"][name], key=repr), name
    assert run["again"] == run["counts"]


# -- a member that changes its subscription (issue 12, item 5) ----------------------------------------------

def test_a_subscription_change_closes_the_members_row_and_opens_one_per_subscription(run) -> None:  # type: ignore[no-untyped-def]
    resubscribed = run["resubscribed"]
    rows = sorted(resubscribed["membership"], key=lambda m: m["valid_from"])
    assert [sorted(m["subscribed_topics"]) for m in rows] == [sorted(t) for t in resubscribed["subscriptions"]]
    assert len({m["member_id"] for m in rows}) == 1 and {m["client_id"] for m in rows} == {"resubscribes"}
    earlier, later = rows
    assert earlier["valid_to"] == later["valid_from"] < later["valid_to"]  # the last row ends at its close
    assert earlier["last_generation"] < later["first_generation"]  # the change bumped the group epoch


def test_the_incremental_refresh_of_a_subscription_change_equals_a_full_rebuild(run) -> None:  # type: ignore[no-untyped-def]
    assert sorted(run["resubscribed"]["membership"], key=repr) == sorted(run["resubscribed"]["full"], key=repr)
