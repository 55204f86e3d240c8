"""Airflow for the DAG tests: a temporary AIRFLOW_HOME with a migrated SQLite database, and one real run.

Airflow reads its configuration when ``airflow`` is first imported, so the environment is set
here, at import time, before any test module of this folder imports a DAG. ``dag.test()`` needs
the migrated database (task_instance and friends); parsing the DAGs does not.

``ingested`` is the offsets_ingest DAG's run, end to end, with ``dag.test()``: its task starts
the real ``offsetlake`` CLI (``.venv/bin/offsetlake run --once``) as a subprocess against the broker
of the background builds (tests/dags/dag_traffic.py) and a temporary warehouse named in a temporary
settings file, the way a worker would. The background builds run it, in a process of its own, before
the DAG tests come (tests/dags/dag_run.py says why).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.dags.dag_run import OFFSETLAKE, write_config

ROOT = Path(__file__).resolve().parents[2]
DAGS = ROOT / "dags"
AIRFLOW_HOME = Path(tempfile.mkdtemp(prefix="offsetlake-airflow-home-"))
atexit.register(shutil.rmtree, AIRFLOW_HOME, True)

os.environ.update({
    "AIRFLOW_HOME": str(AIRFLOW_HOME),
    "AIRFLOW__CORE__LOAD_EXAMPLES": "False",  # DagBag(include_examples=) is gone in Airflow 3.3
    "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
    "AIRFLOW__CORE__UNIT_TEST_MODE": "True",
})
if str(DAGS) not in sys.path:
    sys.path.insert(0, str(DAGS))  # the shared module, importable as the DAG files import it



@pytest.fixture(scope="session", autouse=True)
def quiet_logging_at_exit():  # type: ignore[no-untyped-def]
    """Airflow's logging config points a handler at the stream pytest captured; py4j logs through it
    while the interpreter exits, after pytest closed that stream. Drop such errors instead of
    printing a "Logging error" traceback (the stdlib's switch for exactly this)."""
    yield
    logging.raiseExceptions = False


@pytest.fixture(scope="session")
def dag_bag():  # type: ignore[no-untyped-def]
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(DAGS))


@pytest.fixture(scope="session")
def run_conf_for(kafka_broker):  # type: ignore[no-untyped-def]
    """``run_conf_for(warehouse, config_path)``: DAG params for the venv's offsetlake and a new settings file
    (the session broker and cluster ``test`` unless ``settings`` names others)."""

    def make(warehouse: Path, config: Path, starting_offsets: str = "earliest",
             settings: Any = None) -> dict[str, str]:
        if settings is None:
            write_config(config, warehouse, kafka_broker.bootstrap_servers, starting_offsets)
        else:
            write_config(config, warehouse, settings.kafka.bootstrap_servers, starting_offsets, settings.cluster_name)
        return {"offsetlake_bin": str(OFFSETLAKE), "config": str(config)}

    return make


@pytest.fixture(scope="session")
def ingested(offsets_ingest_dag_run):  # type: ignore[no-untyped-def]
    """The real groups of tests/dags/dag_traffic.py and the offsets_ingest run over them (tests/dags/dag_run.py),
    made by the background builds; ``result`` is the run's DagRunResult. That run migrated the temporary
    AIRFLOW_HOME's database, which the DAG tests' own in-process runs use after it."""
    return offsets_ingest_dag_run
