"""offsetlake sql: Spark SQL against the sample warehouse (tests/dashboard/sample_warehouse.py).

Alpha's lag was 0 at s1 and 100 at s2 and s3 (see the sample's docstring). In-process runs use the
session's SparkSession; one real command run checks that a bad query is one line, not a JVM stack, and
another that ``--engine delta-rs`` answers with no Java to start.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark_conf import as_env as spark_conf_env

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.broker, pytest.mark.spark]


@pytest.fixture(scope="module")
def sample(sample_traffic_warehouse):  # type: ignore[no-untyped-def]
    return sample_traffic_warehouse


@pytest.fixture
def offsetlake_sql(spark, sample, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """Run ``offsetlake sql ARGS`` in-process against the sample warehouse: (exit code, stdout, stderr)."""
    import pipelines.spark_session
    from cli.main import main

    monkeypatch.setenv("OFFSETLAKE_WAREHOUSE", str(sample.settings.warehouse_path))
    monkeypatch.setattr(pipelines.spark_session, "build_spark_session", lambda settings, **_: spark)

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["sql", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def alpha_lag(sample) -> str:  # type: ignore[no-untyped-def]
    return (f"SELECT `group`, total_lag FROM dashboards.lag_over_time WHERE `group` = '{sample.alpha}' "
            "ORDER BY snapshot_time")


def test_sql_prints_a_views_answer_as_csv_json_or_an_aligned_table(offsetlake_sql, sample) -> None:  # type: ignore[no-untyped-def]
    code, out, err = offsetlake_sql("--engine", "spark", "--format", "csv", alpha_lag(sample))
    assert code == 0 and out.splitlines() == ["group,total_lag", *[f"{sample.alpha},{n}" for n in (0, 100, 100)]]
    assert re.fullmatch(r"3 rows in \d+\.\d\d s", err.strip()), err  # and the query's own seconds
    code, out, _ = offsetlake_sql("--engine", "spark", "--format", "json", alpha_lag(sample))
    assert [json.loads(line) for line in out.splitlines()] == [
        {"group": sample.alpha, "total_lag": n} for n in (0, 100, 100)]
    code, out, _ = offsetlake_sql("--engine", "spark", alpha_lag(sample))
    lines = out.splitlines()
    assert lines[0].split() == ["group", "total_lag"] and set(lines[1].replace(" ", "")) == {"-"}
    assert lines[2:] == [f"{sample.alpha}  {n:>9}" for n in (0, 100, 100)]  # numbers right-aligned


def test_sql_limits_the_rows_printed_and_says_there_were_more(offsetlake_sql, sample) -> None:  # type: ignore[no-untyped-def]
    code, out, err = offsetlake_sql("--format", "csv", "--limit", "2", alpha_lag(sample))
    assert code == 0 and len(out.splitlines()) == 3
    assert re.fullmatch(r"2 rows in \d+\.\d\d s \(more rows: raise --limit, or 0 for all\)", err.strip()), err


def test_sql_time_travels_with_version_as_of(offsetlake_sql, sample) -> None:  # type: ignore[no-untyped-def]
    version = sample.first_versions["gold.group_membership"]
    query = (f"SELECT count(*) AS members FROM gold.group_membership VERSION AS OF {version} "
             f"WHERE `group` = '{sample.beta}'")
    code, out, err = offsetlake_sql("--format", "csv", query)
    assert (code, out) == (0, "members\n0\n")
    # the default engine (auto) handed it to Spark, and says why
    assert "sql: answered by Spark: the embedded engine could not (time travel (VERSION AS OF / TIMESTAMP AS OF) " \
           "needs --engine spark)" in err.splitlines()


def test_sql_list_names_every_table_and_view_with_its_description(offsetlake_sql) -> None:  # type: ignore[no-untyped-def]
    from pipelines.sql_views import load_views
    from schemas.catalog import TABLES

    code, out, _ = offsetlake_sql("--list")
    assert code == 0
    for name in TABLES:
        assert any(line.split()[0] == name for line in out.splitlines() if line.strip()), name
    assert "gold.rebalance_events" in out and TABLES["gold.rebalance_events"].description in out
    for view in load_views():
        assert f"{view.name:<34} {view.question}" in out


def test_an_unknown_table_is_one_line_naming_it(offsetlake_sql) -> None:  # type: ignore[no-untyped-def]
    code, out, err = offsetlake_sql("SELECT * FROM gold.no_such_table")
    assert code == 1 and out == ""
    assert err.splitlines() == [err.strip()]
    assert err.startswith("offsetlake: sql: [TABLE_OR_VIEW_NOT_FOUND] The table or view `gold`.`no_such_table`")


def test_sql_without_a_query_asks_for_one(offsetlake_sql) -> None:  # type: ignore[no-untyped-def]
    assert offsetlake_sql()[0] == 1
    assert offsetlake_sql("--limit", "-1", "SELECT 1") == (2, "", (
        "offsetlake sql: error: argument --limit: '-1' is not a whole number >= 0 (0: all rows); "
        "see 'offsetlake sql --help'\n"))


def test_a_syntax_error_is_one_line_pointing_at_it(offsetlake_sql) -> None:  # type: ignore[no-untyped-def]
    code, out, err = offsetlake_sql("SELEC 1")
    assert code == 1 and out == "" and err.splitlines() == [err.strip()]
    assert err.startswith("offsetlake: sql: [PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'")


@pytest.mark.jvm_process
def test_the_command_reports_an_unknown_table_in_one_line_without_a_jvm_stack(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OFFSETLAKE_WAREHOUSE": str(tmp_path / "warehouse"),
           "OFFSETLAKE_SPARK__MASTER": "local[1]", "OFFSETLAKE_SPARK__SHUFFLE_PARTITIONS": "1",
           "OFFSETLAKE_SPARK__UI_ENABLED": "false", "OFFSETLAKE_SPARK__LOG_LEVEL": "ERROR", **spark_conf_env()}
    result = subprocess.run([sys.executable, "-m", "cli.main", "sql", "SELECT * FROM gold.no_such_table"],
                            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert result.returncode == 1 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("offsetlake: sql: [TABLE_OR_VIEW_NOT_FOUND] The table or view `gold`.`no_such_table`")
    # Spark's own start-up lines may precede it, but no stack: neither Python's nor the JVM's.
    assert "Traceback" not in result.stderr and "at org.apache" not in result.stderr, result.stderr
    assert '"level": "ERROR"' not in result.stderr, result.stderr


# -- --engine delta-rs: the same answers without a JVM ----------------------------------------------------

def test_the_delta_rs_engine_prints_the_known_answer_as_spark_prints_it_in_every_format(offsetlake_sql, sample) -> None:  # type: ignore[no-untyped-def]
    code, out, err = offsetlake_sql("--engine", "delta-rs", "--format", "csv", alpha_lag(sample))
    assert code == 0 and out.splitlines() == ["group,total_lag", *[f"{sample.alpha},{n}" for n in (0, 100, 100)]]
    assert re.fullmatch(r"3 rows in \d+\.\d\d s", err.strip()), err  # and the query's own seconds
    timeline = (f"SELECT * FROM dashboards.rebalance_timeline WHERE `group` = '{sample.alpha}' ORDER BY stable_at")
    for fmt in ("table", "csv", "json"):
        spark_out = offsetlake_sql("--engine", "spark", "--format", fmt, timeline)[1]
        assert offsetlake_sql("--engine", "delta-rs", "--format", fmt, timeline)[1] == spark_out, fmt
        assert len(spark_out.splitlines()) >= 4  # alpha's four rebalances (and a header)


def test_the_delta_rs_engine_limits_rows_and_lists_tables_and_views(offsetlake_sql, sample) -> None:  # type: ignore[no-untyped-def]
    from pipelines.sql_views import load_views

    code, out, err = offsetlake_sql("--engine", "delta-rs", "--format", "csv", "--limit", "2", alpha_lag(sample))
    assert code == 0 and len(out.splitlines()) == 3
    assert re.fullmatch(r"2 rows in \d+\.\d\d s \(more rows: raise --limit, or 0 for all\)", err.strip()), err
    code, out, _ = offsetlake_sql("--engine", "delta-rs", "--list")
    assert code == 0 and "gold.rebalance_events" in out and "[unavailable" not in out
    for view in load_views():
        assert f"{view.name:<34} {view.question}" in out


def test_a_bad_query_with_the_delta_rs_engine_is_one_line(offsetlake_sql) -> None:  # type: ignore[no-untyped-def]
    for query, start in (
            ("SELECT * FROM gold.no_such_table", "offsetlake: sql: Error during planning: table "
                                                 "'datafusion.gold.no_such_table' not found"),
            ("SELEC 1", "offsetlake: sql: Invalid expression / Unexpected token at line 1"),
            ("DESCRIBE HISTORY gold.group_membership", "offsetlake: sql: DESCRIBE (and DESCRIBE HISTORY) needs")):
        code, out, err = offsetlake_sql("--engine", "delta-rs", query)
        assert code == 1 and out == "" and err.splitlines() == [err.strip()], query
        assert err.startswith(start), err


def test_the_delta_rs_engine_and_the_default_answer_with_no_java_to_start(sample, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """JAVA_HOME points nowhere and PATH holds no java: a JVM could not start, and the answer still comes."""
    env = {"PYTHONPATH": str(ROOT), "OFFSETLAKE_WAREHOUSE": str(sample.settings.warehouse_path),
           "JAVA_HOME": str(tmp_path / "no-java"), "PATH": str(tmp_path), "HOME": str(tmp_path)}
    for engine in (["--engine", "delta-rs"], []):
        result = subprocess.run([sys.executable, "-m", "cli.main", "sql", *engine, "--format", "csv",
                                 alpha_lag(sample)], capture_output=True, text=True, cwd=tmp_path, env=env,
                                timeout=120)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == ["group,total_lag", *[f"{sample.alpha},{n}" for n in (0, 100, 100)]]


def readme_queries() -> list[str]:
    """The ``offsetlake sql "..."`` examples of README.md's code blocks, as the shell passes them (``\\``` -> `)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```\n(.*?)^```", readme, flags=re.S | re.M)
    return [query.replace("\\`", "`") for block in blocks
            for query in re.findall(r'^offsetlake sql "(.*?)"\s*$', block, flags=re.S | re.M)]


def selected_columns(query: str) -> list[str]:
    [listed] = re.findall(r"SELECT (.*?) FROM", query, flags=re.S)
    return [name.strip().strip("`") for name in listed.split(",")]


@pytest.mark.parametrize("engine", ["delta-rs", "spark"])
def test_the_readmes_sql_examples_run_and_answer_with_the_columns_they_select(offsetlake_sql, engine) -> None:  # type: ignore[no-untyped-def]
    queries = readme_queries()
    assert len(queries) >= 3  # why did it rebalance, who owned the partition, how far behind
    for query in queries:
        code, out, err = offsetlake_sql("--engine", engine, "--format", "csv", query)
        assert code == 0, (query, err)
        assert out.splitlines()[0].split(",") == selected_columns(query), query
