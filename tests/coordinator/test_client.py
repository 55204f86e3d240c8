"""The consumer side (ConsumerCoordinator / AbstractCoordinator behaviour) through small simulations."""

from __future__ import annotations

from typing import Any

from coordinator.assignors.base import RebalanceProtocol
from coordinator.client import MemberState
from coordinator.scenario import parse_scenario
from coordinator.simulation import Simulation

START = 1_767_225_600_000


def scenario(consumers: list[dict], actions: list[dict], duration: str = "2m", **extra: Any) -> Simulation:
    data = {
        "name": "t",
        "duration": duration,
        "seed": 3,
        "topics": [{"name": "t", "partitions": 4, "produce_rate": 10}],
        "consumers": [{"group": "g", "topics": ["t"], **c} for c in consumers],
        "actions": actions,
        **extra,
    }
    return Simulation(parse_scenario(data))


def events(sim: Simulation, kind: str, source: str | None = None) -> list[dict]:
    return [e for e in sim.recorder.events if e["kind"] == kind and (source is None or e["source"] == source)]


def seconds(at: int) -> float:
    return (at - START) / 1000


def test_the_default_assignors_use_the_eager_protocol_and_only_cooperative_sticky_is_cooperative() -> None:
    sim = scenario(
        [{"name": "a"}, {"name": "b", "assignors": ["cooperative-sticky"]}],
        [{"at": 0, "action": "join", "consumer": "a"}],
    )
    assert sim.consumers["a"].protocol is RebalanceProtocol.EAGER
    assert sim.consumers["b"].protocol is RebalanceProtocol.COOPERATIVE


def test_a_consumer_joins_in_two_round_trips_and_becomes_stable_after_the_initial_delay() -> None:
    sim = scenario([{"name": "a"}], [{"at": 0, "action": "join", "consumer": "a"}], duration="10s")
    sim.run()
    responses = [e["error"] for e in events(sim, "join_group_response")]
    assert responses == ["MEMBER_ID_REQUIRED", "NONE"]
    (assigned,) = events(sim, "partitions_assigned")
    assert seconds(assigned["at"]) == 3.0 and assigned["assigned"] == ["t-0", "t-1", "t-2", "t-3"]
    assert sim.consumers["a"].state is MemberState.STABLE


def test_auto_commit_sends_the_positions_of_the_previous_poll_every_interval() -> None:
    sim = scenario(
        [{"name": "a", "auto_commit_interval_ms": "5s"}], [{"at": 0, "action": "join", "consumer": "a"}], duration="14s"
    )
    sim.run()
    commits = [e for e in events(sim, "commit") if e["reason"] == "auto-commit"]
    # Assigned at 3 s; the timer restarts then: commits at 8 s and 13 s. Each carries the log end
    # offset (10 records/s from t=0) seen by the poll 100 ms earlier.
    assert [seconds(e["at"]) for e in commits] == [8.0, 13.0]
    assert set(commits[0]["offsets"].values()) == {79} and set(commits[1]["offsets"].values()) == {129}


def test_eager_members_revoke_everything_and_commit_before_rejoining() -> None:
    sim = scenario(
        [{"name": "a"}, {"name": "b"}],
        [{"at": 0, "action": "join", "consumer": "a"}, {"at": "20s", "action": "join", "consumer": "b"}],
        duration="40s",
    )
    sim.run()
    a = "consumer:a"
    revoked = events(sim, "partitions_revoked", a)
    assert revoked and revoked[0]["partitions"] == ["t-0", "t-1", "t-2", "t-3"]
    before = [e for e in events(sim, "commit", a) if e["reason"] == "before rebalance"]
    join = [e for e in events(sim, "join_group", a) if e["at"] > START + 20_000][0]
    assert before and before[0]["at"] <= revoked[0]["at"] <= join["at"]


def test_cooperative_members_keep_their_partitions_and_rejoin_after_revoking_the_moved_ones() -> None:
    coop = {"assignors": ["cooperative-sticky"]}
    sim = scenario(
        [{"name": "a", **coop}, {"name": "b", **coop}],
        [{"at": 0, "action": "join", "consumer": "a"}, {"at": "20s", "action": "join", "consumer": "b"}],
        duration="40s",
    )
    sim.run()
    revoked = events(sim, "partitions_revoked", "consumer:a")
    assert len(revoked) == 1 and len(revoked[0]["partitions"]) == 2
    b_assigned = events(sim, "partitions_assigned", "consumer:b")
    assert b_assigned[0]["assigned"] == [] and len(b_assigned[-1]["assigned"]) == 2
    generations = [e["generation"] for e in events(sim, "generation")]
    assert generations == [1, 2, 3]


def test_a_dynamic_member_that_exceeds_max_poll_interval_sends_leave_group() -> None:
    sim = scenario(
        [{"name": "a", "max_poll_interval_ms": "10s"}, {"name": "b"}],
        [
            {"at": 0, "action": "join", "consumer": "a"},
            {"at": 0, "action": "join", "consumer": "b"},
            {"at": "20s", "action": "stall", "consumer": "a", "duration": "15s"},
        ],
        duration="60s",
    )
    sim.run()
    (expired,) = events(sim, "poll_timeout_expired", "consumer:a")
    (leave,) = events(sim, "leave_group", "consumer:a")
    assert seconds(expired["at"]) == 29.9 == seconds(leave["at"])  # last poll at 19.9 s + 10 s
    responses = [e for e in events(sim, "join_group_response", "consumer:a") if e["at"] > leave["at"]]
    assert responses[0]["error"] == "MEMBER_ID_REQUIRED"  # it comes back as a new member


def test_a_static_member_that_exceeds_max_poll_interval_does_not_leave() -> None:
    sim = scenario(
        [
            {"name": "a", "max_poll_interval_ms": "10s", "group_instance_id": "a", "session_timeout_ms": "30s"},
            {"name": "b"},
        ],
        [
            {"at": 0, "action": "join", "consumer": "a"},
            {"at": 0, "action": "join", "consumer": "b"},
            {"at": "20s", "action": "stall", "consumer": "a", "duration": "15s"},
        ],
        duration="60s",
    )
    sim.run()
    assert events(sim, "poll_timeout_expired", "consumer:a") and not events(sim, "leave_group", "consumer:a")
    # It rejoins with its instance id before its 30 s session expires: replaced, no rebalance.
    assert events(sim, "static_member_replaced") and [e["generation"] for e in events(sim, "generation")] == [1]


def test_followers_learn_of_a_rebalance_from_their_next_heartbeat() -> None:
    sim = scenario(
        [{"name": "a", "heartbeat_interval_ms": "3s"}, {"name": "b"}],
        [{"at": 0, "action": "join", "consumer": "a"}, {"at": "10s", "action": "join", "consumer": "b"}],
        duration="30s",
    )
    sim.run()
    (error,) = events(sim, "heartbeat_error", "consumer:a")
    # a joined at 3 s: heartbeats at 6, 9, 12 s; b's join at 10 s starts the rebalance, so the 12 s one says so.
    assert error["error"] == "REBALANCE_IN_PROGRESS" and seconds(error["at"]) == 12.0
    # The application thread rejoins at its next poll (every 100 ms), not from the heartbeat thread.
    rejoin = [e for e in events(sim, "join_group", "consumer:a") if e["at"] >= error["at"]][0]
    assert 12.0 < seconds(rejoin["at"]) <= 12.1


def test_a_crashed_member_is_removed_only_when_its_session_expires() -> None:
    sim = scenario(
        [{"name": "a"}, {"name": "b", "session_timeout_ms": "10s", "heartbeat_interval_ms": "1s"}],
        [
            {"at": 0, "action": "join", "consumer": "a"},
            {"at": 0, "action": "join", "consumer": "b"},
            {"at": "20500ms", "action": "crash", "consumer": "b"},
        ],
        duration="40s",
    )
    sim.run()
    (removed,) = events(sim, "member_removed")
    # b became stable at 6 s and heartbeat every second: the last one at 20 s, so it expires at 30 s.
    assert seconds(removed["at"]) == 30.0 and "heartbeat expiration" in removed["reason"]


def test_the_leader_notices_new_partitions_at_its_next_metadata_refresh() -> None:
    sim = scenario(
        [{"name": "a", "metadata_max_age_ms": "15s"}],
        [
            {"at": 0, "action": "join", "consumer": "a"},
            {"at": "10s", "action": "add_partitions", "topic": "t", "partitions": 6},
        ],
        duration="30s",
    )
    sim.run()
    generations = events(sim, "generation")
    # Metadata refreshed when it led the rebalance at 3 s, next at 18 s: it rejoins then.
    assert [e["generation"] for e in generations] == [1, 2] and seconds(generations[1]["at"]) == 18.0
    assert events(sim, "partitions_assigned")[-1]["assigned"] == [f"t-{i}" for i in range(6)]
