"""broker/demo_workload.py: the demo's scripted groups on the background broker, and what gold makes of them.

The run's real-traffic warehouse (tests/real_traffic.py, shared with tests/quality) runs the whole
workload once (the seven scenarios side by side), produces a second round that every group but the
lagging one reads, takes an end-offset snapshot (the demo takes one more before the second round;
lag needs one), then ingests ``__consumer_offsets``, refreshes gold and lag, and reads gold back
for the workload's groups. Each test checks one group
against what Kafka's group coordinator must have written for what the workload did -- reasoned
from the protocol, not from gold's output:

* a dynamic member joining a Stable group starts a rebalance; every join here completes before the
  next member starts, so each new generation has one more member;
* a SIGKILLed member sends nothing: the coordinator keeps it until its session expires, which is
  at least ``session.timeout.ms`` after it last joined;
* ``close()`` of a dynamic member sends LeaveGroup: the next generation forms at once, well within
  the departed member's (30 s) session timeout;
* a static member that comes back (same ``group.instance.id``) before its session expires gets
  its new member id swapped in with the group Stable: a record, no new generation;
* cooperative-sticky (KIP-429) never hands out a partition still owned: a newcomer first gets a
  generation in which the old member only revokes, then a follow-up rebalance that assigns; the
  partitions that moved are counted from the members' assignment callbacks.
"""

from __future__ import annotations

import pytest

from broker.demo_workload import CRASH_SESSION_TIMEOUT_MS, reached, split_between
from pipelines.demo import format_group, group_summaries
from tests.real_traffic import DEMO_PARTITIONS, DEMO_SECOND_ROUND

PARTITIONS = DEMO_PARTITIONS
SECOND_ROUND = DEMO_SECOND_ROUND


@pytest.fixture(scope="module")
def demo(real_traffic_warehouse):  # type: ignore[no-untyped-def]
    demo = real_traffic_warehouse.demo
    return {"groups": demo.groups, "outcomes": demo.outcomes, "gold": demo.gold}


def rows(demo, kind: str, group: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return [r for r in getattr(demo["gold"], kind) if r["group"] == group]


def rebalances(demo, group: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return sorted((r for r in rows(demo, "rebalances", group) if r["event_type"] == "rebalance"),
                  key=lambda r: r["to_generation"])


def member_generations(demo, group: str) -> list[dict]:  # type: ignore[no-untyped-def]
    """Generations with members (an Empty generation 0 may precede the first join)."""
    return sorted((g for g in rows(demo, "generations", group) if g["member_count"]), key=lambda g: g["generation"])


def test_the_scale_out_group_went_through_three_generations_of_one_two_and_three_members(demo) -> None:  # type: ignore[no-untyped-def]
    group = demo["groups"].scale_out
    generations = member_generations(demo, group)
    assert [g["member_count"] for g in generations] == [1, 2, 3]
    assert [g["protocol"] for g in generations] == ["range"] * 3
    into = {r["to_generation"]: r for r in rebalances(demo, group)}
    for g in generations:
        assert into[g["generation"]]["likely_cause"] == "member_joined"
        assert into[g["generation"]]["rebalance_protocol"] == "eager"
    # Range over 6 partitions and 3 members: 2 each, every partition once.
    owners = {r["partition"]: r["client_id"] for r in rows(demo, "assignments", group)}
    assert sorted(owners) == list(range(PARTITIONS))
    assert sorted(list(owners.values()).count(c) for c in set(owners.values())) == [2, 2, 2]
    assert {m["client_id"] for m in rows(demo, "members", group)} == {f"{group}-1", f"{group}-2", f"{group}-3"}


def test_the_crashed_member_left_at_its_session_timeout_so_gold_cannot_call_it_a_leave(demo) -> None:  # type: ignore[no-untyped-def]
    group = demo["groups"].crash
    (crash,) = [r for r in rebalances(demo, group) if r["members_left"]]
    assert crash["likely_cause"] == "member_left_or_vanished"
    assert (crash["members_before"], crash["members_after"]) == (2, 1)
    (left,) = crash["members_left"]
    assert left.startswith(f"{group}-doomed-")  # a classic member id is client.id + "-" + a UUID
    # Its partitions waited at least the session timeout: from the last moment the records show the
    # killed member at work to the group's next Stable (issue 12, item 3).
    assert crash["stopped_ms_upper_bound"] >= CRASH_SESSION_TIMEOUT_MS - 1000
    assert {r["client_id"] for r in rows(demo, "assignments", group)} == {f"{group}-survivor"}
    assert len(rows(demo, "assignments", group)) == PARTITIONS


def test_the_graceful_leave_is_recognised_as_a_leave_group(demo) -> None:  # type: ignore[no-untyped-def]
    group = demo["groups"].graceful_leave
    (leave,) = [r for r in rebalances(demo, group) if r["members_left"]]
    assert leave["likely_cause"] == "member_left"
    (left,) = leave["members_left"]
    assert left.startswith(f"{group}-leaves-")
    assert [m["client_id"] for m in rows(demo, "members", group)] == [f"{group}-stays"]


def test_the_static_restart_is_recorded_as_a_restart_without_a_rebalance(demo) -> None:  # type: ignore[no-untyped-def]
    group = demo["groups"].static_restart
    (restart,) = [r for r in rows(demo, "rebalances", group) if r["event_type"] == "static_member_restart"]
    assert restart["static_restarts"] == [f"{group}-b"]
    assert restart["likely_cause"] == "static_member_restart"
    assert restart["from_generation"] == restart["to_generation"] == member_generations(demo, group)[-1]["generation"]
    assert all(r["stable_at"] < restart["stable_at"] for r in rebalances(demo, group))
    assert [g["member_count"] for g in member_generations(demo, group)] == [1, 2]
    members = rows(demo, "members", group)
    assert sorted(m["group_instance_id"] for m in members) == [f"{group}-a", f"{group}-b"]


def test_the_cooperative_groups_rebalances_are_cooperative_and_the_newcomer_waits_for_a_follow_up(demo) -> None:  # type: ignore[no-untyped-def]
    group = demo["groups"].cooperative
    events = rebalances(demo, group)
    assert events and {r["rebalance_protocol"] for r in events} == {"cooperative"}
    two_members = [r for r in events if r["members_after"] == 2]
    # The second round is KIP-429's follow-up, started by the rejoin of a member that had partitions
    # revoked in the first (issue 12, item 2): the member the clients' revocation callbacks name.
    assert [r["likely_cause"] for r in two_members] == ["member_joined", "cooperative_follow_up"]
    assert two_members[0]["triggered_by"] is None
    revoked = demo["outcomes"][group].revoked_members
    assert revoked and two_members[1]["triggered_by"] == revoked
    assert two_members[0]["partitions_moved"] == 0  # revoked first, reassigned in the follow-up
    # The follow-up hands the revoked partitions to the newcomer: they moved, across both rounds, as
    # many times as the members' own assignment callbacks saw a partition change hands (issue 12, item 1).
    moved_by_callbacks = demo["outcomes"][group].partitions_moved
    assert moved_by_callbacks and moved_by_callbacks > 0
    assert two_members[1]["partitions_moved"] == moved_by_callbacks
    assert sum(r["partitions_moved"] for r in events) == moved_by_callbacks


def test_the_lagging_group_lags_by_the_second_round_and_the_others_caught_up(demo) -> None:  # type: ignore[no-untyped-def]
    groups = demo["groups"]
    lagging = rows(demo, "lag", groups.lagging)
    assert sorted(r["partition"] for r in lagging) == list(range(PARTITIONS))
    # It committed the whole first round and nothing of the second, which the newest snapshot counts.
    assert {r["lag"] for r in lagging} == {SECOND_ROUND // PARTITIONS}
    assert {r["group_lag"] for r in lagging} == {SECOND_ROUND}
    for group in (groups.scale_out, groups.crash, groups.graceful_leave, groups.static_restart, groups.cooperative,
                  groups.kip848):
        assert {r["group_lag"] for r in rows(demo, "lag", group)} == {0}, group


def test_the_summary_of_each_group_puts_the_script_beside_what_gold_shows(demo) -> None:  # type: ignore[no-untyped-def]
    groups = demo["groups"]
    summaries = {s.group: s for s in group_summaries(demo["gold"], order=groups.all())}
    crash = "\n".join(format_group(summaries[groups.crash], demo["outcomes"][groups.crash]))
    assert "SIGKILL" in crash and "member_left_or_vanished" in crash
    static = "\n".join(format_group(summaries[groups.static_restart], demo["outcomes"][groups.static_restart]))
    assert f"static member restart of {groups.static_restart}-b -- no rebalance" in static


class Owner:
    def __init__(self, *partitions: int) -> None:
        self.partitions = set(partitions)

    def owned(self) -> set[int]:
        return self.partitions


def test_a_split_is_complete_only_when_everyone_holds_something_and_each_partition_once() -> None:
    assert split_between([Owner(0, 1), Owner(2, 3)], 4)()
    assert not split_between([Owner(0, 1, 2, 3), Owner()], 4)()  # the newcomer is not assigned yet
    assert not split_between([Owner(0, 1), Owner(1, 2)], 4)()  # an old and a new generation overlap


def test_a_group_has_caught_up_when_every_non_empty_partition_is_committed_to_its_end() -> None:
    assert reached({0: 10, 1: 5}, {0: 10, 1: 5, 2: 0})
    assert not reached({0: 10, 1: -1001}, {0: 10, 1: 5})


def test_the_steady_group_commits_the_topics_end_every_period_without_joining_until_stopped(
        kafka_broker) -> None:  # type: ignore[no-untyped-def]
    import time

    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    from broker.demo_workload import SteadyCommitter
    from broker.workload import create_topic, produce_messages

    client = {"bootstrap.servers": kafka_broker.bootstrap_servers}
    create_topic(client, "steady-topic", partitions=2)
    produce_messages(client, "steady-topic", 10, 2)
    with SteadyCommitter(client, "steady-topic", 2, "steady-group", every=0.2) as steady:
        time.sleep(1.5)
        made = steady.stop()
        assert steady.stop() == made  # stopping twice is harmless
    assert made >= 3
    admin = AdminClient(client)
    offsets = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions("steady-group", [TopicPartition("steady-topic", 0),
                                                       TopicPartition("steady-topic", 1)])])
    committed = {tp.partition: tp.offset for tp in offsets["steady-group"].result().topic_partitions}
    assert committed == {0: 5, 1: 5}  # produce_messages spreads 10 messages evenly over the 2 partitions
    group = admin.describe_consumer_groups(["steady-group"])["steady-group"].result()
    assert group.members == []  # committed with explicit positions, never a member: no rebalance
