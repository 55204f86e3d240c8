"""pipelines/demo.py without Spark: the summary over hand-built gold rows, the warehouse it owns, the hints."""

from __future__ import annotations

import datetime as dt
import shlex
from pathlib import Path

import pytest

from broker.demo_workload import ScenarioOutcome
from pipelines.demo import (
    DEMO_MARKER,
    DemoError,
    DemoResult,
    FreshnessOutcome,
    GoldRows,
    ValidationOutcome,
    _plural,
    format_freshness,
    format_group,
    format_rebuild,
    format_validation,
    group_summaries,
    prepare_warehouse,
    query_examples,
    scenario_path,
    summary_lines,
)
from pipelines.freshness import Latency

T0 = dt.datetime(2026, 11, 22, 2, 0, 0)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def generation(group: str, gen: int, members: int, started: float, ended: float | None, reason: str | None,
               **extra: object) -> dict:
    return {"cluster_name": "local", "group": group, "incarnation": 0, "generation": gen, "protocol_type": "consumer",
            "protocol": "range", "member_count": members, "started_at": at(started),
            "stable_at": at(started + 0.1), "ended_at": None if ended is None else at(ended), "end_reason": reason,
            **extra}


def rebalance(group: str, before: int, after: int, cause: str, stable: float, **extra: object) -> dict:
    row = {"group": group, "event_type": "rebalance", "from_generation": before, "to_generation": after,
           "stable_at": at(stable), "stopped_ms_lower_bound": 300, "stopped_ms_upper_bound": 800,
           "members_before": before, "members_after": after, "partitions_moved": 3, "likely_cause": cause,
           "rebalance_protocol": "eager", "static_restarts": [], "is_storm": False}
    return {**row, **extra}


def member(group: str, member_id: str, client_id: str, instance_id: str | None = None) -> dict:
    return {"group": group, "member_id": member_id, "client_id": client_id, "group_instance_id": instance_id,
            "valid_to": None}


def owns(group: str, member_id: str, *partitions: int, topic: str | None = "orders") -> list[dict]:
    return [{"group": group, "member_id": member_id, "topic": topic, "partition": p, "valid_to": None}
            for p in partitions]


def lag(group: str, partition: int, messages: int | None, status: str | None, group_status: str,
        total: int) -> dict:
    return {"group": group, "topic": "orders", "partition": partition, "lag": messages, "partition_status": status,
            "group_status": group_status, "group_lag": total, "snapshot_time": at(30)}


SCALE_OUT = GoldRows(
    # Deliberately out of order: the summary sorts by generation and by time.
    generations=[generation("scale", 3, 3, 2.0, None, None), generation("scale", 1, 1, 0.0, 1.0, "member_joined"),
                 generation("scale", 2, 2, 1.0, 2.0, "member_joined")],
    rebalances=[rebalance("scale", 2, 3, "member_joined", 2.1), rebalance("scale", 1, 2, "member_joined", 1.1)],
    members=[member("scale", "scale-2-aaaabbbbcccc", "scale-2"),
             member("scale", "scale-1-0000111122223333", "scale-1")],
    assignments=owns("scale", "scale-1-0000111122223333", 1, 0) + owns("scale", "scale-2-aaaabbbbcccc", 2, 3),
    lag=[lag("scale", 1, 0, "OK", "OK", 0), lag("scale", 0, 0, "OK", "OK", 0)],
)


def lines_of(gold: GoldRows, group: str, outcome: ScenarioOutcome | None = None) -> list[str]:
    (summary,) = [s for s in group_summaries(gold) if s.group == group]
    return format_group(summary, outcome)


def test_groups_come_in_the_given_order_then_by_name_and_each_table_is_sorted() -> None:
    gold = GoldRows(generations=SCALE_OUT.generations + [generation("zeta", 1, 1, 0, None, None),
                                                         generation("alpha", 1, 1, 0, None, None)],
                    lag=[lag("only-lag", 0, 5, "WARN", "WARN", 5)])
    summaries = group_summaries(gold, order=["scale", "not-in-gold"])
    assert [s.group for s in summaries] == ["scale", "alpha", "only-lag", "zeta"]
    assert [g["generation"] for g in summaries[0].generations] == [1, 2, 3]


def test_a_group_shows_its_generations_with_member_counts_and_why_each_ended() -> None:
    lines = lines_of(SCALE_OUT, "scale")
    assert "    gen 1: 1 member, started 02:00:00.000, ended 02:00:01.000: member_joined" in lines
    assert "    gen 2: 2 members, started 02:00:01.000, ended 02:00:02.000: member_joined" in lines
    assert "    gen 3: 3 members, started 02:00:02.000, current" in lines
    assert lines[0] == "scale  (classic, range)"


def test_rebalances_are_listed_in_time_order_with_their_likely_cause_and_protocol() -> None:
    lines = lines_of(SCALE_OUT, "scale")
    first = lines.index("    gen 1 -> 2 at 02:00:01.100: member_joined "
                        "(1 -> 2 members, 3 partitions moved, members stopped >= 0.3s, <= 0.8s, eager)")
    second = lines.index("    gen 2 -> 3 at 02:00:02.100: member_joined "
                         "(2 -> 3 members, 3 partitions moved, members stopped >= 0.3s, <= 0.8s, eager)")
    assert first < second


def test_a_static_restart_is_shown_as_kept_generation_without_a_rebalance() -> None:
    gold = GoldRows(generations=[generation("static", 2, 2, 0, None, None)], rebalances=[
        rebalance("static", 2, 2, "static_member_restart", 5.0, event_type="static_member_restart",
                  static_restarts=["static-b"], partitions_moved=0, rebalance_protocol=None)])
    assert "    gen 2 kept at 02:00:05.000: static member restart of static-b -- no rebalance" in \
        lines_of(gold, "static")


def test_a_storm_and_a_cooperative_rebalance_are_flagged() -> None:
    gold = GoldRows(rebalances=[rebalance("coop", 1, 2, "leader_rejoined", 1, rebalance_protocol="cooperative",
                                          is_storm=True, partitions_moved=0)])
    assert "    gen 1 -> 2 at 02:00:01.000: leader_rejoined (1 -> 2 members, 0 partitions moved, " \
           "members stopped >= 0.3s, <= 0.8s, cooperative, STORM)" in lines_of(gold, "coop")


def test_current_members_are_listed_with_the_partitions_they_own() -> None:
    lines = lines_of(SCALE_OUT, "scale")
    at_members = lines.index("  current members and assignment (gold.group_membership / gold.partition_assignments, "
                             "valid_to null):")
    # Sorted by client id; the member id's tail tells a restarted member from its predecessor.
    assert lines[at_members + 1:at_members + 3] == [
        "    scale-1 (member ...22223333): orders[0,1]",
        "    scale-2 (member ...bbbbcccc): orders[2,3]",
    ]


def test_a_static_member_shows_its_instance_id_and_an_unknown_topic_a_question_mark() -> None:
    gold = GoldRows(members=[member("g", "x-12345678", "x", "static-x")], assignments=owns("g", "x-12345678", 0,
                                                                                            topic=None))
    assert "    x [static static-x] (member ...12345678): ?[0]" in lines_of(gold, "g")


def test_owners_missing_from_membership_are_still_listed_with_their_partitions() -> None:
    gold = GoldRows(assignments=owns("g", "ghost-member-0001", 4))
    assert "    ghost-member-0001 (member ...ber-0001): orders[4]" in lines_of(gold, "g")


def test_a_kip848_member_shows_what_it_owns_what_it_is_revoking_and_a_differing_target() -> None:
    def kind(name: str, *partitions: int) -> list[dict]:
        return [{**row, "assignment_kind": name} for row in owns("k", "m-1", *partitions)]

    settled = GoldRows(members=[member("k", "m-1", "k-1")], assignments=kind("current", 0, 1) + kind("target", 1, 0))
    assert "    k-1 (member ...m-1): orders[0,1]" in lines_of(settled, "k")
    moving = GoldRows(members=[member("k", "m-1", "k-1")],
                      assignments=kind("current", 0, 1, 2) + kind("pending_revocation", 2) + kind("target", 0, 1))
    assert "    k-1 (member ...m-1): orders[0,1,2], revoking orders[2], target orders[0,1]" in lines_of(moving, "k")


def test_lag_shows_the_group_status_and_total_then_each_partition() -> None:
    gold = GoldRows(lag=[lag("late", p, 33, "STOP", "ERR", 99) for p in (2, 0, 1)] + [lag("late", 3, None, None,
                                                                                         "ERR", 99)])
    lines = lines_of(gold, "late")
    assert "    group status ERR, total lag 99 messages at 02:00:30.000" in lines
    assert "    orders-0: 33 STOP   orders-1: 33 STOP   orders-2: 33 STOP" in lines
    assert "    orders-3: - -" in lines


def test_a_group_known_only_from_lag_says_gold_recorded_no_generations_for_it() -> None:
    gold = GoldRows(lag=[lag("kip848", 0, 0, "OK", "OK", 0)])
    lines = lines_of(gold, "kip848")
    assert lines[0] == "kip848"
    assert lines[lines.index("  generations (gold.group_generations):") + 1] == "    none recorded for this group"
    assert lines[lines.index("  rebalances (gold.rebalance_events, likely causes):") + 1] == "    none"


def test_a_kip848_group_shows_its_group_type_from_gold() -> None:
    gold = GoldRows(generations=[generation("k", 4, 2, 0, None, None, group_type="consumer", protocol="uniform")])
    assert lines_of(gold, "k")[0] == "k  (consumer, uniform)"


def test_the_workload_story_comes_before_what_gold_shows() -> None:
    outcome = ScenarioOutcome("scale-out 1->2->3 (range)", "scale", ["scale-1 joined", "scale-2 joined"], 2.0)
    lines = lines_of(SCALE_OUT, "scale", outcome)
    assert lines[:4] == ["scale  (classic, range)  -- scale-out 1->2->3 (range)", "  what the workload did:",
                         "    scale-1 joined", "    scale-2 joined"]


def test_validation_reports_pass_or_the_differences_per_scenario_and_table(tmp_path: Path) -> None:
    passed = ValidationOutcome(tmp_path, ["a", "b"], True, {}, "r1", 3.0)
    assert format_validation(passed) == [f"validation of a, b in {tmp_path}: PASS (gold matches the reference "
                                         "coordinator)"]
    failed = ValidationOutcome(tmp_path, ["a"], False, {("a", "gold.group_generations"): 2,
                                                        ("a", "gold.committed_offsets"): 1}, "r2", 3.0)
    assert format_validation(failed) == [
        f"validation of a in {tmp_path}: FAIL (3 differences, gold.validation_diffs run_id=r2)",
        "  a gold.committed_offsets: 1 differences", "  a gold.group_generations: 2 differences"]


def test_counts_in_progress_lines_take_the_english_plural() -> None:
    assert [_plural(1, "batch"), _plural(2, "batch"), _plural(0, "member"), _plural(3, "time")] == [
        "1 batch", "2 batches", "0 members", "3 times"]


def test_the_comparison_with_a_rebuild_names_only_the_tables_that_differ_and_how() -> None:
    assert format_rebuild({"gold.a": (0, 0), "gold.b": (0, 0)}) == \
        "gold equals a full rebuild from bronze, all 2 tables"
    assert format_rebuild({"gold.a": (0, 0), "gold.b": (2, 1)}) == (
        "gold DIFFERS from a full rebuild from bronze: gold.b (2 rows only in gold, 1 only in the rebuild)")


def test_freshness_is_given_once_warm_first_then_over_every_record_and_says_when_the_job_was_never_warm() -> None:
    every, warm = Latency(90, 30.0, 60.0, 61.0), Latency(40, 12.0, 20.0, 21.0)
    none = Latency(0, None, None, None)
    lines = format_freshness(FreshnessOutcome(every, none, 5, "2 seconds", warm, none))
    assert lines == [
        "Freshness (the main job beside the workload, trigger 2 seconds, 5 gold refreshes; "
        "target p95 10s):",
        "  records appended once the job was warm (gold had absorbed commits, then a rebalance):",
        "    commit record -> gold.committed_offsets:    p50 12.0s, p95 20.0s, max 21.0s over 40 records",
        "    rebalance's record -> gold.rebalance_events: no records",
        "  every record, the job's start included:",
        "    commit record -> gold.committed_offsets:    p50 30.0s, p95 60.0s, max 61.0s over 90 records",
        "    rebalance's record -> gold.rebalance_events: no records"]
    cold = format_freshness(FreshnessOutcome(every, none, 5, "2 seconds"))
    assert cold[1] == "  every record, the job's start included (the job was not warm before the workload):"
    assert len(cold) == 4


def test_the_sql_examples_survive_the_shell_with_their_backticks(tmp_path: Path) -> None:
    examples = [line.strip() for line in query_examples(tmp_path) if "offsetlake sql" in line]
    assert len(examples) == 3
    for example in examples:
        words = shlex.split(example)
        assert words[0] == f"OFFSETLAKE_WAREHOUSE={tmp_path}" and words[1:3] == [".venv/bin/offsetlake", "sql"]
        assert len(words) == 4 and words[3].startswith("SELECT `group`,")
    (pyspark,) = [line for line in query_examples(tmp_path) if "spark.read.format('delta')" in line]
    code = shlex.split(pyspark.strip())[2]
    assert f".load('{tmp_path}/gold/group_generations')" in code
    compile(code, "<example>", "exec")


def test_the_summary_lists_a_scripted_group_gold_does_not_know(tmp_path: Path) -> None:
    outcomes = [ScenarioOutcome("scale-out", "scale", ["x"], 1.0), ScenarioOutcome("KIP-848", "k", ["y"], 1.0)]
    result = DemoResult(warehouse=tmp_path, outcomes=outcomes, rows_per_table={"gold.group_generations": 3},
                        gold=SCALE_OUT, validation=None, steps=[("ingest", 2.5)], seconds=9.0)
    lines = summary_lines(result)
    assert "k  -- KIP-848: not in gold" in lines
    assert lines.index("scale  (classic, range)  -- scale-out") < lines.index("k  -- KIP-848: not in gold")
    assert lines[-2:] == ["steps: ingest 2.5s", "done in 9.0s"]


def test_a_new_warehouse_is_created_and_marked_as_the_demos(tmp_path: Path) -> None:
    prepare_warehouse(tmp_path / "wh")
    assert [p.name for p in (tmp_path / "wh").iterdir()] == [DEMO_MARKER]


def test_a_warehouse_the_demo_wrote_is_emptied_for_the_next_run(tmp_path: Path) -> None:
    prepare_warehouse(tmp_path)
    (tmp_path / "gold" / "t").mkdir(parents=True)
    (tmp_path / "gold" / "t" / "part.parquet").write_text("x")
    prepare_warehouse(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [DEMO_MARKER]


def test_a_foreign_warehouse_is_refused_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "gold").mkdir()
    with pytest.raises(DemoError, match="not empty and was not written by the demo"):
        prepare_warehouse(tmp_path)
    assert (tmp_path / "gold").is_dir()


def test_validation_scenarios_are_found_by_name_and_an_unknown_one_is_one_line() -> None:
    assert scenario_path("static-membership-restart").name == "static-membership-restart.yaml"
    with pytest.raises(DemoError, match="validation scenario no-such not found"):
        scenario_path("no-such")
