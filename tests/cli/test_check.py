"""``offsetlake check``: the command Airflow runs, on small warehouses written to disk."""

from __future__ import annotations

import json
import os

import pytest

import pipelines.spark_session
from cli.main import main
from pipelines.delta_tables import ensure_table, table_path
from pipelines.gold import committed_offsets, partition_assignments
from tests.quality.rows import at, frame


class _KeepSession:
    """The session fixture's SparkSession, whose ``stop()`` (called by the command) does nothing."""

    def __init__(self, spark) -> None:  # type: ignore[no-untyped-def]
        self._spark = spark

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._spark, name)

    def stop(self) -> None:
        pass


@pytest.fixture
def config(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A TOML file pointing at a fresh warehouse, as the scheduler passes it with --config."""
    for name in [n for n in os.environ if n.startswith("OFFSETLAKE_")]:
        monkeypatch.delenv(name)
    path = tmp_path / "offsetlake.toml"
    path.write_text(f'cluster_name = "test"\nwarehouse = "{tmp_path / "warehouse"}"\n', encoding="utf-8")
    return path


def _write(spark, config, spec, rows) -> None:  # type: ignore[no-untyped-def]
    from conf.settings import load_settings

    settings = load_settings(config)
    ensure_table(spark, settings, spec)
    frame(spark, spec, rows).write.format("delta").mode("append").save(str(table_path(settings, spec)))


def _owner(member: str) -> dict:
    return {"cluster_name": "test", "group": "billing", "topic": "orders", "partition": 0, "member_id": member,
            "generation": 4, "valid_from": at(0), "valid_to": None, "group_type": "classic",
            "assignment_kind": "current"}


@pytest.mark.spark
@pytest.mark.long  # ~13 s (GX and data docs on a session): make test-long (Makefile)
def test_check_exits_1_naming_the_failed_critical_expectation(spark, config, tmp_path, monkeypatch,
                                                              capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(pipelines.spark_session, "build_spark_session", lambda s: _KeepSession(spark))
    _write(spark, config, partition_assignments.TABLE, [_owner("a"), _owner("b")])
    docs, report_file = tmp_path / "docs", tmp_path / "report.json"
    assert main(["--config", str(config), "check", "--table", "gold.partition_assignments",
                 "--docs-dir", str(docs), "--json", str(report_file)]) == 1
    out = capsys.readouterr()
    results = {line.split()[1]: line.split()[2:4] for line in out.out.splitlines()[1:] if not line.startswith(" ")}
    assert results == {
        "no_partition_owned_by_two_members_in_one_generation": ["critical", "FAIL"],
        "assignments_end_after_they_start": ["critical", "PASS"],
        "assignments_belong_to_recorded_generations": ["critical", "SKIP"],  # no gold.group_generations yet
    }
    assert '"member_id": "a"' in out.out and '"other_member_id": "b"' in out.out
    assert "1 critical failing" in out.err
    assert (docs / "index.html").is_file() and f"data docs {docs / 'index.html'}" in out.err
    # The same verdict as JSON, for programs (the data_quality DAG): unexpected rows in full, not shortened.
    report = json.loads(report_file.read_text(encoding="utf-8"))
    assert report["ok"] is False
    assert report["critical_failing"] == ["partition_assignments.no_partition_owned_by_two_members_in_one_generation"]
    assert {r["expectation"]: (r["status"], r["fails_run"]) for r in report["results"]} == {
        "no_partition_owned_by_two_members_in_one_generation": ("failed", True),
        "assignments_end_after_they_start": ("passed", False),
        "assignments_belong_to_recorded_generations": ("skipped", False),
    }
    [failed] = [r for r in report["results"] if r["status"] == "failed"]
    assert {(row["member_id"], row["other_member_id"]) for row in failed["unexpected_sample"]} >= {("a", "b")}
    assert report["run_id"] in out.err and report["docs_index"] == str(docs / "index.html")


@pytest.mark.spark
def test_check_exits_0_when_only_a_warning_fails(spark, config, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(pipelines.spark_session, "build_spark_session", lambda s: _KeepSession(spark))
    _write(spark, config, committed_offsets.TABLE, [
        {"cluster_name": "test", "group": "billing", "topic": "orders", "partition": 0, "offset": -1,
         "source_topic": "__consumer_offsets", "source_partition": 0, "source_offset": 7}])
    assert main(["--config", str(config), "check", "--table", "committed_offsets", "--json", "-"]) == 0
    # --json -: the report on standard output instead of the table; the summary stays on standard error.
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert report["ok"] is True and report["critical_failing"] == []
    assert [(r["expectation"], r["severity"], r["status"]) for r in report["results"]] == [
        ("one_row_per_group_topic_partition", "critical", "passed"),
        ("committed_offsets_are_non_negative", "warning", "failed"),
    ]
    assert "0 critical failing" in out.err
    # No check of every suite recorded what it read on this warehouse: whole tables, said in the report and on stderr.
    assert report["read"] == "whole tables (no earlier check recorded what it read)"
    assert "check: read whole tables (no earlier check recorded what it read)" in out.err


def test_a_json_report_into_a_missing_folder_is_a_one_line_error_before_any_check(config, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--config", str(config), "check", "--json", str(tmp_path / "no" / "report.json")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"offsetlake: --json {tmp_path / 'no' / 'report.json'}: {tmp_path / 'no'} is not a writable directory"


def test_a_missing_warehouse_is_a_one_line_error(config, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--config", str(config), "check"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("offsetlake: warehouse ") and "does not exist or holds no offsetlake table" in err
    assert len(err.splitlines()) == 1


def test_an_unknown_table_is_a_one_line_error(config, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["--config", str(config), "check", "--table", "gold.nope"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("offsetlake: unknown table or suite gold.nope; expected one of ")
    assert len(err.splitlines()) == 1


def test_a_bad_quality_setting_is_a_config_error(config, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OFFSETLAKE_QUALITY__MAX_QUARANTINE_RATE", "2")
    assert main(["--config", str(config), "check"]) == 2
    assert capsys.readouterr().err.strip() == (
        "offsetlake: config error: setting quality.max_quarantine_rate = 2.0 (from env "
        "OFFSETLAKE_QUALITY__MAX_QUARANTINE_RATE) is invalid: expected a fraction from 0.0 to 1.0")


def test_a_severity_override_naming_no_expectation_is_a_one_line_error(config, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OFFSETLAKE_QUALITY__SEVERITY", "offset_commits.offsets_never_decrease=warning")
    assert main(["--config", str(config), "check"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(
        "offsetlake: quality.severity names unknown expectations offset_commits.offsets_never_decrease;")
    assert len(err.splitlines()) == 1
