"""data_quality, run with dag.test(): ``offsetlake check`` passes on a correct warehouse, fails the run on a bad one.

The correct warehouse is the one offsets_ingest built (conftest ``ingested``). The bad one is a
copy of it where gold.committed_offsets holds one (group, topic, partition) twice -- what the
critical expectation ``one_row_per_group_topic_partition`` (quality/committed_offsets.py) forbids.
A failed critical expectation is a verdict: the task fails at once, without a retry, and the
failure callback reports it.

Both runs check gold.committed_offsets only (the DAG's ``tables`` param): what is tested here is
the DAG around the command -- the param reaching ``offsetlake check``, the verdict, the retries, the
report. That every suite passes on a warehouse built from real traffic is tests/quality's subject
(test_checkpoint.py), where the check runs in the session's JVM instead of a new one.
"""

from __future__ import annotations

import logging
import shutil

import pytest

from pipelines.delta_tables import read_table, table_path
from pipelines.gold import committed_offsets
from quality.checkpoint import SUITES, select_suites

pytestmark = [pytest.mark.broker, pytest.mark.spark, pytest.mark.long]


CHECKED = ["gold.committed_offsets"]


def test_the_check_of_the_chosen_table_passes_on_the_ingested_warehouse(ingested, dag_bag, caplog) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO, logger="offsetlake_commands")
    run = dag_bag.dags["data_quality"].test(run_conf={**ingested["run_conf"], "tables": CHECKED})
    assert run.state == "success"
    assert [(ti.task_id, ti.state) for ti in run.get_task_instances()] == [("check", "success")]
    lines = [r.getMessage() for r in caplog.records if r.name == "offsetlake_commands"]
    [command] = [line for line in lines if line.startswith("running ")]
    assert " check --json " in command and command.endswith("report.json --table gold.committed_offsets")
    # Only the rules checking gold.committed_offsets ran (its suite's and the cross-table ones on it),
    # not every suite, and they passed.
    results = [line.split() for line in lines if line.split()[3:4] in (["PASS"], ["FAIL"], ["ERROR"], ["SKIP"])]
    assert {cells[0] for cells in results} == {suite.name for suite in select_suites(CHECKED)}
    assert len(results) < sum(len(suite.rules) for suite in SUITES)
    assert any(line.startswith("check: ") and "0 critical failing" in line for line in lines)


def test_a_duplicated_committed_offset_fails_the_run_without_retries(spark, ingested, dag_bag, run_conf_for,
                                                                     tmp_path, caplog) -> None:  # type: ignore[no-untyped-def]

    settings = ingested["settings"].model_copy(update={"warehouse": str(tmp_path / "warehouse")})
    shutil.copytree(ingested["settings"].warehouse_path, settings.warehouse_path)
    duplicate = read_table(spark, settings, committed_offsets.TABLE).limit(1)
    assert duplicate.count() == 1
    duplicate.write.format("delta").mode("append").save(str(table_path(settings, committed_offsets.TABLE)))
    config = run_conf_for(settings.warehouse_path, tmp_path / "offsetlake.toml", settings=settings)
    run_conf = {**config, "tables": CHECKED}

    run = dag_bag.dags["data_quality"].test(run_conf=run_conf)

    assert run.state == "failed"
    [check] = run.get_task_instances()
    assert (check.task_id, check.state, check.try_number) == ("check", "failed", 1)  # retries=1, not used
    # The failure callback's report, one ERROR line.
    [report] = [r.getMessage() for r in caplog.records
                if r.levelno == logging.ERROR and r.getMessage().startswith("offsetlake DAG data_quality")]
    assert report.startswith("offsetlake DAG data_quality: task check failed (run ")
    assert (", not retried): offsetlake check exited 1: critical expectations failed: "
            "committed_offsets.one_row_per_group_topic_partition (") in report


def _report(tmp_path, *results):  # type: ignore[no-untyped-def]
    """A report file as ``offsetlake check --json`` writes it (quality/checkpoint.py CheckReport.as_json)."""
    import datetime as dt
    import json

    from quality.checkpoint import CheckReport, ExpectationResult

    report = CheckReport("run-1", dt.datetime(2026, 11, 26, 12, 0), tuple(
        ExpectationResult(suite, table, expectation, severity, status, observed_value=observed)
        for suite, table, expectation, severity, status, observed in results), None)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report.as_json()), encoding="utf-8")
    return str(path)


CHECK_OUTPUT = ["check: 4 expectations (1 error, 2 failed, 1 passed); 2 critical failing; results in ..."]


def test_the_failed_critical_expectations_are_read_from_the_json_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from airflow.sdk.exceptions import AirflowFailException
    from data_quality import check_verdict, read_report

    path = _report(tmp_path,
                   ("committed_offsets", "gold.committed_offsets", "one_row_per_group_topic_partition", "critical",
                    "failed", {"unexpected_count": 2}),
                   ("committed_offsets", "gold.committed_offsets", "committed_offsets_are_non_negative", "warning",
                    "failed", 1),
                   ("consumer_lag", "gold.consumer_lag", "lag_is_non_negative", "critical", "error", None),
                   ("quarantine", "silver.quarantine", "quarantine_rate_below_threshold", "critical", "passed", 0.0))
    with pytest.raises(AirflowFailException) as failed:
        check_verdict(1, CHECK_OUTPUT, read_report(path))
    assert str(failed.value) == (
        "offsetlake check exited 1: critical expectations failed: committed_offsets.one_row_per_group_topic_partition, "
        "consumer_lag.lag_is_non_negative (check: 4 expectations (1 error, 2 failed, 1 passed); 2 critical failing; "
        "results in ...)")


def test_a_missing_or_unreadable_report_is_no_report(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from data_quality import read_report

    assert read_report(str(tmp_path / "absent.json")) is None
    (tmp_path / "cut.json").write_text('{"critical_failing": [', encoding="utf-8")
    assert read_report(str(tmp_path / "cut.json")) is None


def test_the_chosen_tables_become_table_options_and_none_checks_every_suite() -> None:
    from data_quality import check_arguments

    assert check_arguments(["gold.consumer_lag", "cross_table"]) == ["--table", "gold.consumer_lag",
                                                                     "--table", "cross_table"]
    assert check_arguments([]) == []


def test_only_a_verdict_or_bad_settings_fail_without_retries() -> None:
    from airflow.sdk.exceptions import AirflowFailException
    from data_quality import check_verdict
    from offsetlake_commands import OffsetlakeCommandFailed

    failing = {"critical_failing": ["committed_offsets.one_row_per_group_topic_partition"]}
    check_verdict(0, ["check: 4 expectations (4 passed); 0 critical failing"], {"critical_failing": []})
    with pytest.raises(AirflowFailException, match="critical expectations failed: committed_offsets.one_row"):
        check_verdict(1, CHECK_OUTPUT, failing)
    with pytest.raises(AirflowFailException, match="exited 2: offsetlake: config error"):
        check_verdict(2, ["offsetlake: config error: setting quality.x = 1 is invalid"], None)
    # Exit 1 with no report: the check could not run (a crash); a retry may help.
    with pytest.raises(OffsetlakeCommandFailed, match="exited 1: offsetlake: data-quality check failed to run"):
        check_verdict(1, ["offsetlake: data-quality check failed to run: Py4JError"], None)
