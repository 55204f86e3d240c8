"""``offsetlake validate``: gold agrees with the reference coordinator over the whole scenario suite.

The comparison (``pipelines.validation.check``) runs over the shared scenario warehouse
(tests/pipelines/scenario_warehouse.py: every scenario built into gold by ``build_gold``, then the rest of
their records added incrementally); a tampered expectation must then show up as a difference row
and a failing exit status. ``validate`` itself refuses scenarios that would share a group before
it touches the cluster.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from pipelines.delta_tables import read_table
from pipelines.gold.committed_offsets import TABLE as COMMITTED_OFFSETS
from pipelines.validation import check, expected_rebalance_events, validate
from schemas.validation_diffs import TABLE as DIFFS

pytestmark = [pytest.mark.broker, pytest.mark.spark]
ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "conf" / "scenarios").glob("*.yaml"))


@pytest.fixture(scope="module")
def suite(spark, scenario_warehouse):  # type: ignore[no-untyped-def]
    settings = scenario_warehouse["settings"]
    return settings, check(spark, settings, scenario_warehouse["results"], topic=scenario_warehouse["topic"])


def test_gold_matches_the_reference_for_every_scenario(spark, suite) -> None:  # type: ignore[no-untyped-def]
    settings, report = suite
    assert len(SCENARIOS) == 12
    assert report.scenarios == [p.stem for p in SCENARIOS]
    assert [(d.scenario, d.table, d.key, d.field, d.expected, d.actual) for d in report.diffs] == []
    assert report.ok
    assert all(n == 0 for n in report.counts().values()) and len(report.counts()) == 12 * 6
    assert read_table(spark, settings, DIFFS).count() == 0
    # The rebalance checks had something to check: stops inside gold's bounds, named triggers, moves.
    rebalances = [row for r in report.results.values() for row in expected_rebalance_events(r)]
    assert sum(1 for row in rebalances if row["stopped_at"]) >= 30
    assert sum(1 for row in rebalances if row["triggered_by"]) >= 30
    assert sum(row["partitions_moved"] for row in rebalances) >= 100


def test_a_follow_up_blamed_on_another_member_or_a_stop_before_the_bounds_is_a_difference(spark, suite) -> None:  # type: ignore[no-untyped-def]
    settings, report = suite
    name = "cooperative-follower-revokes"
    tampered = copy.deepcopy(report.results[name])
    [follow_up] = [g for g in tampered.timeline["groups"][0]["generations"] if g["generation"] == 3]
    auditor = next(e["member_id"] for e in tampered.timeline["events"]
                   if e["source"] == "consumer:auditor" and e.get("member_id"))
    follow_up["rebalance_reason"] = f"Updating metadata for member {auditor} during Stable"  # revoked nothing
    first_revocation = next(e for e in tampered.timeline["events"] if e["kind"] == "partitions_revoked")
    first_revocation["at"] -= 60_000  # a minute before the generation it stopped for was even recorded

    bad = check(spark, settings, {name: tampered}, topic=report.topic)
    assert [(d.table, d.key, d.field) for d in bad.diffs] == [
        ("gold.rebalance_events", "group=bookkeeping, from_generation=2, to_generation=3", "stopped_at"),
        ("gold.rebalance_events", "group=bookkeeping, from_generation=2, to_generation=3", "triggered_by")]


def test_a_kip848_subscription_row_that_is_wrong_or_missing_is_a_difference(spark, suite) -> None:  # type: ignore[no-untyped-def]
    settings, report = suite
    name = "kip848-subscription-change"
    # The KIP-848 rows were compared: ledger-2's two rows (its subscription changed), epochs, assignments.
    result = report.results[name]
    assert len(result.tables["consumer_group_membership"]) == 4
    assert len(result.tables["consumer_group_generations"]) == 6
    assert result.tables["consumer_group_partition_assignments"]
    rows = sorted((r for r in result.tables["consumer_group_membership"] if r["client_id"] == "ledger-2"),
                  key=lambda r: r["valid_from"])
    before, after = [f"group=ledger, member_id={r['member_id']}, valid_from={r['valid_from']}" for r in rows]

    # A wrong subscription on the row after the change.
    wrong = copy.deepcopy(result)
    [row] = [r for r in wrong.tables["consumer_group_membership"]
             if r["client_id"] == "ledger-2" and r["valid_from"] == rows[1]["valid_from"]]
    row["subscribed_topics"] = ["orders"]
    bad = check(spark, settings, {name: wrong}, topic=report.topic)
    assert not bad.ok
    assert [(d.table, d.key, d.field, d.expected, d.actual) for d in bad.diffs] == [
        ("gold.group_membership", after, "subscribed_topics", '["orders"]', '["orders", "payments"]')]

    # The history gold had before issue 12 item 5: one row from the join with both topics.
    collapsed = copy.deepcopy(result)
    table = collapsed.tables["consumer_group_membership"]
    first = next(r for r in table if r["client_id"] == "ledger-2" and r["valid_from"] == rows[0]["valid_from"])
    second = next(r for r in table if r["client_id"] == "ledger-2" and r["valid_from"] == rows[1]["valid_from"])
    first.update(subscribed_topics=["orders", "payments"], valid_to=None, last_generation=second["last_generation"],
                 last_member_epoch=second["last_member_epoch"])
    table.remove(second)
    bad = check(spark, settings, {name: collapsed}, topic=report.topic)
    assert {(d.table, d.key, d.field) for d in bad.diffs} == {
        ("gold.group_membership", before, "subscribed_topics"), ("gold.group_membership", before, "valid_to"),
        ("gold.group_membership", before, "last_generation"), ("gold.group_membership", before, "last_member_epoch"),
        ("gold.group_membership", after, "(row)")}


def _last_commits(result) -> dict[int, tuple]:  # type: ignore[no-untyped-def]
    """Index of each partition's last expected commit -> (group, topic, partition)."""
    last = {(c["group"], c["topic"], c["partition"]): i for i, c in enumerate(result.tables["committed_offsets"])}
    return {i: k for k, i in last.items()}


def test_a_tampered_expected_offset_is_a_difference_and_fails(spark, suite, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    settings, report = suite
    # Tamper the last expected commit of a partition whose offset gold keeps (not removed later).
    kept = {(r["group"], r["topic"], r["partition"])
            for r in read_table(spark, settings, COMMITTED_OFFSETS).collect()}
    name, index = next((name, i) for name in report.scenarios
                       for i, c in _last_commits(report.results[name]).items() if c in kept)
    tampered = copy.deepcopy(report.results[name])
    tampered.tables["committed_offsets"][index]["offset"] += 1

    bad = check(spark, settings, {name: tampered}, topic=report.topic)
    assert not bad.ok
    assert [(d.table, d.field) for d in bad.diffs] == [("gold.committed_offsets", "offset")]
    diff = bad.diffs[0]
    assert int(diff.expected) == int(diff.actual) + 1
    rows = read_table(spark, settings, DIFFS).where(f"run_id = '{bad.run_id}'").collect()
    assert [(r["scenario"], r["table"], r["field"], r["cluster_name"]) for r in rows] == \
        [(name, "gold.committed_offsets", "offset", settings.cluster_name)]

    # The command exits 1 and prints the count per scenario and table.
    import cli.validate
    import pipelines.spark_session
    import pipelines.validation
    from cli.main import main

    class _NoStop:
        def stop(self) -> None:  # the session fixture's SparkSession must survive
            pass

    monkeypatch.setattr(pipelines.spark_session, "build_spark_session", lambda s: _NoStop())
    monkeypatch.setattr(pipelines.validation, "validate", lambda *a, **k: bad)
    monkeypatch.setenv("OFFSETLAKE_WAREHOUSE", settings.warehouse)  # its writer lease, not in ./warehouse
    assert main(["validate", str(SCENARIOS[0])]) == 1
    out = capsys.readouterr()
    assert f"{name}\tgold.committed_offsets\t1" in out.out.splitlines()
    assert "1 differences" in out.err
    assert cli.validate.report_exit_code(report) == 0


def test_validate_refuses_a_scenario_given_twice_or_two_scenarios_sharing_a_group(base_settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # No SparkSession or broker is needed to refuse: the scenarios are checked before anything runs.
    with pytest.raises(ValueError, match=f"scenario {SCENARIOS[0].stem} given twice"):
        validate(None, base_settings, [SCENARIOS[0], SCENARIOS[0]])  # type: ignore[arg-type]
    twin = tmp_path / "twin.yaml"
    twin.write_text(SCENARIOS[0].read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ValueError, match=f"scenarios {SCENARIOS[0].stem} and twin both use group "):
        validate(None, base_settings, [SCENARIOS[0], twin])  # type: ignore[arg-type]
