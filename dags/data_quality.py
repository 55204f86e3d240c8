"""data_quality: after each ingest, the data-quality checkpoint over silver and gold.

Scheduled on the ``offsetlake_gold`` asset, which offsets_ingest's last task updates: it runs
once per successful ingest, right after it, and never while a failed ingest left gold stale.
(Asset scheduling rather than a clock: a clock would either race the ingest or check the same
data twice.) ``offsetlake check`` exits 0 when every critical expectation passed and 1 when one
failed; a failed critical expectation fails the task at once, without retries, since re-checking
the same data gives the same verdict, and the error names the failed expectations. Warnings
are only logged by the command.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from airflow.sdk import Param, dag, task
from airflow.sdk.exceptions import AirflowFailException

# The shared module sits beside this file; Airflow puts only the DAG bundle's root on sys.path,
# which is not this folder when it is linked in as a subfolder.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from offsetlake_commands import (  # noqa: E402
    GOLD_ASSET,
    START_DATE,
    OffsetlakeCommandFailed,
    common_params,
    current_params,
    default_args,
    error_line,
    run_command,
)

# offsetlake check: 1 = a critical expectation failed (a verdict), 2 = bad settings.
CHECK_FAILED = 1
USAGE = 2


def failed_critical_expectations(output: list[str]) -> list[str]:
    """``suite.expectation`` of every critical FAIL/ERROR row of ``offsetlake check``'s result table.

    The table's rows are ``SUITE  EXPECTATION  SEVERITY  RESULT  OBSERVED`` (cli/check.py).
    """
    failed = []
    for line in output:
        cells = line.split()
        if len(cells) >= 4 and cells[2] == "critical" and cells[3] in ("FAIL", "ERROR"):
            failed.append(f"{cells[0]}.{cells[1]}")
    return failed


def check_arguments(tables: list[str]) -> list[str]:
    """``offsetlake check`` arguments restricting it to ``tables`` (all suites when empty)."""
    return [argument for table in tables for argument in ("--table", table)]


def check_verdict(code: int, output: list[str]) -> None:
    """Raise unless the check passed.

    A failed critical expectation (exit 1 with FAIL/ERROR rows) or bad settings (exit 2) fail the
    task at once; exit 1 without result rows means the check could not run (Spark, a missing
    warehouse), which a retry may fix.
    """
    if code == 0:
        return
    failed = failed_critical_expectations(output) if code == CHECK_FAILED else []
    if failed:
        raise AirflowFailException(f"offsetlake check exited {code}: critical expectations failed: "
                                   f"{', '.join(failed)} ({error_line(output)})")
    message = f"offsetlake check exited {code}: {error_line(output)}"
    if code == USAGE:
        raise AirflowFailException(message)
    raise OffsetlakeCommandFailed(message)


@dag(
    dag_id="data_quality",
    schedule=[GOLD_ASSET],
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=timedelta(minutes=30),
    default_args=default_args(retries=1, execution_timeout=timedelta(minutes=20)),
    params={
        **common_params(),
        "tables": Param([], type="array", items={"type": "string"},
                        description="only the suites checking these tables or suites, e.g. gold.consumer_lag or "
                                    "cross_table (offsetlake check --table); empty: every suite"),
    },
    tags=["offsetlake"],
    doc_md=__doc__,
)
def data_quality() -> None:
    @task
    def check() -> None:
        params = current_params()
        check_verdict(*run_command(params, "check", *check_arguments(params.get("tables") or [])))

    check()


data_quality()
