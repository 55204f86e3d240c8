"""How offsetlake's Airflow DAGs run offsetlake: one ``offsetlake`` CLI subprocess per task.

Why a subprocess and not Spark inside the task: each command starts its own Spark JVM, so the
memory of a big micro-batch, a JVM crash or a leaked SparkSession ends with the task instead of
living on in the Airflow worker, and the worker needs neither a JVM nor pyspark's memory. It is
also exactly what an operator runs by hand, with the same one-line errors.

Which executable and which settings file come from DAG params (set per run in the trigger form
or ``dag.test(run_conf=...)``) whose defaults are read from the worker's environment when the DAG
file is parsed: ``OFFSETLAKE_BIN`` (else ``offsetlake`` on ``PATH``) and ``OFFSETLAKE_CONFIG``
(else the CLI's own default, ``./offsetlake.toml``). Every other setting comes from that file and
``OFFSETLAKE_<SECTION>__<KEY>`` variables, which the subprocess inherits (conf/settings.py).

This module is not a DAG; DAG files import it by name because Airflow puts the DAGs folder on
``sys.path``.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from airflow.sdk import Asset, Param, get_current_context
from airflow.sdk.exceptions import AirflowException, AirflowFailException

log = logging.getLogger(__name__)

BIN_ENV = "OFFSETLAKE_BIN"
CONFIG_ENV = "OFFSETLAKE_CONFIG"
# The CLI's exit status for bad settings or usage (cli/main.py EXIT_USAGE): a retry cannot fix it.
EXIT_USAGE = 2
STOP_GRACE_SECONDS = 60

START_DATE = datetime(2026, 1, 1, tzinfo=UTC)
"""A fixed past start: with ``catchup=False`` only the latest interval runs."""

GOLD_ASSET = Asset(name="offsetlake_gold", uri="offsetlake://warehouse/gold")
"""Updated by offsets_ingest's last task; data_quality is scheduled on it."""


class OffsetlakeCommandFailed(AirflowException):
    """An offsetlake command exited non-zero; the message carries its one-line error."""


def common_params() -> dict[str, Param]:
    """The params every offsetlake DAG takes, with defaults from the environment at parse time."""
    return {
        "offsetlake_bin": Param(
            os.environ.get(BIN_ENV) or "offsetlake", type="string", minLength=1,
            description=f"offsetlake executable: a path, or a name looked up on PATH (default: ${BIN_ENV} "
                        "or 'offsetlake')"),
        "config": Param(
            os.environ.get(CONFIG_ENV, ""), type="string",
            description=f"offsetlake TOML settings file passed as --config (default: ${CONFIG_ENV}; empty: "
                        "the CLI's default ./offsetlake.toml and OFFSETLAKE_* variables)"),
    }


def default_args(**overrides: Any) -> dict[str, Any]:
    """Task defaults shared by the DAGs: retries with a delay, and the failure report."""
    return {
        "owner": "offsetlake",
        "retries": 2,
        "retry_delay": timedelta(minutes=1),
        "on_failure_callback": report_failure,
        **overrides,
    }


def command_line(params: Mapping[str, Any], args: Sequence[str]) -> list[str]:
    """``[executable, (--config FILE), *args]`` for the run's params; refuses what cannot work.

    A missing executable or settings file fails the task at once (AirflowFailException: no
    retries), since waiting will not make it appear.
    """
    name = str(params.get("offsetlake_bin") or "offsetlake")
    executable = shutil.which(name)
    if executable is None:
        raise AirflowFailException(
            f"offsetlake executable {name!r} not found (not an executable file, nor on PATH); set the DAG param "
            f"offsetlake_bin or ${BIN_ENV} to the offsetlake installed in the worker's environment")
    line = [executable]
    config = str(params.get("config") or "")
    if config:
        if not Path(config).is_file():
            raise AirflowFailException(
                f"offsetlake settings file {config!r} does not exist; set the DAG param config or ${CONFIG_ENV}")
        line += ["--config", config]
    return [*line, *args]


def error_line(output_lines: Sequence[str]) -> str:
    """The command's one-line error: its last ``offsetlake: ...`` line, else its last non-empty line."""
    lines = [line.strip() for line in output_lines if line.strip()]
    for line in reversed(lines):
        if line.startswith("offsetlake:"):
            return line
    return lines[-1] if lines else "no output"


def run_command(params: Mapping[str, Any], *args: str, env: Mapping[str, str] | None = None
                ) -> tuple[int, list[str]]:
    """Run ``offsetlake [--config FILE] ARGS...``, log its output line by line; return (exit code, lines)."""
    line = command_line(params, args)
    log.info("running %s", " ".join(line))
    process_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    output: list[str] = []
    # stderr goes into the same stream so progress and errors are logged in the order they happened.
    with subprocess.Popen(line, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=process_env,
                          bufsize=1) as process:
        assert process.stdout is not None
        try:
            for text in process.stdout:
                text = text.rstrip("\n")
                output.append(text)
                log.info("%s", text)
            return process.wait(), output
        except BaseException:
            # The task is being stopped (execution_timeout, marked failed, worker shutdown): stop the
            # command as Ctrl-C would (the ingest finishes its batch), then for good after a minute.
            process.terminate()
            try:
                process.wait(timeout=STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
            raise


def run_offsetlake(params: Mapping[str, Any], *args: str, final_exit_codes: Sequence[int] = (EXIT_USAGE,),
                   env: Mapping[str, str] | None = None) -> list[str]:
    """Run an offsetlake command (see run_command) and return its output lines; raise if it failed.

    A non-zero exit raises OffsetlakeCommandFailed (retried per the task's ``retries``) with the
    command's one-line error; exit codes in ``final_exit_codes`` raise AirflowFailException
    instead, failing the task without retries (bad settings, or a verdict such as reference
    differences, which a retry would only repeat).
    """
    code, output = run_command(params, *args, env=env)
    if code != 0:
        message = f"offsetlake {' '.join(args)} exited {code}: {error_line(output)}"
        if code in final_exit_codes:
            raise AirflowFailException(message)
        raise OffsetlakeCommandFailed(message)
    return output


def current_params() -> dict[str, Any]:
    """The running task's DAG params (defaults merged with the run's conf)."""
    return dict(get_current_context()["params"])


def failure_message(context: Mapping[str, Any]) -> str:
    """One line saying which offsetlake task failed, in which run, after how many tries, and why."""
    ti = context.get("task_instance") or context.get("ti")
    dag_id = getattr(ti, "dag_id", None) or getattr(context.get("dag"), "dag_id", "?")
    task_id = getattr(ti, "task_id", "?")
    run_id = getattr(ti, "run_id", None) or getattr(context.get("dag_run"), "run_id", "?")
    try_number = getattr(ti, "try_number", None)
    max_tries = getattr(ti, "max_tries", None)
    tries = f", try {try_number} of {max_tries + 1}" if isinstance(try_number, int) and isinstance(
        max_tries, int) else ""
    exception = context.get("exception")
    reason = str(exception).strip().splitlines()[0] if exception is not None and str(exception).strip() else (
        type(exception).__name__ if exception is not None else "no exception recorded")
    final = ", not retried" if isinstance(exception, AirflowFailException) else ""
    return f"offsetlake DAG {dag_id}: task {task_id} failed (run {run_id}{tries}{final}): {reason}"


def report_failure(context: Mapping[str, Any]) -> None:
    """``on_failure_callback``: log the failure as one clear ERROR line (alerting hooks can be added here)."""
    log.error("%s", failure_message(context))
