"""How a DAG task runs offsetlake: the command line, the one-line error, retryable vs final failures, the report.

A stand-in executable (a small script) plays the CLI here, so these run in milliseconds; the real
CLI is exercised by the dag.test() runs in test_offsets_ingest.py and test_data_quality.py, and here by
one task whose command stops before Spark (the environment the documentation tells DAG users to set).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from airflow.sdk.exceptions import AirflowFailException
from offsetlake_commands import (
    OffsetlakeCommandFailed,
    command_line,
    error_line,
    failure_message,
    report_failure,
    run_offsetlake,
)


@pytest.fixture
def fake_cli(tmp_path: Path) -> Path:
    """Prints its arguments; ``fail N`` prints progress, then a one-line error, and exits N."""
    script = tmp_path / "offsetlake"
    script.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        "args = sys.argv[1:]\n"
        "print('args:', ' '.join(args))\n"
        "print('warehouse:', os.environ.get('OFFSETLAKE_WAREHOUSE', '-'))\n"
        "if args and args[-2:-1] == ['fail']:\n"
        "    print('ingest: batch 0: 10 records', file=sys.stderr)\n"
        "    print('offsetlake: ingest failed: broker unreachable', file=sys.stderr)\n"
        "    print('a trailing line', file=sys.stderr)\n"
        "    sys.exit(int(args[-1]))\n",
        encoding="utf-8")
    script.chmod(0o755)
    return script


def test_the_command_line_puts_the_config_before_the_subcommand(fake_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "offsetlake.toml"
    config.write_text("", encoding="utf-8")
    assert command_line({"offsetlake_bin": str(fake_cli), "config": str(config)}, ["ingest", "--once"]) == [
        str(fake_cli), "--config", str(config), "ingest", "--once"]
    assert command_line({"offsetlake_bin": str(fake_cli), "config": ""}, ["gold"]) == [str(fake_cli), "gold"]


def test_a_name_is_looked_up_on_path(fake_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PATH", str(fake_cli.parent))
    assert command_line({"offsetlake_bin": "offsetlake", "config": ""}, ["gold"]) == [str(fake_cli), "gold"]


def test_a_missing_executable_or_config_fails_at_once_without_retries(fake_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AirflowFailException, match="offsetlake executable 'no-such-offsetlake' not found"):
        command_line({"offsetlake_bin": "no-such-offsetlake", "config": ""}, ["gold"])
    with pytest.raises(AirflowFailException, match="settings file '.*missing.toml' does not exist"):
        command_line({"offsetlake_bin": str(fake_cli), "config": str(tmp_path / "missing.toml")}, ["gold"])


def test_the_error_line_is_the_last_offsetlake_line() -> None:
    assert error_line(["progress", "offsetlake: first", "offsetlake: config error: x", "Traceback"]) == \
        "offsetlake: config error: x"
    assert error_line(["progress", "java.lang.OutOfMemoryError", ""]) == "java.lang.OutOfMemoryError"
    assert error_line([]) == "no output"


def test_success_returns_and_logs_the_output_with_extra_environment(fake_cli, caplog) -> None:  # type: ignore[no-untyped-def]
    with caplog.at_level(logging.INFO, logger="offsetlake_commands"):
        lines = run_offsetlake({"offsetlake_bin": str(fake_cli), "config": ""}, "validate", "a.yaml",
                               env={"OFFSETLAKE_WAREHOUSE": "/scratch"})
    assert lines == ["args: validate a.yaml", "warehouse: /scratch"]
    assert "args: validate a.yaml" in caplog.messages


def test_a_failure_carries_the_one_line_error_and_is_retryable(fake_cli) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(OffsetlakeCommandFailed) as failed:
        run_offsetlake({"offsetlake_bin": str(fake_cli), "config": ""}, "ingest", "fail", "1")
    assert str(failed.value) == "offsetlake ingest fail 1 exited 1: offsetlake: ingest failed: broker unreachable"
    assert not isinstance(failed.value, AirflowFailException)


def test_a_final_exit_code_fails_without_retries(fake_cli) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AirflowFailException, match="exited 2: offsetlake: ingest failed"):
        run_offsetlake({"offsetlake_bin": str(fake_cli), "config": ""}, "check", "fail", "2")
    with pytest.raises(AirflowFailException, match="exited 1"):
        run_offsetlake({"offsetlake_bin": str(fake_cli), "config": ""}, "check", "fail", "1",
                       final_exit_codes=(1, 2))


def test_the_failure_report_names_dag_task_run_tries_and_reason(caplog) -> None:  # type: ignore[no-untyped-def]
    ti = SimpleNamespace(dag_id="offsets_ingest", task_id="ingest", run_id="scheduled__2026-11-22T01:00:00",
                         try_number=3, max_tries=2)
    context = {"ti": ti, "exception": OffsetlakeCommandFailed("offsetlake ingest --once exited 1: offsetlake: boom")}
    assert failure_message(context) == (
        "offsetlake DAG offsets_ingest: task ingest failed (run scheduled__2026-11-22T01:00:00, try 3 of 3): "
        "offsetlake ingest --once exited 1: offsetlake: boom")
    final = {"ti": ti, "exception": AirflowFailException("offsetlake check exited 1: offsetlake: 2 failed")}
    assert ", not retried):" in failure_message(final)
    with caplog.at_level(logging.ERROR, logger="offsetlake_commands"):
        report_failure(context)
    assert caplog.records[-1].levelno == logging.ERROR
    assert caplog.records[-1].getMessage() == failure_message(context)
    assert failure_message({}) == "offsetlake DAG ?: task ? failed (run ?): no exception recorded"


def test_stopping_the_task_stops_the_command(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import signal
    import subprocess

    import offsetlake_commands

    script = tmp_path / "offsetlake"
    script.write_text(f"#!{sys.executable}\nimport time\nprint('started', flush=True)\ntime.sleep(120)\n",
                      encoding="utf-8")
    script.chmod(0o755)
    started: list[subprocess.Popen] = []

    class RecordedPopen(subprocess.Popen):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            started.append(self)

    def stop_on_first_line(message: str, *args: object) -> None:
        if args == ("started",):
            raise KeyboardInterrupt  # what the task sees when Airflow stops it

    monkeypatch.setattr(offsetlake_commands.subprocess, "Popen", RecordedPopen)
    monkeypatch.setattr(offsetlake_commands.log, "info", stop_on_first_line)
    with pytest.raises(KeyboardInterrupt):
        offsetlake_commands.run_command({"offsetlake_bin": str(script), "config": ""}, "ingest")
    assert started[0].returncode == -signal.SIGTERM


def test_a_task_runs_the_real_cli_with_the_variables_the_readme_tells_dag_users_to_set(
        dag_bag, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """docs/operations.md "Deploying" has the worker's environment set OFFSETLAKE_BIN, OFFSETLAKE_CONFIG,
    OFFSETLAKE_SCENARIOS_DIR and OFFSETLAKE_VALIDATE_WAREHOUSE; every task's command inherits them. data_quality's
    task on a warehouse with no table yet: its command reads its settings, then stops before Spark."""
    from offsetlake_commands import common_params

    from tests.dags.dag_run import OFFSETLAKE, ROOT

    warehouse = tmp_path / "warehouse"
    config = tmp_path / "offsetlake.toml"
    config.write_text(f'cluster_name = "test"\nwarehouse = "{warehouse}"\n', encoding="utf-8")
    for name in [n for n in os.environ if n.startswith("OFFSETLAKE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the CLI of this checkout
    monkeypatch.setenv("OFFSETLAKE_BIN", str(OFFSETLAKE))
    monkeypatch.setenv("OFFSETLAKE_CONFIG", str(config))
    monkeypatch.setenv("OFFSETLAKE_SCENARIOS_DIR", str(ROOT / "conf" / "scenarios"))
    monkeypatch.setenv("OFFSETLAKE_VALIDATE_WAREHOUSE", str(tmp_path / "scratch"))
    # The params' defaults as a worker parsing the DAG files now reads them, and the run's params as the task
    # gets them from its Airflow context.
    params = {name: param.value for name, param in common_params().items()} | {"tables": []}
    assert params["offsetlake_bin"] == str(OFFSETLAKE) and params["config"] == str(config)
    check = dag_bag.dags["data_quality"].get_task("check").python_callable
    monkeypatch.setitem(check.__globals__, "current_params", lambda: params)

    with pytest.raises(OffsetlakeCommandFailed) as failed:  # retryable: no table yet, not bad settings
        check()
    assert str(failed.value).startswith(f"offsetlake check exited 1: offsetlake: warehouse {warehouse} does not "
                                        "exist or holds no offsetlake table")
    assert "config error" not in str(failed.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["offsetlake.toml"]
