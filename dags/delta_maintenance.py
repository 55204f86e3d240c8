"""delta_maintenance: daily OPTIMIZE and VACUUM of every Delta table of the warehouse.

``offsetlake maintain`` compacts each table's small files (the five-minute ingest and gold
refreshes write many) and deletes files that left a table more than
``maintenance.vacuum_retention_hours`` ago (from the settings file, default 168, Delta's minimum).
Gold is refreshed first, so it has read every silver file before compaction and vacuum can make
those files go away (pipelines/maintenance.py explains why that matters). A run that overlaps an
offsets_ingest run finds the cluster's writer lease held (pipelines/writer_lease.py): its gold task is refused
at start, exit status 1, and retried; ``maintain`` takes no lease, and may lose a Delta write conflict on a gold
table to a refresh, which the retry handles.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from airflow.sdk import dag, task

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

SCHEDULE = "30 3 * * *"


@dag(
    dag_id="delta_maintenance",
    schedule=SCHEDULE,
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=timedelta(hours=3),
    default_args=default_args(retries=2, retry_delay=timedelta(minutes=5),
                              execution_timeout=timedelta(hours=2)),
    params=common_params(),
    tags=["offsetlake"],
    doc_md=__doc__,
)
def delta_maintenance() -> None:
    @task
    def gold() -> None:
        run_offsetlake(current_params(), "gold")

    @task
    def maintain() -> None:
        run_offsetlake(current_params(), "maintain")

    gold() >> maintain()


delta_maintenance()
