"""pipelines/embedded_sql.py: the tables and dashboard views answered by delta-rs's DataFusion, without a JVM.

The rewrites are checked by what DataFusion answers (known values, no warehouse needed). The views are
checked against Spark: on the sample warehouse (tests/dashboard/sample_warehouse.py) every view and every
view's documented example returns the same rows from both engines, and at least one row, so the
comparison says something. The examples name a group 'billing' and a moment '2026-01-01 12:00:00' the
sample does not have; the comparison asks them about alpha and a moment of its first generation instead.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import time
from pathlib import Path
from typing import Any

import pytest

from conf.settings import Settings
from pipelines.embedded_sql import EmbeddedSqlError, open_catalog, query_view, to_datafusion
from pipelines.sql_views import load_views, register_catalog
from tests.dashboard.sample_warehouse import PARTITIONS

#: Columns measured against the time of the query: each engine asks its own clock.
CLOCK_COLUMNS = frozenset({"seconds_since_last_commit", "owned_seconds"})
#: Examples only Spark answers (Delta time travel and history live in Delta's JVM side).
SPARK_ONLY = ("VERSION AS OF", "DESCRIBE HISTORY")


# -- the rewrites, answered by DataFusion over no table ----------------------------------------------------

@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """A DataFusion session over an empty warehouse: no tables, no views."""
    return open_catalog(Settings(warehouse=str(tmp_path_factory.mktemp("empty") / "warehouse")))


def answer(catalog, spark_sql: str) -> list[tuple]:  # type: ignore[no-untyped-def]
    return catalog.query(spark_sql).rows


def test_spark_functions_without_a_datafusion_namesake_keep_their_meaning(bare) -> None:  # type: ignore[no-untyped-def]
    values = "(VALUES ('a', 1, TIMESTAMP '2026-01-01 00:00:00'), ('b', 3, NULL), ('c', 2, NULL)) AS t(k, n, at)"
    assert answer(bare, f"SELECT count_if(n > 1), count_if(n > 9) FROM {values}") == [(2, 0)]
    # max_by/min_by ignore the rows whose ordering value is null.
    assert answer(bare, f"SELECT max_by(k, n), min_by(k, n), max_by(k, at) FROM {values}") == [("b", "a", "a")]
    assert answer(bare, "SELECT size(array(1, 2, 3)), size(array_compact(array(CAST(NULL AS INT))))") == [(3, 0)]
    assert answer(bare, "SELECT NULL <=> NULL, 1 <=> NULL, `n` FROM (SELECT 5 AS n)") == [(True, False, 5)]
    assert answer(bare, "SELECT unix_micros(TIMESTAMP '1970-01-01 00:00:01.5')") == [(1_500_000,)]
    # Whole seconds, truncated (90.9 s -> 90, and -90.9 s -> -90), as Spark's timestampdiff.
    assert answer(bare, "SELECT timestampdiff(SECOND, TIMESTAMP '2026-01-01 00:00:00', "
                        "TIMESTAMP '2026-01-01 00:01:30.9'), timestampdiff(SECOND, "
                        "TIMESTAMP '2026-01-01 00:01:30.9', TIMESTAMP '2026-01-01 00:00:00'), "
                        "timestampdiff(HOUR, TIMESTAMP '2026-01-01 00:00:00', TIMESTAMP '2026-01-02 01:59:00')"
                  ) == [(90, -90, 25)]


def test_timestamps_come_back_naive_in_utc_and_nested_values_as_dicts_and_lists(bare) -> None:  # type: ignore[no-untyped-def]
    rows = answer(bare, "SELECT TIMESTAMP '2026-01-01 12:00:00.25' AS at, "
                        "named_struct('a', 1, 'at', TIMESTAMP '2026-01-01 00:00:00') AS s, array('x', 'y') AS l, "
                        "CAST(1.50 AS DECIMAL(10, 2)) AS d, date_trunc('HOUR', TIMESTAMP '2026-01-01 12:34:56') AS h")
    assert rows == [(dt.datetime(2026, 1, 1, 12, 0, 0, 250000), {"a": 1, "at": dt.datetime(2026, 1, 1)}, ["x", "y"],
                     decimal.Decimal("1.50"), dt.datetime(2026, 1, 1, 12))]
    now = answer(bare, "SELECT current_timestamp()")[0][0]
    assert now.tzinfo is None and abs(now - dt.datetime.now(dt.UTC).replace(tzinfo=None)) < dt.timedelta(seconds=5)


@pytest.mark.parametrize(("query", "says"), [
    ("SELECT mode(x) FROM (SELECT 1 AS x)", "mode() has no DataFusion equivalent; use --engine spark"),
    ("SELECT filter(array(1, NULL), x -> x IS NOT NULL)", "a lambda (filter(array, x -> ...))"),
    ("SELECT * FROM gold.partition_assignments VERSION AS OF 3", "time travel (VERSION AS OF / TIMESTAMP AS OF)"),
    ("DESCRIBE HISTORY gold.partition_assignments", "DESCRIBE (and DESCRIBE HISTORY) needs Delta's JVM side"),
    ("INSERT INTO gold.rebalance_events SELECT * FROM gold.rebalance_events", "only answers queries"),
    ("SELECT 1; SELECT 2", "expected one SQL statement, got 2"),
    ("SELEC 1", "Invalid expression / Unexpected token at line 1"),
])
def test_what_the_embedded_engine_cannot_do_is_refused_in_one_line(bare, query: str, says: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(EmbeddedSqlError) as refused:
        bare.query(query)
    assert says in str(refused.value) and "\n" not in str(refused.value)


def test_every_view_file_has_a_datafusion_form() -> None:
    for view in load_views():
        assert to_datafusion(view.sql).strip(), view.name


def test_a_table_delta_rs_cannot_read_is_reported_in_one_line_and_its_views_are_skipped(tmp_path: Path) -> None:
    # A real Delta log whose protocol names a reader feature no reader implements.
    log = tmp_path / "warehouse" / "gold" / "rebalance_events" / "_delta_log"
    log.mkdir(parents=True)
    schema = json.dumps({"type": "struct", "fields": [{"name": "x", "type": "long", "nullable": True, "metadata": {}}]})
    (log / "00000000000000000000.json").write_text("\n".join(json.dumps(action) for action in (
        {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["notAFeature"],
                      "writerFeatures": ["notAFeature"]}},
        {"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}}, "schemaString": schema,
                      "partitionColumns": [], "configuration": {}, "createdTime": 0}},
    )) + "\n")
    catalog = open_catalog(Settings(warehouse=str(tmp_path / "warehouse")))
    assert list(catalog.unreadable_tables) == ["gold.rebalance_events"]
    reason = catalog.unreadable_tables["gold.rebalance_events"]
    assert "notAFeature" in reason and "\n" not in reason
    assert "gold.rebalance_events" not in catalog.report.tables + catalog.report.missing_tables
    assert catalog.report.skipped_views["dashboards.rebalance_timeline"] == (
        "needs gold.rebalance_events (delta-rs cannot read it)")
    with pytest.raises(EmbeddedSqlError, match="not found \\(delta-rs cannot read it: .*notAFeature"):
        catalog.query("SELECT * FROM gold.rebalance_events")


# -- both engines on the sample warehouse ------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample(sample_traffic_warehouse):  # type: ignore[no-untyped-def]
    return sample_traffic_warehouse


@pytest.fixture(scope="module")
def embedded(sample):  # type: ignore[no-untyped-def]
    return open_catalog(sample.settings)


def _normal(value: Any) -> Any:
    """One value as plain, comparable JSON-like data (Spark Rows and dicts alike; floats to 9 places)."""
    if hasattr(value, "asDict"):
        value = value.asDict(recursive=True)
    if isinstance(value, dict):
        return {str(k): _normal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    if isinstance(value, float | decimal.Decimal) and not isinstance(value, bool):
        return round(float(value), 9)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return value


def _split(columns: list[str], rows: list[tuple]) -> list[tuple[str, list]]:
    """Each row as (its clock-free columns as JSON, its clock columns), sorted."""
    clock = [i for i, c in enumerate(columns) if c in CLOCK_COLUMNS]
    split = [(json.dumps([_normal(v) for i, v in enumerate(row) if i not in clock], sort_keys=True),
              [row[i] for i in clock]) for row in rows]
    return sorted(split, key=lambda pair: (pair[0], [(v is None, v or 0) for v in pair[1]]))


def assert_same_answer(spark, embedded, query: str) -> int:  # type: ignore[no-untyped-def]
    """Both engines' rows for ``query`` agree (clock columns within the seconds between the two answers)."""
    started = time.monotonic()
    frame = spark.sql(query)
    spark_columns, spark_rows = list(frame.columns), [tuple(row) for row in frame.collect()]
    result = embedded.query(query)
    elapsed = time.monotonic() - started
    assert result.columns == spark_columns, query
    spark_split, embedded_split = _split(spark_columns, spark_rows), _split(result.columns, result.rows)
    assert [s for s, _ in embedded_split] == [s for s, _ in spark_split], query
    for (_, ours), (_, theirs) in zip(embedded_split, spark_split, strict=True):
        for a, b in zip(ours, theirs, strict=True):
            assert (a is None) == (b is None) and (a is None or abs(a - b) <= elapsed + 1), (query, a, b)
    return len(spark_rows)


def _asked_of_the_sample(example: str, sample) -> str:  # type: ignore[no-untyped-def]
    return (example.replace("'billing'", f"'{sample.alpha}'")
            .replace("'2026-01-01 12:00:00'", f"'{sample.between_generations.isoformat(sep=' ')}'"))


@pytest.mark.broker
@pytest.mark.spark
def test_every_view_registers_in_both_engines_over_the_same_tables(spark, sample, embedded) -> None:  # type: ignore[no-untyped-def]
    spark_catalog = register_catalog(spark, sample.settings)
    assert embedded.report.tables == spark_catalog.tables and embedded.unreadable_tables == {}
    assert embedded.report.missing_tables == spark_catalog.missing_tables
    assert embedded.report.views == spark_catalog.views and len(embedded.report.views) == len(load_views())
    assert embedded.report.skipped_views == {} == spark_catalog.skipped_views


@pytest.mark.broker
@pytest.mark.spark
def test_every_view_returns_the_same_rows_from_both_engines(spark, sample, embedded) -> None:  # type: ignore[no-untyped-def]
    register_catalog(spark, sample.settings)
    for view in load_views():
        assert assert_same_answer(spark, embedded, f"SELECT * FROM {view.name}") > 0, view.name


@pytest.mark.broker
@pytest.mark.spark
def test_every_documented_example_returns_the_same_rows_from_both_engines(spark, sample, embedded) -> None:  # type: ignore[no-untyped-def]
    register_catalog(spark, sample.settings)
    compared = 0
    for view in load_views():
        for example in view.examples:
            query = _asked_of_the_sample(example, sample)
            if any(marker in example for marker in SPARK_ONLY):
                with pytest.raises(EmbeddedSqlError, match="spark|JVM"):
                    embedded.query(query)
                continue
            assert assert_same_answer(spark, embedded, query) > 0, query
            compared += 1
    assert compared >= len(load_views())


@pytest.mark.broker
@pytest.mark.spark
def test_query_view_answers_a_filtered_view_with_bound_parameters(sample, embedded) -> None:  # type: ignore[no-untyped-def]
    timeline = query_view(sample.settings, "rebalance_timeline", where="`group` = :group",
                          params={"group": sample.alpha}, order_by="stable_at", catalog=embedded)
    rows = [dict(zip(timeline.columns, row, strict=True)) for row in timeline.rows]
    # alpha: a1 joined (0 -> 1), a2 joined (1 -> 2), a2 left (2 -> 3), a1 left (3 -> 4, Empty).
    assert [(r["from_generation"], r["to_generation"], r["members_after"]) for r in rows] == [
        (0, 1, 1), (1, 2, 2), (2, 3, 1), (3, 4, 0)]
    owners = query_view(sample.settings, "dashboards.partition_ownership",
                        where="`group` = :group AND valid_from <= :at AND (valid_to IS NULL OR valid_to > :at)",
                        params={"group": sample.alpha, "at": sample.between_generations.replace(tzinfo=dt.UTC)},
                        order_by="`partition`", catalog=embedded)
    assert [(r[owners.columns.index("partition")], r[owners.columns.index("client_id")]) for r in owners.rows] == [
        (p, sample.a1_client) for p in range(PARTITIONS)]


@pytest.mark.broker
@pytest.mark.spark
def test_query_view_parameters_are_values_never_sql(sample, embedded) -> None:  # type: ignore[no-untyped-def]
    sneaky = query_view(sample.settings, "rebalance_timeline", where="`group` = :group",
                        params={"group": f"{sample.alpha}' OR '1' = '1"}, catalog=embedded)
    assert sneaky.rows == []
    with pytest.raises(EmbeddedSqlError, match="no value for parameter\\(s\\) :group"):
        query_view(sample.settings, "rebalance_timeline", where="`group` = :group", catalog=embedded)
    with pytest.raises(EmbeddedSqlError, match="no view dashboards.nope"):
        query_view(sample.settings, "nope", catalog=embedded)
