"""offsets_ingest: every 5 minutes, ``__consumer_offsets`` into bronze/silver, then gold and consumer lag.

One task, one ``offsetlake`` subprocess (see offsetlake_commands.py): ``offsetlake run --once``

1. drains the offsets topic up to its current end into bronze and silver, exactly once (a
   checkpoint per cluster and topic, Delta ``txnAppId``), so a retried or overlapping-in-time run
   never duplicates rows;
2. refreshes the gold tables from the silver rows added since the last refresh (idempotent: a
   re-run with nothing new writes nothing);
3. adds gold.consumer_lag rows for end-offset snapshots not yet in it (snapshots come from the
   end_offsets_snapshot DAG).

It was three tasks, one command each; each started a Spark JVM and paid its warm-up again (about
a minute of the task's two on a small worker). A retry re-runs all three steps, which is safe
since each is idempotent. The task updates the ``offsetlake_gold`` asset, which schedules the
data_quality DAG.

``max_active_runs=1``: two runs never ingest at once (the streaming checkpoint allows one writer);
a run that overruns its interval delays the next instead of overlapping it.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from airflow.sdk import Param, dag, task

# The shared module sits beside this file; Airflow puts only the DAG bundle's root on sys.path,
# which is not this folder when it is linked in as a subfolder.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from offsetlake_commands import (  # noqa: E402
    GOLD_ASSET,
    START_DATE,
    common_params,
    current_params,
    default_args,
    run_offsetlake,
)

SCHEDULE = "*/5 * * * *"


@dag(
    dag_id="offsets_ingest",
    schedule=SCHEDULE,
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=timedelta(minutes=45),
    default_args=default_args(execution_timeout=timedelta(minutes=20)),
    params={
        **common_params(),
        "topic": Param("__consumer_offsets", type="string", minLength=1,
                       description="topic to ingest (__consumer_offsets, or a topic holding records in its format)"),
    },
    tags=["offsetlake"],
    doc_md=__doc__,
)
def offsets_ingest() -> None:
    @task(outlets=[GOLD_ASSET])
    def run() -> None:
        params = current_params()
        run_offsetlake(params, "run", "--once", "--topic", params["topic"])

    run()


offsets_ingest()
