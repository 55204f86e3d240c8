"""end_offsets_snapshot: every minute, each partition's log start, high watermark and last stable offset.

``offsetlake snapshot-end-offsets`` appends one snapshot to silver.partition_end_offsets; the lag
task of offsets_ingest turns snapshots into gold.consumer_lag. No retries: a missed minute is
replaced by the next one, and a late retry would only crowd it. ``max_active_runs=1`` so a slow
snapshot (a JVM start is 15-30 s) delays the next instead of piling up.
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
    START_DATE,
    common_params,
    current_params,
    default_args,
    run_offsetlake,
)

SCHEDULE = "* * * * *"


@dag(
    dag_id="end_offsets_snapshot",
    schedule=SCHEDULE,
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=timedelta(minutes=5),
    default_args=default_args(retries=0, execution_timeout=timedelta(minutes=4)),
    params={
        **common_params(),
        "topics": Param([], type="array", items={"type": "string"},
                        description="topics to snapshot (empty: every topic not starting with '__')"),
    },
    tags=["offsetlake"],
    doc_md=__doc__,
)
def end_offsets_snapshot() -> None:
    @task
    def snapshot() -> None:
        params = current_params()
        topics = list(params.get("topics") or [])
        run_offsetlake(params, "snapshot-end-offsets", *(["--topics", *topics] if topics else []))

    snapshot()


end_offsets_snapshot()
