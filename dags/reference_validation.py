"""reference_validation: daily, the reference coordinator's scenario suite through the whole pipeline.

``offsetlake validate SCENARIO...`` with every scenario of the scenarios directory: it simulates
each scenario with the reference group coordinator, produces the records to a new topic on the
configured cluster, ingests them, refreshes gold and compares gold with the expected timeline.
It writes into a *scratch* warehouse (``OFFSETLAKE_WAREHOUSE`` for the subprocess), never the
production one: the param ``scratch_warehouse``, or a fresh temporary directory that is deleted
when the suite passes and kept (its path logged) when it does not, for inspecting
gold.validation_diffs. Exit 1 (differences) fails the task without retries.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

from airflow.sdk import Param, dag, task
from airflow.sdk.exceptions import AirflowFailException

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

log = logging.getLogger(__name__)

SCHEDULE = "0 2 * * *"
SCENARIOS_ENV = "OFFSETLAKE_SCENARIOS_DIR"
SCRATCH_ENV = "OFFSETLAKE_VALIDATE_WAREHOUSE"
DIFFERENCES = 1  # offsetlake validate: gold differs from the reference
USAGE = 2


def installed_scenarios_dir() -> str:
    """``conf/scenarios`` of the offsetlake installed beside Airflow (its package data), or ''."""
    spec = importlib.util.find_spec("conf")
    for location in (spec.submodule_search_locations or []) if spec else []:
        if any((Path(location) / "scenarios").glob("*.yaml")):
            return str(Path(location) / "scenarios")
    return ""


def scenario_files(directory: str) -> list[str]:
    """Every ``*.yaml`` scenario of ``directory``, sorted; refuses an empty or missing directory."""
    if not directory:
        raise AirflowFailException(
            f"no scenarios directory: set the DAG param scenarios_dir or ${SCENARIOS_ENV} "
            "(offsetlake's conf/scenarios)")
    files = sorted(str(p) for p in Path(directory).glob("*.yaml"))
    if not files:
        raise AirflowFailException(f"no *.yaml scenarios in {directory}")
    return files


@dag(
    dag_id="reference_validation",
    schedule=SCHEDULE,
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    dagrun_timeout=timedelta(hours=2),
    default_args=default_args(retries=1, retry_delay=timedelta(minutes=10),
                              execution_timeout=timedelta(hours=1)),
    params={
        **common_params(),
        "scenarios_dir": Param(os.environ.get(SCENARIOS_ENV) or installed_scenarios_dir(), type="string",
                               description=f"directory of scenario YAML files (default: ${SCENARIOS_ENV} or the "
                                           "installed offsetlake's conf/scenarios)"),
        "scratch_warehouse": Param(os.environ.get(SCRATCH_ENV, ""), type="string",
                                   description=f"warehouse the suite writes to (default: ${SCRATCH_ENV}; empty: "
                                               "a fresh temporary directory per run)"),
        "topic_prefix": Param("offsetlake-validate", type="string", minLength=1,
                              description="prefix of the topic the scenarios' records are produced to"),
    },
    tags=["offsetlake"],
    doc_md=__doc__,
)
def reference_validation() -> None:
    @task
    def validate() -> None:
        params = current_params()
        scenarios = scenario_files(params["scenarios_dir"])
        scratch = params.get("scratch_warehouse") or ""
        temporary = not scratch
        if temporary:
            scratch = tempfile.mkdtemp(prefix="offsetlake-validate-")
        log.info("validating %d scenarios into the scratch warehouse %s", len(scenarios), scratch)
        try:
            run_offsetlake(params, "validate", *scenarios, "--topic-prefix", params["topic_prefix"],
                           final_exit_codes=(DIFFERENCES, USAGE), env={"OFFSETLAKE_WAREHOUSE": scratch})
        except Exception:
            if temporary:
                log.error("kept the scratch warehouse %s for inspection (gold.validation_diffs)", scratch)
            raise
        if temporary:
            shutil.rmtree(scratch, ignore_errors=True)

    validate()


reference_validation()
