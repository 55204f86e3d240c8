"""pipelines/sql_views.py: the warehouse's tables and the dashboard views in Spark's catalog.

The views are asked about the sample warehouse (tests/dashboard/sample_warehouse.py, whose docstring
tells the story the expected answers are reasoned from): real groups alpha (3 rebalances, now Empty),
beta (one member, still Stable) and gamma (KIP-848), two ingests and three end-offset snapshots.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pipelines.sql_views import (
    VIEWS_DIR,
    ViewSpec,
    dependency_order,
    error_line,
    load_views,
    parse_view,
    register_catalog,
)
from schemas.catalog import TABLES
from tests.dashboard.sample_warehouse import PARTITIONS

EXPECTED_VIEWS = {
    "dashboards.top_rebalancing_groups", "dashboards.rebalance_timeline", "dashboards.partition_ownership",
    "dashboards.lag_over_time", "dashboards.consumer_status_now", "dashboards.stale_groups",
    "dashboards.membership_churn", "dashboards.topic_names",
}


# -- the view files, without Spark -------------------------------------------------------------------------

def test_a_view_file_header_gives_the_question_parameters_inputs_and_examples() -> None:
    view = parse_view("v", "\n".join([
        "-- Question: Who owned it?",
        "-- Parameters: a time T; filter with",
        "--   WHERE valid_from <= T.",
        "-- Reads: gold.a, dashboards.b",
        "-- Example: SELECT 1",
        "--   FROM x",
        "-- Example: SELECT 2",
        "SELECT * FROM gold.a;",
    ]))
    assert view == ViewSpec(name="dashboards.v", question="Who owned it?",
                            parameters="a time T; filter with WHERE valid_from <= T.",
                            reads=("gold.a", "dashboards.b"), examples=("SELECT 1 FROM x", "SELECT 2"),
                            sql="SELECT * FROM gold.a")


def test_a_view_file_without_a_question_is_refused() -> None:
    with pytest.raises(ValueError, match="view v: header lacks Question"):
        parse_view("v", "-- Parameters: none\n-- Reads: gold.a\nSELECT 1")


def test_views_come_after_the_views_they_read_and_cycles_are_refused() -> None:
    def view(name: str, *reads: str) -> ViewSpec:
        return ViewSpec(f"dashboards.{name}", "q", "p", reads, (), "SELECT 1")

    views = {v.name: v for v in (view("a", "dashboards.c"), view("b"), view("c", "gold.x", "dashboards.b"))}
    assert [v.name for v in dependency_order(views)] == ["dashboards.b", "dashboards.c", "dashboards.a"]
    with pytest.raises(ValueError, match="cycle"):
        dependency_order({v.name: v for v in (view("a", "dashboards.b"), view("b", "dashboards.a"))})


def test_every_view_file_has_a_header_and_the_expected_views_are_all_there() -> None:
    views = load_views()
    assert {v.name for v in views} == EXPECTED_VIEWS == {f"dashboards.{p.stem}" for p in VIEWS_DIR.glob("*.sql")}
    names = [v.name for v in views]
    assert names.index("dashboards.consumer_status_now") < names.index("dashboards.stale_groups")
    for view in views:
        assert view.question.endswith("?") and view.reads and view.examples, view.name
        assert all(name in TABLES or name in EXPECTED_VIEWS for name in view.reads), view.name


# -- against the sample warehouse ----------------------------------------------------------------------------



@pytest.fixture(scope="module")
def sample(sample_traffic_warehouse):  # type: ignore[no-untyped-def]
    return sample_traffic_warehouse


@pytest.fixture
def catalog(spark, sample):  # type: ignore[no-untyped-def]
    """The sample warehouse registered (again: other tests may have pointed the catalog elsewhere)."""
    return register_catalog(spark, sample.settings)


def rows(spark, query: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return [row.asDict(recursive=True) for row in spark.sql(query).collect()]


@pytest.mark.broker
@pytest.mark.spark
def test_every_existing_table_is_registered_as_layer_dot_table_over_its_delta_directory(spark, sample, catalog) -> None:  # type: ignore[no-untyped-def]
    from pipelines.delta_tables import read_table, table_path

    assert set(catalog.tables) | set(catalog.missing_tables) == set(TABLES)
    assert set(catalog.missing_tables) == {name for name, spec in TABLES.items()
                                           if not (Path(table_path(sample.settings, spec)) / "_delta_log").is_dir()}
    for name in ("gold.rebalance_events", "gold.partition_assignments", "gold.consumer_lag",
                 "silver.offset_commits", "silver.partition_end_offsets"):
        assert name in catalog.tables
        assert spark.table(name).count() == read_table(spark, sample.settings, TABLES[name]).count() > 0, name
    assert set(catalog.views) == EXPECTED_VIEWS and catalog.skipped_views == {}


@pytest.mark.broker
@pytest.mark.spark
def test_registering_another_warehouse_repoints_the_tables_and_skips_views_whose_tables_are_absent(
        spark, sample, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pyspark.errors import AnalysisException

    empty = sample.settings.model_copy(update={"warehouse": str(tmp_path / "empty")})
    report = register_catalog(spark, empty)
    assert report.tables == [] and report.views == []
    assert set(report.skipped_views) == EXPECTED_VIEWS
    assert "gold.rebalance_events" in report.skipped_views["dashboards.top_rebalancing_groups"]
    with pytest.raises(AnalysisException) as failure:
        spark.sql("SELECT * FROM gold.rebalance_events").collect()
    assert error_line(failure.value).startswith("[TABLE_OR_VIEW_NOT_FOUND]")
    again = register_catalog(spark, sample.settings)  # dropping the registrations kept the files
    assert set(again.views) == EXPECTED_VIEWS
    assert spark.table("gold.rebalance_events").count() > 0


@pytest.mark.broker
@pytest.mark.spark
def test_top_rebalancing_groups_ranks_alpha_with_its_three_rebalances(spark, sample, catalog) -> None:  # type: ignore[no-untyped-def]
    top = {r["group"]: r for r in rows(spark, "SELECT * FROM dashboards.top_rebalancing_groups")}
    alpha, beta = top[sample.alpha], top[sample.beta]
    # alpha: a1 joined (0 -> 1), a2 joined (1 -> 2), a2 left (2 -> 3), a1 left (3 -> 4, Empty).
    assert (alpha["rebalances"], alpha["members_joined"], alpha["members_left"]) == (4, 2, 2)
    assert alpha["storm_rebalances"] == 0 and alpha["rebalances_last_24h"] == 4
    assert alpha["partitions_moved"] == 4  # 2 when a2 took half, 2 when a1 took them back
    assert alpha["first_rebalance_at"] < sample.before_a2_joined
    assert sample.after_a2_left < alpha["last_rebalance_at"] <= sample.after_alpha_empty + dt.timedelta(seconds=2)
    assert alpha["rank"] == 1 + sum(1 for r in top.values() if r["rebalances"] > 4)
    # beta: b1 joined its new group (0 -> 1) and stayed.
    assert (beta["rebalances"], beta["members_joined"], beta["members_left"], beta["partitions_moved"]) == (1, 1, 0, 0)


@pytest.mark.broker
@pytest.mark.spark
def test_a_groups_rebalance_timeline_is_its_rebalances_in_order_with_likely_causes(spark, sample, catalog) -> None:  # type: ignore[no-untyped-def]
    timeline = rows(spark, f"SELECT * FROM dashboards.rebalance_timeline WHERE `group` = '{sample.alpha}' "
                           "ORDER BY stable_at")
    assert [(r["event_type"], r["from_generation"], r["to_generation"], r["members_before"], r["members_after"],
             r["joined_count"], r["left_count"]) for r in timeline] == [
        ("rebalance", 0, 1, 0, 1, 1, 0),
        ("rebalance", 1, 2, 1, 2, 1, 0),
        ("rebalance", 2, 3, 2, 1, 0, 1),
        ("rebalance", 3, 4, 1, 0, 0, 1),
    ]
    assert [r["likely_cause"] for r in timeline[:2]] == ["member_joined", "member_joined"]
    assert {timeline[2]["likely_cause"], timeline[3]["likely_cause"]} <= {"member_left", "member_left_or_vanished"}
    assert timeline[1]["rebalance_protocol"] == "eager" and timeline[1]["protocol"] == "range"
    # Range over 4 partitions: a1 keeps 2 and gives 2 to a2, then takes them back; nobody owned any
    # before generation 1 or after generation 3.
    assert [(r["partitions_moved"], r["partitions_kept"]) for r in timeline] == [(0, 0), (2, 2), (2, 2), (0, 0)]
    assert timeline[0]["stable_at"] < sample.before_a2_joined
    assert sample.between_generations < timeline[1]["stable_at"] <= sample.during_second_generation


@pytest.mark.broker
@pytest.mark.spark
def test_partition_ownership_at_a_moment_is_the_owner_of_the_generation_then(spark, sample, catalog) -> None:  # type: ignore[no-untyped-def]
    def owners(at: dt.datetime, group: str) -> list[tuple]:
        ts = at.isoformat(sep=" ")
        return sorted((r["partition"], r["client_id"], r["generation"]) for r in rows(spark, (
            f"SELECT * FROM dashboards.partition_ownership WHERE `group` = '{group}' "
            f"AND valid_from <= TIMESTAMP '{ts}' AND (valid_to IS NULL OR valid_to > TIMESTAMP '{ts}')")))

    # Between generations 1 and 2 the earlier owner, a1, holds all four partitions.
    assert owners(sample.between_generations, sample.alpha) == [(p, sample.a1_client, 1) for p in range(PARTITIONS)]
    second = owners(sample.during_second_generation, sample.alpha)
    assert [p for p, _, _ in second] == list(range(PARTITIONS)) and {g for _, _, g in second} == {2}
    assert sorted(c for _, c, _ in second) == sorted([sample.a1_client] * 2 + [sample.a2_client] * 2)
    assert owners(sample.after_a2_left, sample.alpha) == [(p, sample.a1_client, 3) for p in range(PARTITIONS)]
    assert owners(sample.after_alpha_empty + dt.timedelta(seconds=2), sample.alpha) == []
    current = rows(spark, f"SELECT * FROM dashboards.partition_ownership WHERE `group` = '{sample.beta}' "
                          "AND is_current")
    assert sorted((r["partition"], r["client_id"]) for r in current) == [
        (p, sample.b1_client) for p in range(PARTITIONS)]
    assert all(r["owned_seconds"] > 0 for r in current)


@pytest.mark.broker
@pytest.mark.spark
def test_delta_time_travel_shows_what_the_tables_held_after_the_first_refresh(spark, sample, catalog) -> None:  # type: ignore[no-untyped-def]
    version = sample.first_versions["gold.group_membership"]

    def members(clause: str) -> int:
        return spark.sql(f"SELECT count(*) AS n FROM gold.group_membership {clause} "
                         f"WHERE `group` = '{sample.beta}'").collect()[0]["n"]

    at = sample.after_first_refresh.isoformat(sep=" ")
    assert (members(f"VERSION AS OF {version}"), members(f"TIMESTAMP AS OF '{at}'"), members("")) == (0, 0, 1)
    assigned = spark.sql(
        f"SELECT count(*) AS n FROM gold.partition_assignments "
        f"VERSION AS OF {sample.first_versions['gold.partition_assignments']} "
        f"WHERE `group` = '{sample.alpha}' AND valid_to IS NULL").collect()[0]["n"]
    assert assigned == 0  # alpha was already Empty at the first refresh
    history = rows(spark, "DESCRIBE HISTORY gold.group_membership")
    assert max(r["version"] for r in history) > version


@pytest.mark.broker
@pytest.mark.spark
def test_lag_over_time_is_the_groups_total_lag_at_each_snapshot(spark, sample, catalog) -> None:  # type: ignore[no-untyped-def]
    lag = rows(spark, "SELECT `group`, total_lag, partitions FROM dashboards.lag_over_time "
                      f"WHERE `group` IN ('{sample.alpha}', '{sample.beta}', '{sample.gamma}') "
                      "ORDER BY `group`, snapshot_time")
    by_group: dict[str, list] = {}
    for r in lag:
        by_group.setdefault(r["group"], []).append((r["total_lag"], r["partitions"]))
    # alpha committed 50 per partition before s1 (ends 50); 25 more each by s2 and s3; beta and gamma
    # committed everything between s2 and s3.
    assert by_group == {sample.alpha: [(0, 4), (100, 4), (100, 4)], sample.beta: [(0, 4)], sample.gamma: [(0, 4)]}


@pytest.mark.broker
@pytest.mark.spark
def test_consumer_status_now_gives_state_members_commits_and_lag_per_group(spark, sample, catalog) -> None:  # type: ignore[no-untyped-def]
    asked = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    status = {r["group"]: r for r in rows(spark, "SELECT * FROM dashboards.consumer_status_now")}
    answered = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    snapshots = rows(spark, "SELECT max(snapshot_time) AS newest FROM silver.partition_end_offsets")
    alpha, beta, gamma = status[sample.alpha], status[sample.beta], status[sample.gamma]
    assert (alpha["state"], alpha["generation"], alpha["members"], alpha["committed_partitions"],
            alpha["total_lag"]) == ("Empty", 4, 0, 4, 100)
    assert (beta["state"], beta["generation"], beta["members"], beta["committed_partitions"],
            beta["total_lag"]) == ("Stable", 1, 1, 4, 0)
    assert (gamma["committed_partitions"], gamma["total_lag"]) == (4, 0)
    assert {alpha["lag_snapshot_time"], beta["lag_snapshot_time"]} == {snapshots[0]["newest"]}
    assert beta["burrow_status"] == "OK"
    # Measured against the time of the query, whenever the sample warehouse was built.
    since = beta["seconds_since_last_commit"]
    assert (asked - beta["last_commit_at"]).total_seconds() - 1 <= since <= (
        answered - beta["last_commit_at"]).total_seconds() + 1
    assert alpha["last_commit_at"] < sample.before_a2_joined < beta["last_commit_at"]


@pytest.mark.broker
@pytest.mark.spark
def test_stale_groups_lists_the_empty_group_and_not_the_one_with_a_member(spark, sample, catalog) -> None:  # type: ignore[no-untyped-def]
    stale = {r["group"]: r["reasons"] for r in rows(spark, "SELECT * FROM dashboards.stale_groups")}
    assert sample.alpha in stale and "empty" in stale[sample.alpha]
    assert sample.beta not in stale


@pytest.mark.broker
@pytest.mark.spark
def test_membership_churn_counts_each_member_joining_and_leaving(spark, sample, catalog) -> None:  # type: ignore[no-untyped-def]
    churn = rows(spark, "SELECT `group`, sum(members_joined) AS joined, sum(members_left) AS departed, "
                        "sum(churn) AS churn FROM dashboards.membership_churn "
                        f"WHERE `group` IN ('{sample.alpha}', '{sample.beta}') GROUP BY `group`")
    assert {r["group"]: (r["joined"], r["departed"], r["churn"]) for r in churn} == {
        sample.alpha: (2, 2, 4), sample.beta: (1, 0, 1)}


@pytest.mark.broker
@pytest.mark.spark
def test_every_documented_example_query_runs(spark, sample, catalog) -> None:  # type: ignore[no-untyped-def]
    for view in load_views():
        for example in view.examples:
            spark.sql(example).limit(5).collect()


def test_view_files_live_beside_the_module() -> None:
    assert VIEWS_DIR == Path(__file__).resolve().parents[2] / "pipelines" / "sql_views"


@pytest.mark.spark
def test_ownership_names_a_kip848_topic_id_from_the_snapshots_or_the_commits_at_read_and_keeps_a_recorded_name(  # type: ignore[no-untyped-def]
        spark, warehouse_settings) -> None:
    from pipelines.delta_tables import ensure_table, table_path
    from pipelines.gold.committed_offsets import TABLE as COMMITTED_OFFSETS
    from pipelines.gold.partition_assignments import TABLE as ASSIGNMENTS
    from schemas.topic_names import TABLE as TOPIC_NAMES
    from tests.quality.rows import at, frame, source

    settings = warehouse_settings

    def write(spec, rows: list[dict]) -> None:  # type: ignore[no-untyped-def]
        ensure_table(spark, settings, spec)
        frame(spark, spec, rows).write.format("delta").mode("append").save(table_path(settings, spec))

    def owned(partition: int, topic_id: str, topic: str | None = None) -> dict:
        return {"cluster_name": "test", "group": "g", "topic": topic, "partition": partition, "member_id": "m",
                "generation": 1, "valid_from": at(0), "group_type": "consumer", "assignment_kind": "current",
                "topic_id": topic_id}

    write(ASSIGNMENTS, [owned(0, "id-a"), owned(1, "id-b"), owned(2, "id-c", "recorded"), owned(3, "id-d")])
    write(TOPIC_NAMES, [{"cluster_name": "test", "topic_id": "id-a", "topic": "orders", "first_snapshot_id": 1},
                        {"cluster_name": "other", "topic_id": "id-d", "topic": "elsewhere", "first_snapshot_id": 1}])
    write(COMMITTED_OFFSETS, [{**source(1), "group": "h", "topic": "payments", "partition": 0, "offset": 5,
                               "topic_id": "id-b"}])
    register_catalog(spark, settings)
    named = {(r["topic_id"], r["topic"]) for r in rows(spark, "SELECT * FROM dashboards.partition_ownership")}
    # id-d is named on another cluster only: ids are per cluster
    assert named == {("id-a", "orders"), ("id-b", "payments"), ("id-c", "recorded"), ("id-d", None)}

