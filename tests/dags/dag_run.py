"""``dag.test()`` of one DAG in a Python process of its own, started by the background builds (tests/background.py).

Why: the offsets_ingest run (its task starts ``offsetlake run --once``, a Spark JVM, about 45 s) used to run
in pytest's process when the DAG tests came, last in the suite, with one core idle: the background builds
end about six minutes into a run and the tests after them mostly use one core (a timeline of the suite,
2026-11-27: the foreground alone from 345 s to the end at 565 s, the DAG tests from 484 s). Started by the
background thread once its warehouses are built, the run overlaps those tests instead. It has to be a
process of its own: Airflow's ``dag.test()`` in pytest's process, beside tests that run Kafka consumers,
once left a confluent-kafka consumer hung in ``close()`` waiting for the GIL (tests/conftest.py), which is
why the in-process runs come last. A process is also what an Airflow worker is.

Run as ``python -m tests.dags.dag_run DAG_ID RUN_CONF_JSON`` with the tests' Airflow environment
(tests/dags/conftest.py sets it when the DAG tests are collected); prints one line, ``RESULT_PREFIX`` and the
run's state, each task's state and try number, and what ``offsetlake_commands`` logged (the command and its
output), as JSON.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULT_PREFIX = "dag-run-result: "


@dataclass(frozen=True)
class DagRunResult:
    state: str
    tasks: dict[str, tuple[str, int]]  # task id -> (state, try number)
    log: list[str]  # offsetlake_commands' messages: the command line, its output, a failure report


def run_in_subprocess(dag_id: str, run_conf: dict[str, Any], timeout: float = 900) -> DagRunResult:
    """Migrate the tests' Airflow database (idempotent), then run ``dag_id`` with ``run_conf`` in a new process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if "AIRFLOW_HOME" not in env:
        raise RuntimeError("no AIRFLOW_HOME: tests/dags/conftest.py sets it when the DAG tests are collected")
    migrate = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], capture_output=True, text=True,
                             env=env, timeout=300)
    if migrate.returncode != 0:
        raise RuntimeError(f"airflow db migrate exited {migrate.returncode}: {migrate.stderr[-2000:]}")
    done = subprocess.run([sys.executable, "-m", "tests.dags.dag_run", dag_id, json.dumps(run_conf)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)
    results = [line[len(RESULT_PREFIX):] for line in done.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if done.returncode != 0 or len(results) != 1:
        raise RuntimeError(f"dag.test() of {dag_id} in a subprocess exited {done.returncode}:\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    result = json.loads(results[0])
    return DagRunResult(state=result["state"], log=result["log"],
                        tasks={task: (state, tries) for task, (state, tries) in result["tasks"].items()})


#: The venv's ``offsetlake``, the executable a DAG task runs (the DAGs' ``offsetlake_bin`` param).
OFFSETLAKE = Path(sys.executable).parent / "offsetlake"


def write_config(path: Path, warehouse: Path, bootstrap_servers: str, starting_offsets: str = "earliest",
                 cluster_name: str = "test") -> Path:
    """A settings file for the CLI subprocesses: the given broker and warehouse, a small Spark."""
    from tests.spark_conf import as_toml

    path.write_text(
        f'cluster_name = "{cluster_name}"\nwarehouse = "{warehouse}"\n'
        '[spark]\nmaster = "local[2]"\nshuffle_partitions = 1\ndriver_memory = "768m"\nlog_level = "ERROR"\n'
        + as_toml()  # tests/spark_conf.py
        + f"[kafka]\nbootstrap_servers = \"{bootstrap_servers}\"\nstarting_offsets = '{starting_offsets}'\n",
        encoding="utf-8")
    return path


def run_offsets_ingest(traffic: dict[str, Any], root: Path) -> dict[str, Any]:
    """The groups of tests/dags/dag_traffic.py (``traffic``), then one ``dag.test()`` of offsets_ingest on them.

    Its task runs the real CLI (``offsetlake run --once``) against the background builds' broker and the
    traffic's warehouse, named in a new settings file, the way a worker would.
    """
    settings = traffic["settings"]
    root.mkdir(parents=True, exist_ok=True)
    config = write_config(root / "offsetlake.toml", settings.warehouse_path, settings.kafka.bootstrap_servers,
                          settings.kafka.starting_offsets, settings.cluster_name)
    run_conf = {"offsetlake_bin": str(OFFSETLAKE), "config": str(config)}
    return {**traffic, "run_conf": run_conf, "result": run_in_subprocess("offsets_ingest", run_conf)}


def main(argv: list[str]) -> int:
    dag_id, run_conf = argv[1], json.loads(argv[2])
    from airflow.dag_processing.dagbag import DagBag

    lines: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("offsetlake_commands")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    dag = DagBag(dag_folder=os.environ["AIRFLOW__CORE__DAGS_FOLDER"]).dags[dag_id]
    run = dag.test(run_conf=run_conf)
    tasks = {ti.task_id: (_name(ti.state), ti.try_number) for ti in run.get_task_instances()}
    print(RESULT_PREFIX + json.dumps({"state": _name(run.state), "tasks": tasks, "log": lines}), flush=True)
    return 0


def _name(state: Any) -> str:
    """A DagRunState/TaskInstanceState (str enums) or None as its plain value."""
    return str(getattr(state, "value", state))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
