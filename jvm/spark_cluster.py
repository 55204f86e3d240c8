"""A Spark standalone cluster (one master, N workers) on 127.0.0.1, from the Spark distribution pyspark ships.

The tests run the main job on a real multi-process Spark cluster: the master and
the workers are Spark's own daemons, started as Spark's ``sbin/start-*.sh`` would, through
``bin/spark-class`` of the pip-installed pyspark (``org.apache.spark.deploy.master.Master`` and
``...worker.Worker``). Each worker launches executor JVMs for the applications that ask; those run the
Python workers with the interpreter and ``PYTHONPATH`` the application sets (the cluster tests give them
an environment without offsetlake, which the driver then ships: pipelines/spark_session.py).

Everything lives in one directory: ``<data_dir>/master.log``, ``worker-<n>.log`` and the workers' work
directories (``worker-<n>/``, where each executor's stdout and stderr go). Ready means the master's
JSON status (its web UI, ``/json/``) lists every worker as ALIVE.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from broker.embedded import die_with_parent, free_port, stop_pid, tail


class SparkClusterError(RuntimeError):
    """The cluster could not be started; the message says why (and where its logs are)."""


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


@dataclass
class StandaloneCluster:
    """A master and ``workers`` workers of ``cores`` cores and ``memory`` each; ``master_url`` is spark://..."""

    data_dir: Path
    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    port: int = 0
    web_port: int = 0
    _processes: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> StandaloneCluster:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port, self.web_port = self.port or free_port(), self.web_port or free_port()
        try:
            self._launch("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                         "--port", str(self.port), "--webui-port", str(self.web_port))
            for n in range(self.workers):
                work = self.data_dir / f"worker-{n}"
                work.mkdir(exist_ok=True)
                self._launch(f"worker-{n}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                             "--cores", str(self.cores), "--memory", self.memory, "--webui-port", "0",
                             "--work-dir", str(work), self.master_url)
            self._wait_until_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 20.0) -> None:
        for _, process in reversed(self._processes):
            with contextlib.suppress(Exception):
                stop_pid(process.pid, timeout, process)
        self._processes.clear()

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def alive_workers(self) -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/json/", timeout=5) as response:
            status = json.load(response)
        return sum(1 for worker in status.get("workers", []) if worker.get("state") == "ALIVE")

    def _launch(self, name: str, main: str, *args: str) -> None:
        home = spark_home()
        env = {**os.environ, "SPARK_HOME": str(home), "SPARK_NO_DAEMONIZE": "1",
               # The daemons' own heap; executors get spark.executor.memory from the application.
               "SPARK_DAEMON_MEMORY": "256m", "SPARK_LOG_DIR": str(self.data_dir)}
        with open(self.data_dir / f"{name}.log", "wb") as log:
            process = subprocess.Popen(die_with_parent([str(home / "bin" / "spark-class"), main, *args]), env=env,
                                       stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._processes.append((name, process))

    def _wait_until_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, process in self._processes:
                if process.poll() is not None:
                    raise SparkClusterError(f"Spark standalone: the {name} exited with {process.returncode}; "
                                            f"last lines of {self.data_dir / (name + '.log')}:\n"
                                            f"{tail(self.data_dir / (name + '.log'), 15)}")
            with contextlib.suppress(OSError, ValueError):
                if self.alive_workers() == self.workers:
                    return
            time.sleep(0.5)
        raise SparkClusterError(f"Spark standalone: {self.workers} workers not registered after {timeout:.0f} s; "
                                f"see {self.data_dir}")
