"""The reference rules of ``pipelines/validation.py`` for gold.rebalance_events, without Spark.

The expected values here come from what the reference's clients lived through (their
``partitions_revoked`` callbacks, the JoinGroup responses that gave them their member ids, the
scenario's crash moment), not from the rules under test; the comparison's semantics are checked
on hand-written rows. That gold agrees with these rules over every scenario is
tests/pipelines/test_validate.py's subject.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coordinator import simulate
from pipelines.validation import compare_table, expected_rebalance_events

SCENARIOS = Path(__file__).resolve().parents[2] / "conf" / "scenarios"
TABLE = "gold.rebalance_events"
KEY = ("group", "from_generation", "to_generation")


@pytest.fixture(scope="module")
def follower_revokes():  # type: ignore[no-untyped-def]
    return simulate(str(SCENARIOS / "cooperative-follower-revokes.yaml"), kafka_version="4.2")


def _client_events(result, kind: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return [e for e in result.timeline["events"] if e["source"].startswith("consumer:") and e["kind"] == kind]


def _member_id(result, consumer: str) -> str:  # type: ignore[no-untyped-def]
    [member] = {e["member_id"] for e in _client_events(result, "join_group_response")
                if e["source"] == f"consumer:{consumer}" and e["member_id"]}
    return member


def test_a_cooperative_first_round_moves_nothing_and_its_follow_up_moves_every_revoked_partition(
        follower_revokes) -> None:  # type: ignore[no-untyped-def]
    revoked = [p for e in _client_events(follower_revokes, "partitions_revoked") for p in e["partitions"]]
    assert sorted(revoked) == ["audit-0", "audit-1", "ledger-0"]
    rows = {(r["from_generation"], r["to_generation"]): r for r in expected_rebalance_events(follower_revokes)}
    assert rows[(1, 2)]["partitions_moved"] == 0  # the newcomer joins; the members only give up partitions
    assert rows[(2, 3)]["partitions_moved"] == len(revoked)


def test_the_cooperative_scale_out_follow_ups_move_what_the_clients_revoked_before_them() -> None:
    result = simulate(str(SCENARIOS / "cooperative-scale-out.yaml"), kafka_version="4.2")
    revocations = _client_events(result, "partitions_revoked")
    rows = expected_rebalance_events(result)
    follow_ups = [r for r in rows if r["partitions_moved"]]
    assert [r["partitions_moved"] for r in follow_ups] == [
        sum(len(e["partitions"]) for e in revocations if e["at"] < first["join_completed_at"] and (
            previous is None or e["at"] >= previous["join_completed_at"]))
        for first, previous in zip(follow_ups, [None, *follow_ups], strict=False)]
    assert [r["partitions_moved"] for r in follow_ups] == [4, 3]  # two of w1's and w2's each, then three


def test_the_follow_up_names_the_follower_whose_rejoin_started_it_not_the_leader(follower_revokes) -> None:  # type: ignore[no-untyped-def]
    [follow_up] = [r for r in expected_rebalance_events(follower_revokes) if r["to_generation"] == 3]
    assert follow_up["triggered_by"] == _member_id(follower_revokes, "clerk")
    assert follow_up["triggered_by"] != _member_id(follower_revokes, "keeper")  # the leader, who revoked too


def test_stops_are_the_clients_revocations_as_the_broker_saw_them_one_latency_later(follower_revokes) -> None:  # type: ignore[no-untyped-def]
    revoked_at = sorted(e["at"] for e in _client_events(follower_revokes, "partitions_revoked"))
    [follow_up] = [r for r in expected_rebalance_events(follower_revokes) if r["to_generation"] == 3]
    assert follow_up["stopped_at"] == [revoked_at[0] + 20, revoked_at[-1] + 20]  # network_latency: 20ms


def test_a_crashed_member_stopped_at_the_crash() -> None:
    result = simulate(str(SCENARIOS / "range-join-leave-crash.yaml"), kafka_version="4.2")
    crash = result.timeline["start_ms"] + 90_000  # actions: {at: 90s, action: crash, consumer: billing-3}
    [after_crash] = [r for r in expected_rebalance_events(result)
                     if r["stopped_at"] and r["stopped_at"][0] <= crash <= r["stopped_at"][1]]
    assert after_crash["likely_cause"] == "session_timeout"
    assert after_crash["stopped_at"][0] == crash + result.timeline["network_latency_ms"]


def _gold(**fields) -> dict:  # type: ignore[no-untyped-def]
    row = {"group": "g", "from_generation": 2, "to_generation": 3, "likely_cause": "cooperative_follow_up",
           "triggered_by": ["m1", "m2"], "stopped_at_lower_bound": 100, "stopped_at_upper_bound": 200,
           "partitions_moved": 3}
    return {**row, **fields}


def _expected(**fields) -> dict:  # type: ignore[no-untyped-def]
    row = {"group": "g", "from_generation": 2, "to_generation": 3, "likely_cause": "member_metadata_changed",
           "triggered_by": "m2", "stopped_at": [120, 180], "partitions_moved": 3}
    return {**row, **fields}


def _diffs(expected: dict, gold: dict) -> list[tuple[str, str | None, str | None]]:
    return [(d.field, d.expected, d.actual) for d in compare_table("s", TABLE, KEY, [expected], [gold])]


def test_stops_within_golds_bounds_agree_and_a_stop_outside_them_is_a_difference() -> None:
    assert _diffs(_expected(stopped_at=[100, 200]), _gold()) == []
    assert _diffs(_expected(stopped_at=[99, 150]), _gold()) == [("stopped_at", "[99, 150]", "[100, 200]")]
    assert _diffs(_expected(stopped_at=[150, 201]), _gold()) == [("stopped_at", "[150, 201]", "[100, 200]")]
    assert _diffs(_expected(), _gold(stopped_at_lower_bound=None)) == [("stopped_at", "[120, 180]", "[null, 200]")]
    assert _diffs(_expected(stopped_at=None), _gold(stopped_at_lower_bound=None)) == []  # nobody stopped


def test_the_member_the_coordinator_names_must_be_among_the_ones_gold_lists() -> None:
    assert _diffs(_expected(triggered_by="m3"), _gold()) == [("triggered_by", '"m3"', '["m1", "m2"]')]
    # A follow-up must name its candidates; other causes name none, and that is no difference.
    assert _diffs(_expected(), _gold(triggered_by=None)) == [("triggered_by", '"m2"', None)]
    assert _diffs(_expected(likely_cause="member_joined"), _gold(likely_cause="member_joined", triggered_by=None)) \
        == []


def test_moved_partitions_must_match_and_the_cause_must_be_one_gold_stands_for() -> None:
    assert _diffs(_expected(), _gold(partitions_moved=0)) == [("partitions_moved", "3", "0")]
    assert _diffs(_expected(likely_cause="session_timeout"), _gold()) == [
        ("likely_cause", '"session_timeout"', '"cooperative_follow_up"')]
