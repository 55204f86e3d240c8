"""data_quality: after each ingest, the data-quality checkpoint over silver and gold.

Scheduled on the ``offsetlake_gold`` asset, which offsets_ingest's last task updates: it runs
once per successful ingest, right after it, and never while a failed ingest left gold stale.
(Asset scheduling rather than a clock: a clock would either race the ingest or check the same
data twice.) ``offsetlake check`` exits 0 when every critical expectation passed and 1 when one
failed; a failed critical expectation fails the task at once, without retries, since re-checking
the same data gives the same verdict, and the error names the failed expectations. Warnings
are only logged by the command. Each run reads what the ingest added since the previous check
(``quality/increment.py``: the new rows, the groups they touch), not the whole warehouse; the
first run, and one after a rebuild, reads whole tables.

The verdict is read from the report ``check --json`` writes (its ``critical_failing`` list), not
from the printed table: the table is for people (values shortened, columns split on spaces), the
JSON document is the command's interface for programs.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

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


def read_report(path: str) -> Mapping[str, Any] | None:
    """The JSON report ``offsetlake check --json`` wrote to ``path``; None when there is none (the check
    did not get to the end: bad settings, Spark or the warehouse failing)."""
    try:
        with open(path, encoding="utf-8") as report:
            return json.load(report)
    except (OSError, ValueError):
        return None


def check_arguments(tables: list[str]) -> list[str]:
    """``offsetlake check`` arguments restricting it to ``tables`` (all suites when empty)."""
    return [argument for table in tables for argument in ("--table", table)]


def check_verdict(code: int, output: list[str], report: Mapping[str, Any] | None) -> None:
    """Raise unless the check passed.

    A failed critical expectation (exit 1 and a report naming it in ``critical_failing``) or bad
    settings (exit 2) fail the task at once; exit 1 without a report means the check could not run
    (Spark, a missing warehouse), which a retry may fix. ``output`` gives the error's last line.
    """
    if code == 0:
        return
    failed = list(report.get("critical_failing") or []) if code == CHECK_FAILED and report else []
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
        with tempfile.TemporaryDirectory(prefix="offsetlake-check-") as folder:
            report_file = os.path.join(folder, "report.json")
            code, output = run_command(params, "check", "--json", report_file,
                                       *check_arguments(params.get("tables") or []))
            check_verdict(code, output, read_report(report_file))

    check()


data_quality()
