"""``coordinator.simulate``: determinism, the written outputs, and what each shipped scenario shows."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from coordinator import SimulationResult, simulate
from coordinator.timeline import TABLES
from decoders import decode_record

SCENARIO_DIR = Path(__file__).resolve().parents[2] / "conf" / "scenarios"


@cache
def run(name: str, kafka_version: str = "4.2") -> SimulationResult:
    return simulate(SCENARIO_DIR / f"{name}.yaml", kafka_version)


def group(result: SimulationResult, group_id: str) -> dict:
    return next(g for g in result.timeline["groups"] if g["group"] == group_id)


def events(result: SimulationResult, kind: str) -> list[dict]:
    return [e for e in result.timeline["events"] if e["kind"] == kind]


def decoded(result: SimulationResult) -> list:
    return [decode_record(r.key, r.value) for r in result.records]


def test_the_same_scenario_gives_the_same_bytes_and_timeline() -> None:
    a = simulate(SCENARIO_DIR / "rebalance-storm.yaml")
    b = simulate(SCENARIO_DIR / "rebalance-storm.yaml")
    assert a.records == b.records and a.timeline == b.timeline and a.tables == b.tables


def test_write_produces_hex_records_a_timeline_and_one_jsonl_per_table(tmp_path: Path) -> None:
    result = run("range-join-leave-crash")
    result.write(tmp_path)
    rows = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert len(rows) == len(result.records)
    first = rows[0]
    assert decode_record(bytes.fromhex(first["key"]), bytes.fromhex(first["value"])).type == "group_metadata"
    assert json.loads((tmp_path / "timeline.json").read_text())["scenario"] == "range-join-leave-crash"
    for name in TABLES:
        lines = (tmp_path / f"{name}.jsonl").read_text().splitlines()
        assert [json.loads(line) for line in lines] == result.tables[name]


@pytest.mark.parametrize("path", sorted(SCENARIO_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_scenario_writes_records_that_decode_at_the_chosen_versions(path: Path) -> None:
    result = run(path.stem)
    assert result.records
    for record, rec in zip(result.records, decoded(result), strict=True):
        assert rec.type in ("offset_commit", "group_metadata") or rec.type.startswith("consumer_group_")
        if record.value is not None and rec.type.startswith("consumer_group_"):
            assert rec.value_version == 0  # every KIP-848 value schema has version 0 only
        elif record.value is not None and rec.type == "offset_commit":
            assert rec.value_version == (1 if "expire_timestamp" in rec.value else 4)
        elif record.value is not None:
            assert rec.value_version == 3
    assert [r.timestamp for r in result.records] == sorted(r.timestamp for r in result.records)


def test_an_older_kafka_version_writes_offset_commit_v3_and_no_creation_record() -> None:
    old = run("range-join-leave-crash", "3.9")
    versions = {rec.value_version for rec in decoded(old) if rec.type == "offset_commit" and rec.value is not None}
    assert versions == {3}
    first_group_record = next(rec for rec in decoded(old) if rec.type == "group_metadata")
    assert first_group_record.value["generation"] == 1  # 4.x would have written generation 0 first


def test_range_join_leave_crash_folds_the_first_joins_and_ends_empty() -> None:
    result = run("range-join-leave-crash")
    gens = group(result, "billing")["generations"]
    assert [g["member_count"] for g in gens] == [0, 2, 3, 2, 1, 0]
    assert [g["end_reason"] for g in gens[:-1]] == [
        "member_joined",
        "member_joined",
        "member_left",
        "session_timeout",
        "member_left",
    ]
    # billing-3 (session 10 s) crashed at 90 s: removed 10 s after its last heartbeat, not at once.
    crash_removal = [e for e in events(result, "member_removed") if "heartbeat" in e["reason"]][0]
    assert 99_000 <= crash_removal["at"] - result.timeline["start_ms"] <= 100_000
    assert gens[-1]["protocol"] is None and gens[-1]["leader"] is None


def test_static_restart_keeps_the_generation_and_a_long_outage_rebalances() -> None:
    result = run("static-membership-restart")
    g = group(result, "sessions")
    assert [gen["generation"] for gen in g["generations"]] == [0, 1, 2, 3]
    assert len(events(result, "static_member_replaced")) == 2
    gen1 = g["generations"][1]
    replaced_in_gen1 = [m for m in gen1["members"] if m["valid_from"] > gen1["started_at"]]
    assert len(replaced_in_gen1) == 2 and gen1["end_reason"] == "session_timeout"
    records_gen1 = [r for r in decoded(result) if r.type == "group_metadata" and r.value and r.value["generation"] == 1]
    assert len(records_gen1) == 3  # the rebalance, then one per static restart
    assert any(e["kind"] == "assignment_skipped" for e in result.timeline["events"])


def test_cooperative_scale_out_needs_two_rebalances_and_nobody_gains_a_partition_still_owned() -> None:
    result = run("cooperative-scale-out")
    gens = group(result, "rollup")["generations"]
    assert [g["generation"] for g in gens] == [0, 1, 2, 3, 4, 5]
    owners: dict[str, dict[int, str]] = {}
    for gen in gens[1:]:
        current = {p: m["member_id"] for m in gen["members"] for t in m["assignment"] or [] for p in t["partitions"]}
        owners[gen["generation"]] = current
    # In the first rebalance of each scale-out (2 and 4) nothing moves between members: partitions
    # either stay with their owner or are withheld; the next generation hands them out.
    for first, previous in ((2, 1), (4, 3)):
        assert all(owners[previous][p] == m for p, m in owners[first].items())
        assert len(owners[first]) < 12 and len(owners[first + 1]) == 12


def test_the_rebalance_storm_cuts_a_generation_short_and_waits_for_stalled_members() -> None:
    result = run("rebalance-storm")
    gens = group(result, "workers")["generations"]
    never_stable = [g for g in gens[1:] if g["stable_at"] is None]
    assert never_stable and never_stable[0]["end_reason"] == "member_joined"
    held_open = [g for g in gens if g["rebalance_started_at"] and g["started_at"] - g["rebalance_started_at"] >= 15_000]
    assert held_open, "a crashed or stalled member should hold some rebalance open"
    assert events(result, "poll_timeout_expired")
    assert len(gens) >= 10


def test_poll_timeout_makes_the_dynamic_member_leave_and_the_static_one_expire() -> None:
    result = run("poll-timeout")
    removals = {e["member_id"].split("-")[0]: e["reason"] for e in events(result, "member_removed")}
    assert "poll timeout" in removals["slow"] and "heartbeat expiration" in removals["static"]


def test_partitions_added_are_assigned_after_the_leader_rejoins() -> None:
    result = run("partitions-added")
    gens = group(result, "ledger-readers")["generations"]
    assert [g["end_reason"] for g in gens[1:3]] == ["leader_rejoined", "member_metadata_changed"]
    assigned = {(t["topic"], p) for m in gens[2]["members"] for t in m["assignment"] for p in t["partitions"]}
    assert assigned == {("ledger", p) for p in range(6)}


def test_offsets_expire_and_groups_are_deleted_with_tombstones() -> None:
    result = run("offsets-retention-and-deletion")
    start = result.timeline["start_ms"]
    removals = {g["group"]: [(r["reason"], r["at"] - start) for r in g["removals"]] for g in result.timeline["groups"]}
    # inventory-sync became Empty at 60 s: retention 10 min -> the first 2-min check after 660 s.
    # manual-replay (simple consumer) committed at 90 s -> expires at the check after 690 s.
    # legacy-tool's commit at 100 s carried a 5 min retention: expire timestamp 400 s -> check at 480 s.
    assert removals == {
        "inventory-sync": [("expired", 720_000)],
        "archiver": [("deleted", 240_000)],
        "manual-replay": [("expired", 720_000)],
        "legacy-tool": [("expired", 480_000)],
    }
    legacy = [r for r in decoded(result) if r.type == "offset_commit" and r.key["group"] == "legacy-tool" and r.value]
    assert [(r.value_version, r.value["expire_timestamp"] - start) for r in legacy] == [(1, 400_000)]
    results = {e["kind"]: e for e in result.timeline["events"] if e["kind"].endswith("_result")}
    assert results["simple_commit_result"]["error"] == "NONE"
    first_delete = [e for e in events(result, "delete_group_result")][0]
    assert first_delete["error"] == "NON_EMPTY_GROUP"
    tombstones = [r for r in decoded(result) if r.value is None]
    assert {(t.type, t.key["group"]) for t in tombstones} >= {
        ("group_metadata", "archiver"),
        ("offset_commit", "archiver"),
    }


def test_join_errors_are_answered_and_the_vote_picks_roundrobin() -> None:
    result = run("join-errors")
    fatal = {e["source"].split(":")[1]: e["error"] for e in events(result, "fatal_error")}
    assert fatal == {
        "too-many": "GROUP_MAX_SIZE_REACHED",
        "too-short": "INVALID_SESSION_TIMEOUT",
        "wrong-assignor": "INCONSISTENT_GROUP_PROTOCOL",
    }
    assert group(result, "shippers")["generations"][1]["protocol"] == "roundrobin"


def test_sticky_keeps_surviving_assignments_when_a_member_crashes() -> None:
    result = run("sticky-crash-and-recover")
    gens = group(result, "sink")["generations"]
    before = {
        m["client_id"]: {(t["topic"], p) for t in m["assignment"] for p in t["partitions"]} for m in gens[1]["members"]
    }
    after = {
        m["client_id"]: {(t["topic"], p) for t in m["assignment"] for p in t["partitions"]} for m in gens[2]["members"]
    }
    kept = sum(len(before[c] & after[c]) for c in after)
    moved_from_survivors = sum(len(before[c] - after[c]) for c in after)
    assert gens[1]["end_reason"] == "session_timeout" and "s3" not in after
    assert kept >= 5 and moved_from_survivors <= 1  # s1 gives up one partition to take both audit partitions


def test_timeouts_and_fencing_show_the_coordinators_own_removals() -> None:
    result = run("timeouts-and-fencing")
    start = result.timeline["start_ms"]
    removals = [(e["at"] - start, e["member_id"].split("-")[0], e["reason"]) for e in events(result, "member_removed")]
    # zombie crashed (60 s session); newcomer's join at 21 s starts a rebalance it never rejoins:
    # removed when the 15 s rebalance timeout ends, long before its session would expire.
    assert (36_000, "zombie", "did not rejoin before the rebalance timeout") in removals
    # late's JoinGroup response waits while it stalls: the group is Stable at 63.1 s without its
    # SyncGroup, and the pending-sync timeout (15 s) removes it.
    assert (78_100, "late", "did not send SyncGroup before the rebalance timeout") in removals
    gens = group(result, "guarded")["generations"]
    assert [g["end_reason"] for g in gens[1:4]] == ["member_joined", "member_metadata_changed", "sync_timeout"]
    late_sync = [
        e for e in events(result, "sync_group_response") if e["source"] == "consumer:late" and e["error"] != "NONE"
    ]
    assert late_sync[0]["error"] == "UNKNOWN_MEMBER_ID"
    fatal = {e["source"]: e["error"] for e in events(result, "fatal_error")}
    assert fatal == {"consumer:twin-a": "FENCED_INSTANCE_ID"}
    assert len(events(result, "static_member_replaced")) == 1


def test_runs_do_not_depend_on_pythons_string_hash_seed() -> None:
    import subprocess
    import sys

    script = (
        "import hashlib, json, sys; from coordinator import simulate; r = simulate(sys.argv[1]); "
        "h = hashlib.sha256(b''.join(x.key + (x.value or b'-') for x in r.records)); "
        "h.update(json.dumps([r.timeline, r.tables], sort_keys=True).encode()); print(h.hexdigest())"
    )
    path = str(SCENARIO_DIR / "rebalance-storm.yaml")
    root = Path(__file__).resolve().parents[2]
    digests = {
        subprocess.run(
            [sys.executable, "-c", script, path],
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(root)},
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(digests) == 1
